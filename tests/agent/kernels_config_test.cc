// Kernels mode's environment (STRATA_AGENT_MODE, STRATA_KERNEL_*).
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "agent/config.h"
#include "fake_env.h"

namespace {

using strata::agent::AgentMode;
using strata::agent::Config;
using strata::agent::parse_config;

using strata::agent::test_env::fake_env;
using strata::agent::test_env::g_env;

TEST(AgentKernelsConfig, DefaultsAreTraceModeAndEverything) {
  g_env = {{"STRATA_RUN_DIR", "/r"}};
  Config c = parse_config(fake_env);
  EXPECT_EQ(c.mode, AgentMode::kTrace);
  EXPECT_STREQ(c.kernel_name, "");
  EXPECT_EQ(c.kernel_skip, 0u);
  EXPECT_EQ(c.kernel_count, Config::kAllLaunches);
  EXPECT_EQ(c.kernel_sections, strata::agent::kSectionAll);
  EXPECT_EQ(c.simulated_failure, strata::agent::SimulatedFailure::kNone);
  EXPECT_TRUE(c.smem_config_probe);
  EXPECT_TRUE(c.kernel_cache_flush);
  EXPECT_FALSE(c.debug);
  EXPECT_STREQ(c.warning, "");
  g_env["STRATA_AGENT_KERNELS_SMEM_PROBE"] = "0";
  EXPECT_FALSE(parse_config(fake_env).smem_config_probe);
}

TEST(AgentKernelsConfig, ReadsEveryVariable) {
  g_env = {{"STRATA_RUN_DIR", "/r"},
           {"STRATA_AGENT_MODE", "kernels"},
           {"STRATA_KERNEL_NAME", "regex:matmul_.*"},
           {"STRATA_KERNEL_SKIP", "3"},
           {"STRATA_KERNEL_COUNT", "12345678901"},
           {"STRATA_KERNEL_SECTIONS", "sol,occupancy"},
           {"STRATA_AGENT_KERNELS_FAIL", "privileges"},
           {"STRATA_AGENT_DEBUG", "1"}};
  Config c = parse_config(fake_env);
  EXPECT_EQ(c.mode, AgentMode::kKernels);
  EXPECT_STREQ(c.kernel_name, "regex:matmul_.*");
  EXPECT_EQ(c.kernel_skip, 3u);
  EXPECT_EQ(c.kernel_count, 12345678901ull);
  EXPECT_EQ(c.kernel_sections, strata::agent::kSectionSol | strata::agent::kSectionOccupancy);
  EXPECT_EQ(c.simulated_failure, strata::agent::SimulatedFailure::kPrivileges);
  EXPECT_TRUE(c.debug);
  EXPECT_STREQ(c.warning, "");
  g_env["STRATA_KERNEL_COUNT"] = "0";
  EXPECT_EQ(parse_config(fake_env).kernel_count, 0u);
  g_env["STRATA_KERNEL_CACHE_CONTROL"] = "none";
  EXPECT_FALSE(parse_config(fake_env).kernel_cache_flush);
  g_env["STRATA_KERNEL_CACHE_CONTROL"] = "all";
  c = parse_config(fake_env);
  EXPECT_TRUE(c.kernel_cache_flush);
  EXPECT_STREQ(c.warning, "");
}

TEST(AgentKernelsConfig, BadValuesKeepDefaultsAndSaySo) {
  g_env = {{"STRATA_AGENT_MODE", "kernels"}, {"STRATA_KERNEL_SKIP", "-1"}};
  Config c = parse_config(fake_env);
  EXPECT_EQ(c.kernel_skip, 0u);
  EXPECT_NE(std::string(c.warning).find("STRATA_KERNEL_SKIP"), std::string::npos) << c.warning;

  g_env = {{"STRATA_KERNEL_COUNT", "ten"}};
  c = parse_config(fake_env);
  EXPECT_EQ(c.kernel_count, Config::kAllLaunches);
  EXPECT_NE(std::string(c.warning).find("STRATA_KERNEL_COUNT"), std::string::npos);

  g_env = {{"STRATA_KERNEL_COUNT", "99999999999999999999999"}};  // past uint64
  EXPECT_EQ(parse_config(fake_env).kernel_count, Config::kAllLaunches);

  g_env = {{"STRATA_KERNEL_SECTIONS", "sol,memory"}};
  c = parse_config(fake_env);
  EXPECT_EQ(c.kernel_sections, strata::agent::kSectionAll);
  EXPECT_NE(std::string(c.warning).find("STRATA_KERNEL_SECTIONS"), std::string::npos);

  g_env = {{"STRATA_KERNEL_METRICS", "sm__inst_executed_pipe_adu.avg,lts__t_tag_requests.sum"}};
  c = parse_config(fake_env);
  EXPECT_STREQ(c.warning, "");
  ASSERT_EQ(c.kernel_metric_count, 2u);
  EXPECT_STREQ(c.kernel_metrics, "sm__inst_executed_pipe_adu.avg");
  EXPECT_STREQ(c.kernel_metrics + std::strlen(c.kernel_metrics) + 1, "lts__t_tag_requests.sum");
  // A bad name, an empty one, or more than 16: none collected, one warning.
  std::string seventeen;
  for (int i = 0; i < 17; ++i) seventeen += (i ? ",m__" : "m__") + std::to_string(i);
  for (const std::string& bad : {std::string("sm__cycles_active.avg,rm -rf"),
                                 std::string("sm__cycles_active.avg,"), seventeen}) {
    g_env = {{"STRATA_KERNEL_METRICS", bad}};
    c = parse_config(fake_env);
    EXPECT_EQ(c.kernel_metric_count, 0u) << bad;
    EXPECT_NE(std::string(c.warning).find("STRATA_KERNEL_METRICS"), std::string::npos) << bad;
  }

  g_env = {{"STRATA_KERNEL_CACHE_CONTROL", "some"}};
  c = parse_config(fake_env);
  EXPECT_TRUE(c.kernel_cache_flush);
  EXPECT_NE(std::string(c.warning).find("STRATA_KERNEL_CACHE_CONTROL"), std::string::npos);

  g_env = {{"STRATA_AGENT_MODE", "profile"}};
  c = parse_config(fake_env);
  EXPECT_EQ(c.mode, AgentMode::kTrace);
  EXPECT_NE(std::string(c.warning).find("STRATA_AGENT_MODE"), std::string::npos);

  g_env = {{"STRATA_AGENT_KERNELS_FAIL", "unsupported-device"}};
  c = parse_config(fake_env);
  EXPECT_EQ(c.simulated_failure, strata::agent::SimulatedFailure::kUnsupportedDevice);
  EXPECT_STREQ(c.warning, "");

  g_env = {{"STRATA_AGENT_KERNELS_FAIL", "disk"}};
  c = parse_config(fake_env);
  EXPECT_EQ(c.simulated_failure, strata::agent::SimulatedFailure::kNone);
  EXPECT_NE(std::string(c.warning).find("STRATA_AGENT_KERNELS_FAIL"), std::string::npos);

  // A name too long to keep matches nothing rather than everything.
  g_env = {{"STRATA_KERNEL_NAME", std::string(2000, 'k')}};
  c = parse_config(fake_env);
  EXPECT_STREQ(c.kernel_name, "regex:$^");
  EXPECT_NE(std::string(c.warning).find("STRATA_KERNEL_NAME"), std::string::npos);
}

}  // namespace
