// Device properties of known GPUs, for the occupancy model's what-if
// questions when no device (or no recorded device) is at hand. Looked up by
// architecture (`sm_90`) or product (`h200`, `a100`, `rtx4090`), ignoring
// case, spaces, '-' and '_'. The recorded properties of a real device, when a
// trace has them, take precedence over this table.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analysis/occupancy.h"
#include "common/result.h"

namespace strata::analysis {

struct GpuSpec {
  std::string key;  // the canonical lookup name: "h200", "sm_90"
  DeviceProps props;
};

// Every entry, architectures first (sm_70 … sm_100), then products.
const std::vector<GpuSpec>& known_gpus();

// The entry for `name`; an error listing the known names otherwise.
Result<DeviceProps> find_gpu(std::string_view name);

// "sm_70, v100, sm_75, t4, ..." for messages and --help.
std::string known_gpu_names();

}  // namespace strata::analysis
