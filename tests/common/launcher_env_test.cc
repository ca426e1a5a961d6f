#include "common/launcher_env.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace strata {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(LauncherEnv, NoneSet) {
  auto e = detect_launcher_env(env_of({{"HOME", "/x"}}));
  EXPECT_EQ(e.launcher, "");
  EXPECT_FALSE(e.rank);
  EXPECT_FALSE(e.world_size);
  EXPECT_TRUE(e.variables.empty());
  EXPECT_TRUE(e.problems.empty());
}

TEST(LauncherEnv, Torchrun) {
  auto e = detect_launcher_env(env_of({{"RANK", "3"},
                                       {"LOCAL_RANK", "1"},
                                       {"WORLD_SIZE", "4"},
                                       {"LOCAL_WORLD_SIZE", "2"},
                                       {"TORCHELASTIC_RUN_ID", "job9"},
                                       {"CUDA_VISIBLE_DEVICES", "2,3"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.rank, 3);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_EQ(e.local_world_size, 2);
  EXPECT_EQ(e.job_id, "job9");
  ASSERT_EQ(e.variables.size(), 6u);
  EXPECT_EQ(e.variables[0], (std::pair<std::string, std::string>{"RANK", "3"}));
  EXPECT_EQ(e.variables.back(),
            (std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", "2,3"}));
}

TEST(LauncherEnv, OpenMpi) {
  auto e = detect_launcher_env(env_of({{"OMPI_COMM_WORLD_RANK", "5"},
                                       {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                                       {"OMPI_COMM_WORLD_SIZE", "8"},
                                       {"OMPI_COMM_WORLD_LOCAL_SIZE", "4"},
                                       {"PMIX_RANK", "5"}}));
  EXPECT_EQ(e.launcher, "openmpi");
  EXPECT_EQ(e.rank, 5);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.world_size, 8);
  EXPECT_EQ(e.local_world_size, 4);
}

TEST(LauncherEnv, SlurmWithStep) {
  auto e = detect_launcher_env(env_of({{"SLURM_PROCID", "2"},
                                       {"SLURM_LOCALID", "0"},
                                       {"SLURM_NTASKS", "4"},
                                       {"SLURM_JOB_ID", "123"},
                                       {"SLURM_STEP_ID", "0"}}));
  EXPECT_EQ(e.launcher, "slurm");
  EXPECT_EQ(e.rank, 2);
  EXPECT_EQ(e.local_rank, 0);
  EXPECT_EQ(e.world_size, 4);
  EXPECT_FALSE(e.local_world_size);
  EXPECT_EQ(e.job_id, "123.0");
}

TEST(LauncherEnv, SlurmNprocsFallback) {
  auto e = detect_launcher_env(env_of({{"SLURM_PROCID", "1"}, {"SLURM_NPROCS", "2"}}));
  EXPECT_EQ(e.world_size, 2);
}

TEST(LauncherEnv, Pmi) {
  auto e = detect_launcher_env(env_of(
      {{"PMI_RANK", "1"}, {"PMI_SIZE", "2"}, {"MPI_LOCALRANKID", "1"}, {"MPI_LOCALNRANKS", "2"}}));
  EXPECT_EQ(e.launcher, "pmi");
  EXPECT_EQ(e.rank, 1);
  EXPECT_EQ(e.world_size, 2);
  EXPECT_EQ(e.local_rank, 1);
  EXPECT_EQ(e.local_world_size, 2);
}

TEST(LauncherEnv, TorchrunUnderSrunTakesTorchrunsRank) {
  auto e = detect_launcher_env(env_of({{"SLURM_PROCID", "0"},
                                       {"SLURM_NTASKS", "2"},
                                       {"RANK", "7"},
                                       {"WORLD_SIZE", "16"},
                                       {"SLURM_JOB_ID", "55"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_EQ(e.rank, 7);
  EXPECT_EQ(e.world_size, 16);
  EXPECT_EQ(e.job_id, "55");
}

TEST(LauncherEnv, MpiUnderSlurmAllocationTakesMpisRank) {
  auto e = detect_launcher_env(env_of(
      {{"SLURM_PROCID", "0"}, {"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "4"}}));
  EXPECT_EQ(e.launcher, "openmpi");
  EXPECT_EQ(e.rank, 3);
}

TEST(LauncherEnv, MalformedValuesAreProblemsNotRanks) {
  auto e =
      detect_launcher_env(env_of({{"RANK", "one"}, {"WORLD_SIZE", "-2"}, {"LOCAL_RANK", "0"}}));
  EXPECT_EQ(e.launcher, "torchrun");
  EXPECT_FALSE(e.rank);
  EXPECT_FALSE(e.world_size);
  EXPECT_EQ(e.local_rank, 0);
  ASSERT_EQ(e.problems.size(), 2u);
  EXPECT_EQ(e.problems[0], "RANK='one' is not a non-negative integer");
  EXPECT_EQ(e.problems[1], "WORLD_SIZE='-2' is not a non-negative integer");
}

}  // namespace
}  // namespace strata
