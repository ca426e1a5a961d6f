// Which rank of a distributed job this process is, from the variables the
// launchers set: torchrun (and torch.distributed.launch, accelerate,
// deepspeed: RANK, LOCAL_RANK, WORLD_SIZE, LOCAL_WORLD_SIZE), Open MPI's
// mpirun (OMPI_COMM_WORLD_*), MPICH/Intel MPI's Hydra (PMI_RANK, PMI_SIZE,
// MPI_LOCALRANKID, MPI_LOCALNRANKS), PMIx launchers (PMIX_RANK) and Slurm's
// srun (SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS).
//
// When several are set the most specific wins, in that order: torchrun run
// from an srun task sees SLURM_PROCID of the node's task but RANK of its own
// process, and mpirun inside a Slurm allocation inherits the batch step's
// SLURM_* variables. Pure: the environment comes in as a lookup.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/output_name.h"

namespace strata {

struct LauncherEnv {
  // "torchrun", "openmpi", "pmi", "pmix", "slurm"; empty when none is set.
  std::string launcher;
  std::optional<int64_t> rank;
  std::optional<int64_t> local_rank;
  std::optional<int64_t> world_size;
  std::optional<int64_t> local_world_size;
  // The job (TORCHELASTIC_RUN_ID, SLURM_JOB_ID[.SLURM_STEP_ID]); empty when unknown.
  std::string job_id;
  // The variables read that were set, NAME and value, in a fixed order; also
  // CUDA_VISIBLE_DEVICES, which says which physical GPU device 0 is.
  std::vector<std::pair<std::string, std::string>> variables;
  // Set variables whose value is not a non-negative integer ("RANK='x' is
  // not a rank"); their field stays empty.
  std::vector<std::string> problems;
};

LauncherEnv detect_launcher_env(const EnvLookup& env);

}  // namespace strata
