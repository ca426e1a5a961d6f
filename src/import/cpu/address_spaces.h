// The address spaces of the processes a RawProfile sampled, as the
// symbolizer takes them: every MMAP record of a process (and of its
// ancestors, see address_spaces) turned into a symbolize::Mapping.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "sampler/sampler.h"
#include "symbolize/types.h"

namespace strata::import {

// The build id of a MMAP2 record as lowercase hex ("" when it carries none).
std::string hex_build_id(const sampler::Mapping& m);

// One AddressSpace per pid that has samples. A process forked by the target
// gets no MMAP records for what it inherited, so it starts from its parent's
// mappings (perf_event_open's inherit: Linux 6.x), its own records applied
// after them. Perf maps are not read here (see build_profile).
std::map<uint32_t, symbolize::AddressSpace> address_spaces(const sampler::RawProfile& raw);

}  // namespace strata::import
