// ProfileBuilder decides which program a process runs from its records'
// times, not from the order they are drained in: the rings are per CPU, so a
// process that moved between CPUs has its exec's COMM in one ring and its new
// libpython's MMAP in another, handed over in either order. (A browser test
// once read no Python frame at all in a whole run: the MMAP came first and the
// COMM drained after it threw the new interpreter's reader away.)
#include "sampler/profile_builder.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <string>

namespace strata::sampler {
namespace {

constexpr const char* kLibpython = "/usr/lib/libpython3.12.so.1.0";

// A builder whose runtime finder knows CPython 3.12 in any mapping of
// kLibpython, at an address nothing is mapped at (a read there fails).
class ProfileBuilderTest : public ::testing::Test {
 protected:
  ProfileBuilderTest() {
    options_.find_python_runtime = [](const Mapping& m) -> std::optional<PythonRuntime> {
      if (m.filename != kLibpython) return std::nullopt;
      PythonRuntime runtime;
      runtime.address = 0x10;
      runtime.major = 3;
      runtime.minor = 12;
      return runtime;
    };
  }

  void mmap_libpython(uint32_t pid, uint64_t time) {
    MmapRecord r;
    r.pid = r.tid = pid;
    r.addr = 0x7f0000000000;
    r.len = 0x400000;
    r.filename = kLibpython;
    r.where = SampleId{.pid = pid, .tid = pid, .time = time};
    builder_.on_mmap(r);
  }
  void exec(uint32_t pid, uint64_t time) {
    CommRecord r;
    r.pid = r.tid = pid;
    r.exec = true;
    r.comm = "python3.12";
    r.where = SampleId{.pid = pid, .tid = pid, .time = time};
    builder_.on_comm(r);
  }
  void fork(uint32_t child, uint32_t parent, uint64_t time) {
    TaskRecord r;
    r.fork = true;
    r.pid = r.tid = child;
    r.ppid = r.ptid = parent;
    r.time = time;
    r.where = SampleId{.pid = child, .tid = child, .time = time};
    builder_.on_task(r);
  }
  void sample(uint32_t pid, uint64_t time) {
    SampleRecord r;
    r.where = SampleId{.pid = pid, .tid = pid, .time = time};
    builder_.on_sample(r);
  }

  void lose_records() {
    LostRecord r;
    r.lost = 7;
    builder_.on_lost(r);
  }

  RawProfile profile_;
  SamplerOptions options_;
  ProfileBuilder builder_{profile_, options_};
};

TEST_F(ProfileBuilderTest, ExecDrainedAfterTheNewProgramsLibpythonKeepsItsReader) {
  mmap_libpython(100, 2'000);
  exec(100, 1'000);
  EXPECT_TRUE(builder_.reads_python_of(100));
}

TEST_F(ProfileBuilderTest, ExecAfterTheInterpreterWasMappedEndsItsReader) {
  mmap_libpython(100, 1'000);
  exec(100, 2'000);
  EXPECT_FALSE(builder_.reads_python_of(100));
  EXPECT_FALSE(builder_.reads_python());
}

TEST_F(ProfileBuilderTest, MappingOfTheProgramBeforeTheExecStartsNoReader) {
  exec(100, 2'000);
  mmap_libpython(100, 1'000);
  EXPECT_FALSE(builder_.reads_python_of(100));
  // The mapping is kept all the same: symbols of the old program's samples need it.
  ASSERT_EQ(profile_.mmaps[100].size(), 1u);
}

TEST_F(ProfileBuilderTest, ForkedChildReadsItsParentsInterpreterUntilItExecs) {
  mmap_libpython(100, 1'000);
  fork(101, 100, 2'000);
  EXPECT_TRUE(builder_.reads_python_of(101));
  exec(101, 3'000);
  EXPECT_FALSE(builder_.reads_python_of(101));
}

TEST_F(ProfileBuilderTest, ForkDrainedAfterTheChildsExecInheritsNothing) {
  mmap_libpython(100, 1'000);
  exec(101, 3'000);
  fork(101, 100, 2'000);
  EXPECT_FALSE(builder_.reads_python_of(101));
}

TEST_F(ProfileBuilderTest, ForkBeforeTheParentMappedPythonInheritsNothing) {
  mmap_libpython(100, 2'000);
  fork(101, 100, 1'000);
  EXPECT_FALSE(builder_.reads_python_of(101));
}

TEST_F(ProfileBuilderTest, SampleTakenBeforeTheInterpreterWasMappedIsNotRead) {
  const auto self = static_cast<uint32_t>(getpid());
  auto attempts = [&] {
    const auto& c = profile_.counters;
    return c.python_reads + c.python_no_thread + c.python_read_failures;
  };
  mmap_libpython(self, 2'000);
  sample(self, 1'000);
  EXPECT_EQ(attempts(), 0u);
  // One taken after it is read (and finds no thread state: the runtime's
  // address holds nothing).
  sample(self, 3'000);
  EXPECT_EQ(attempts(), 1u);
  ASSERT_EQ(profile_.samples.size(), 2u);
  EXPECT_FALSE(profile_.samples[0].python_read);
}

// A full ring drops MMAP records too: after a loss, a process that samples
// show and no reader covers is looked up in its maps, once per loss and no
// sooner than 50 ms (sample time) after its last look.
TEST_F(ProfileBuilderTest, AfterALossAProcessIsLookedUpInItsMaps) {
  std::vector<uint32_t> looked_up;
  options_.find_python_runtime_of_process = [&](uint32_t pid) -> std::optional<PythonRuntime> {
    looked_up.push_back(pid);
    if (pid != 100) return std::nullopt;
    PythonRuntime runtime;
    runtime.address = 0x10;
    runtime.major = 3;
    runtime.minor = 12;
    return runtime;
  };
  sample(100, 1'000);
  EXPECT_TRUE(looked_up.empty()) << "nothing was lost: the MMAP records say it all";
  lose_records();
  sample(100, 2'000);
  sample(200, 2'000);
  EXPECT_EQ(looked_up, (std::vector<uint32_t>{100, 200}));
  EXPECT_TRUE(builder_.reads_python_of(100));
  EXPECT_FALSE(builder_.reads_python_of(200));
  sample(200, 3'000);  // the same loss: not again
  lose_records();
  sample(200, 4'000);  // a new loss, but within 50 ms of the last look
  EXPECT_EQ(looked_up.size(), 2u);
  sample(200, 60'000'000);
  EXPECT_EQ(looked_up.size(), 3u);
}

}  // namespace
}  // namespace strata::sampler
