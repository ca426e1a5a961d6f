// The agent's environment parsing.
#include "agent/config.h"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "fake_env.h"

namespace {

using strata::agent::Config;
using strata::agent::parse_config;

using strata::agent::test_env::fake_env;
using strata::agent::test_env::g_env;

TEST(AgentConfig, DefaultsWithoutRunDir) {
  g_env = {};
  Config c = parse_config(fake_env);
  EXPECT_FALSE(c.has_run_dir);
  EXPECT_EQ(c.buffer_mb, 8u);
  EXPECT_EQ(c.buffer_count, 16u);
  EXPECT_EQ(c.flush_ms, 500u);
  EXPECT_FALSE(c.all_apis);
  EXPECT_STREQ(c.warning, "");
  char path[64];
  EXPECT_FALSE(strata::agent::spool_path(c, 12, path, sizeof(path)));
}

TEST(AgentConfig, ReadsValuesAndBuildsTheSpoolPath) {
  g_env = {{"STRATA_RUN_DIR", "/tmp/run"},
           {"STRATA_AGENT_BUFFER_MB", "4"},
           {"STRATA_AGENT_BUFFER_COUNT", "32"},
           {"STRATA_AGENT_FLUSH_MS", "100"},
           {"STRATA_AGENT_ALL_APIS", "1"}};
  Config c = parse_config(fake_env);
  EXPECT_TRUE(c.has_run_dir);
  EXPECT_EQ(c.buffer_mb, 4u);
  EXPECT_EQ(c.buffer_count, 32u);
  EXPECT_EQ(c.flush_ms, 100u);
  EXPECT_TRUE(c.all_apis);
  char path[64];
  ASSERT_TRUE(strata::agent::spool_path(c, 4242, path, sizeof(path)));
  EXPECT_STREQ(path, "/tmp/run/spool-4242.bin");
  char tiny[8];
  EXPECT_FALSE(strata::agent::spool_path(c, 4242, tiny, sizeof(tiny)));
}

TEST(AgentConfig, BadValuesKeepDefaultsAndSaySo) {
  g_env = {{"STRATA_RUN_DIR", "/r"},
           {"STRATA_AGENT_BUFFER_MB", "lots"},
           {"STRATA_AGENT_FLUSH_MS", "5000"},
           {"STRATA_AGENT_BUFFER_COUNT", "-3"}};
  Config c = parse_config(fake_env);
  EXPECT_EQ(c.buffer_mb, 8u);
  EXPECT_EQ(c.flush_ms, 500u);
  EXPECT_EQ(c.buffer_count, 16u);
  EXPECT_NE(std::strstr(c.warning, "STRATA_AGENT_BUFFER_MB=lots"), nullptr) << c.warning;
}

}  // namespace

TEST(AgentConfig, RecordGroupsAndClock) {
  using namespace strata::agent;
  g_env = {{"STRATA_AGENT_RECORD", "kernel,runtime"}, {"STRATA_AGENT_CLOCK", "cupti"}};
  Config c = parse_config(fake_env);
  EXPECT_EQ(c.record_groups, kRecordKernel | kRecordRuntime);
  EXPECT_TRUE(c.cupti_clock);
  EXPECT_STREQ(c.warning, "");

  g_env = {};
  c = parse_config(fake_env);
  EXPECT_EQ(c.record_groups, kRecordAll & ~kRecordSync) << "sync records are asked for by name";

  g_env = {{"STRATA_AGENT_RECORD", "kernel,runtime,driver,memory,sync,nvtx,meta"}};
  c = parse_config(fake_env);
  EXPECT_EQ(c.record_groups, kRecordAll);
  EXPECT_FALSE(c.cupti_clock);
}

TEST(AgentConfig, UnknownRecordGroupRecordsTheDefaultAndSaysSo) {
  using namespace strata::agent;
  g_env = {{"STRATA_AGENT_RECORD", "kernel,kernals"}, {"STRATA_AGENT_CLOCK", "tsc"}};
  Config c = parse_config(fake_env);
  EXPECT_EQ(c.record_groups, kRecordDefault);
  EXPECT_NE(std::string(c.warning).find("STRATA_AGENT_RECORD=kernel,kernals"), std::string::npos)
      << c.warning;
  EXPECT_FALSE(c.cupti_clock);
}
