#include "import/cpu/build_profile.h"

#include <gtest/gtest.h>
#include <limits.h>
#include <link.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "util/temp_dir.h"

// A function of this binary for the symbolizer to find by name.
extern "C" __attribute__((noinline)) int strata_import_cpu_test_leaf(int x) {
  return x * 3 + 1;
}

namespace strata::import {
namespace {

constexpr uint32_t kPid = 4242;
constexpr uint64_t kPythonStart = 0x7f0000001000;  // anonymous JIT memory of the perf map

// The executable mapping of this test binary, as a MMAP2 record gives it.
sampler::Mapping own_code_mapping() {
  struct Found {
    uint64_t target;
    sampler::Mapping mapping;
    bool ok = false;
  } found{reinterpret_cast<uint64_t>(&strata_import_cpu_test_leaf), {}, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* data) {
        auto* f = static_cast<Found*>(data);
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
          const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
          uint64_t start = (info->dlpi_addr + ph.p_vaddr) & ~(page - 1);
          uint64_t end = info->dlpi_addr + ph.p_vaddr + ph.p_memsz;
          if (f->target < start || f->target >= end) continue;
          f->mapping.addr = start;
          f->mapping.len = end - start;
          f->mapping.pgoff = ph.p_offset & ~(page - 1);
          f->mapping.prot = 0x5;  // r-x
          f->ok = true;
          return 1;
        }
        return 0;
      },
      &found);
  EXPECT_TRUE(found.ok);
  found.mapping.pid = kPid;
  found.mapping.tid = kPid;
  found.mapping.filename = std::filesystem::canonical("/proc/self/exe").string();
  return found.mapping;
}

sampler::Sample fp_sample(sampler::RawProfile& raw, uint32_t tid, uint64_t time,
                          std::vector<uint64_t> chain) {
  sampler::Sample s;
  s.ip = chain.front();
  s.time = time;
  s.period = 1'000'000;
  s.pid = kPid;
  s.tid = tid;
  s.callchain_offset = raw.callchains.size();
  s.callchain_size = static_cast<uint32_t>(chain.size());
  raw.callchains.insert(raw.callchains.end(), chain.begin(), chain.end());
  return s;
}

class BuildProfileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = tmp_.path().string();
    options_.perf_map_dir = dir_;

    std::ofstream(dir_ + "/app.py") << "import sys\n\ndef work():\n    pass\n";
    std::ofstream(perf_map_path())
        << std::hex << kPythonStart << " 100 py::work:" << dir_ << "/app.py\n";

    raw_.mode = sampler::StackMode::kFramePointer;
    raw_.frequency_hz = 1000;
    raw_.start_ns = 1'000;
    raw_.end_ns = 5'001'000;
    raw_.user_ns = 3'000'000;
    raw_.sys_ns = 500'000;
    raw_.counters.lost_samples = 7;
    raw_.counters.throttle_events = 2;
    sampler::Mapping jit;
    jit.pid = kPid;
    jit.addr = kPythonStart & ~0xfffull;
    jit.len = 0x10000;
    jit.prot = 0x5;
    jit.filename = "//anon";
    raw_.mmaps[kPid] = {own_code_mapping(), jit};
    raw_.comms = {{0, kPid, kPid, false, "python3"},
                  {10, kPid, kPid, true, "app"},  // exec renamed the main thread
                  {20, kPid, kPid + 1, false, "worker"}};
  }
  std::string perf_map_path() const { return dir_ + "/perf-" + std::to_string(kPid) + ".map"; }
  uint64_t leaf_pc() const { return reinterpret_cast<uint64_t>(&strata_import_cpu_test_leaf) + 1; }

  test_util::TempDir tmp_{"strata-import-cpu"};
  std::string dir_;
  sampler::RawProfile raw_;
  BuildOptions options_;
};

TEST_F(BuildProfileTest, RunFiguresComeFromTheRawProfile) {
  raw_.samples.push_back(fp_sample(raw_, kPid, 100, {leaf_pc()}));
  BuiltProfile built = build_profile(raw_, options_);
  const analysis::Profile& p = built.profile;
  EXPECT_EQ(p.mode, analysis::ProfileMode::kPerfEvent);
  EXPECT_EQ(p.rate_hz, 1000);
  EXPECT_EQ(p.wall_ns, 5'000'000);
  EXPECT_EQ(p.cpu_ns, 3'500'000);
  EXPECT_EQ(p.lost_samples, 7u);
  EXPECT_EQ(p.throttles, 2u);
  ASSERT_EQ(p.samples.size(), 1u);
  EXPECT_EQ(p.samples[0].time_ns, 100);
  EXPECT_EQ(p.samples[0].weight_ns, 1'000'000);
  EXPECT_EQ(p.samples[0].pid, static_cast<int32_t>(kPid));
}

TEST_F(BuildProfileTest, TheModeSaysWhichSamplerRan) {
  raw_.samples.push_back(fp_sample(raw_, kPid, 100, {leaf_pc()}));
  options_.mode = analysis::ProfileMode::kInProcess;
  EXPECT_EQ(build_profile(raw_, options_).profile.mode, analysis::ProfileMode::kInProcess);
}

TEST_F(BuildProfileTest, NativeFramesAreSymbolized) {
  raw_.samples.push_back(fp_sample(raw_, kPid, 100, {leaf_pc()}));
  BuiltProfile built = build_profile(raw_, options_);
  ASSERT_EQ(built.profile.samples.size(), 1u);
  ASSERT_FALSE(built.profile.samples[0].stack.empty());
  const analysis::Frame& leaf = built.profile.frames.at(built.profile.samples[0].stack[0]);
  EXPECT_EQ(leaf.function, "strata_import_cpu_test_leaf");
  EXPECT_EQ(leaf.module, raw_.mmaps[kPid][0].filename);
}

TEST_F(BuildProfileTest, PythonFramesAreNamedFromThePerfMapAndItIsRemoved) {
  // The leaf is native code called from the Python function `work`.
  raw_.samples.push_back(fp_sample(raw_, kPid, 100, {leaf_pc(), kPythonStart + 0x20}));
  BuiltProfile built = build_profile(raw_, options_);
  EXPECT_EQ(built.counters.python_maps_read, 1u);
  EXPECT_FALSE(std::filesystem::exists(perf_map_path()));
  ASSERT_EQ(built.profile.samples.size(), 1u);
  const auto& stack = built.profile.samples[0].stack;
  ASSERT_EQ(stack.size(), 2u);
  const analysis::Frame& python = built.profile.frames.at(stack[1]);
  EXPECT_EQ(python.function, "work");
  EXPECT_EQ(python.file, dir_ + "/app.py");
  EXPECT_EQ(python.line, 3);  // the line of `def work`
  EXPECT_EQ(python.module, "[perf-" + std::to_string(kPid) + ".map]");
}

TEST_F(BuildProfileTest, WithoutPerfMapsAddressesStayUnsymbolized) {
  options_.python_perf_maps = false;
  const uint64_t pc = kPythonStart + 0x20;
  const uint64_t outside = 0x10;  // outside every mapping
  raw_.samples.push_back(fp_sample(raw_, kPid, 100, {pc, outside}));
  BuiltProfile built = build_profile(raw_, options_);
  EXPECT_EQ(built.counters.python_maps_read, 0u);
  EXPECT_TRUE(std::filesystem::exists(perf_map_path()));
  ASSERT_EQ(built.profile.samples.size(), 1u);
  const auto& stack = built.profile.samples[0].stack;
  ASSERT_EQ(stack.size(), 2u);
  const analysis::Frame& jit = built.profile.frames.at(stack[0]);
  EXPECT_EQ(jit.function, "");
  EXPECT_EQ(jit.module, "//anon");
  EXPECT_NE(jit.module_offset, 0u);
  const analysis::Frame& unknown = built.profile.frames.at(stack[1]);
  EXPECT_EQ(unknown.function, "");
  EXPECT_EQ(unknown.module_offset, outside);
}

TEST_F(BuildProfileTest, EqualPcsShareFramesAndThreadsAreNamed) {
  raw_.samples.push_back(fp_sample(raw_, kPid, 100, {leaf_pc()}));
  raw_.samples.push_back(fp_sample(raw_, kPid + 1, 200, {leaf_pc()}));
  BuiltProfile built = build_profile(raw_, options_);
  const analysis::Profile& p = built.profile;
  ASSERT_EQ(p.samples.size(), 2u);
  EXPECT_EQ(p.samples[0].stack, p.samples[1].stack);
  ASSERT_EQ(p.threads.size(), 2u);
  EXPECT_EQ(p.threads[0].tid, static_cast<int32_t>(kPid));
  EXPECT_EQ(p.threads[0].name, "app");
  EXPECT_EQ(p.threads[1].tid, static_cast<int32_t>(kPid + 1));
  EXPECT_EQ(p.threads[1].name, "worker");
  ASSERT_EQ(p.processes.size(), 1u);
  EXPECT_EQ(p.processes[0].pid, static_cast<int32_t>(kPid));
  EXPECT_EQ(p.processes[0].command, "app");
}

TEST_F(BuildProfileTest, DwarfSamplesWithoutRegistersKeepTheirIp) {
  raw_.mode = sampler::StackMode::kDwarf;
  sampler::Sample s;
  s.ip = leaf_pc();
  s.pid = kPid;
  s.tid = kPid;
  raw_.samples.push_back(s);  // regs_abi 0: a sample without user registers
  BuiltProfile built = build_profile(raw_, options_);
  ASSERT_EQ(built.profile.samples.size(), 1u);
  ASSERT_EQ(built.profile.samples[0].stack.size(), 1u);
  EXPECT_EQ(built.profile.frames.at(built.profile.samples[0].stack[0]).function,
            "strata_import_cpu_test_leaf");
  EXPECT_EQ(built.counters.unwind_truncated + built.counters.unwind_incomplete, 0u);
}

}  // namespace
}  // namespace strata::import
