#include "common/launcher_env.h"

#include <array>

#include "common/strings.h"

namespace strata {
namespace {

struct Family {
  const char* launcher;
  const char* rank;  // the variable whose presence selects the family
  const char* local_rank;
  const char* world_size;
  const char* local_world_size;
};

// Most specific first (see the header). nullptr: the launcher sets no such variable.
constexpr std::array<Family, 5> kFamilies = {{
    {"torchrun", "RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE"},
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_COMM_WORLD_SIZE",
     "OMPI_COMM_WORLD_LOCAL_SIZE"},
    {"pmi", "PMI_RANK", "MPI_LOCALRANKID", "PMI_SIZE", "MPI_LOCALNRANKS"},
    {"pmix", "PMIX_RANK", nullptr, nullptr, nullptr},
    {"slurm", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_NTASKS", nullptr},
}};

}  // namespace

LauncherEnv detect_launcher_env(const EnvLookup& env) {
  LauncherEnv out;
  auto get = [&](const char* name) -> std::optional<std::string> {
    if (name == nullptr || !env) return std::nullopt;
    auto value = env(name);
    if (value) out.variables.emplace_back(name, *value);
    return value;
  };
  auto number = [&](const char* name, std::optional<int64_t>& field) {
    auto value = get(name);
    if (!value) return;
    auto parsed = parse_int(*value);
    if (!parsed || *parsed < 0) {
      out.problems.push_back(std::string(name) + "='" + printable(*value) +
                             "' is not a non-negative integer");
      return;
    }
    field = *parsed;
  };
  for (const auto& family : kFamilies) {
    if (!env || !env(family.rank)) continue;
    out.launcher = family.launcher;
    number(family.rank, out.rank);
    number(family.local_rank, out.local_rank);
    number(family.world_size, out.world_size);
    number(family.local_world_size, out.local_world_size);
    if (out.launcher == "slurm" && !out.world_size) number("SLURM_NPROCS", out.world_size);
    break;
  }
  if (auto run = get("TORCHELASTIC_RUN_ID")) {
    out.job_id = *run;
  } else if (auto job = get("SLURM_JOB_ID")) {
    out.job_id = *job;
    if (auto step = get("SLURM_STEP_ID")) out.job_id += "." + *step;
  }
  get("CUDA_VISIBLE_DEVICES");
  return out;
}

}  // namespace strata
