// The Python stack reader (sampler/python_stack.h) on hand-built memory
// images of CPython 3.8-3.13, line tables taken from real interpreters,
// and randomly mutated images: it reads untrusted bytes.
#include "sampler/python_stack.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace strata::sampler {
namespace {

std::vector<uint8_t> from_hex(const std::string& hex) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<uint8_t>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// The function every table below was taken from, with `def f(n):` on line 2:
//     total = 0                 # 3
//     for i in range(n):        # 4
//         if i % 3:             # 5
//             total += i * 2    # 6
//         else:
//             total -= 1        # 8
//     return total              # 9
// Tables: f.__code__.co_lnotab (3.8, 3.9) or co_linetable; expected lines:
// dis.findlinestarts (3.8, 3.9) or co_lines() (3.10, 3.11), byte offsets.
TEST(PythonLineTable, Python39LnotabGivesTheLineOfEachOffset) {
  auto table = from_hex("000104010c0108010e020a01");
  const std::vector<std::pair<int, int>> starts = {{0, 3},  {4, 4},  {16, 5},
                                                   {24, 6}, {38, 8}, {48, 9}};
  for (size_t i = 0; i < starts.size(); ++i) {
    const int end = i + 1 < starts.size() ? starts[i + 1].first : starts[i].first + 4;
    for (int offset = starts[i].first; offset < end; offset += 2) {
      EXPECT_EQ(python_line_for_offset(9, table, 2, offset), starts[i].second) << offset;
      EXPECT_EQ(python_line_for_offset(8, table, 2, offset), starts[i].second) << offset;
    }
  }
  EXPECT_EQ(python_line_for_offset(9, table, 2, -1), 2);  // not started: the def line
}

TEST(PythonLineTable, Python310LinetableGivesTheLineOfEachOffset) {
  auto table = from_hex("04010c0108010e010a020401");
  const std::vector<std::tuple<int, int, int>> ranges = {{0, 4, 3},   {4, 16, 4},  {16, 24, 5},
                                                         {24, 38, 6}, {38, 48, 8}, {48, 52, 9}};
  for (auto [start, end, line] : ranges) {
    for (int offset = start; offset < end; offset += 2) {
      EXPECT_EQ(python_line_for_offset(10, table, 2, offset), line) << offset;
    }
  }
  EXPECT_EQ(python_line_for_offset(10, table, 2, 52), -1);  // past the table
}

TEST(PythonLineTable, Python311LocationTableGivesTheLineOfEachOffset) {
  auto table = from_hex(
      "8000d80c0d8045dd0d12903189588c58f000040517f0000405178801d80b0c88718935f000030917d80c11905198"
      "119155894e88458845e00c119051894a88458845d80b10804c");
  const std::vector<std::tuple<int, int, int>> ranges = {
      {0, 2, 2}, {2, 6, 3}, {6, 40, 4}, {40, 50, 5}, {50, 68, 6}, {68, 80, 8}, {80, 84, 9}};
  for (auto [start, end, line] : ranges) {
    for (int offset = start; offset < end; offset += 2) {
      EXPECT_EQ(python_line_for_offset(11, table, 2, offset), line) << offset;
    }
  }
  EXPECT_EQ(python_line_for_offset(11, table, 2, -2), 2);  // prev_instr before the first
}

TEST(PythonLineTable, AnyBytesGiveALineOrMinusOne) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<uint8_t> table(rng() % 64);
    for (auto& b : table) b = static_cast<uint8_t>(rng());
    for (int minor : {9, 10, 11}) {
      const int line = python_line_for_offset(minor, table, 1, static_cast<int64_t>(rng() % 300));
      EXPECT_GE(line, -1);
      EXPECT_LE(line, 1 << 30);
    }
  }
}

TEST(PythonLayouts, KnowsTheVersionsFrom38To313) {
  for (int minor : {8, 9, 10, 11, 12, 13}) {
    const PythonLayout* layout = python_layout(3, minor);
    ASSERT_NE(layout, nullptr) << minor;
    EXPECT_EQ(layout->minor, minor);
    EXPECT_GT(layout->frame_size, layout->frame_code);
    EXPECT_GT(layout->code_size, layout->code_linetable);
  }
  EXPECT_EQ(python_layout(3, 7), nullptr);
  EXPECT_EQ(python_layout(3, 14), nullptr);
  EXPECT_EQ(python_layout(2, 11), nullptr);
}

// CPython 3.13 publishes its offsets for debuggers (_Py_DebugOffsets at the
// start of _PyRuntime): the layout strata keeps for it must say the same.
// Words of _Py_DebugOffsets, in its declaration order (3.13's
// Include/internal/pycore_runtime.h).
constexpr const char* kDebugOffsetsScript =
    "import ctypes\n"
    "a = ctypes.addressof(ctypes.c_char.in_dll(ctypes.pythonapi, '_PyRuntime'))\n"
    "assert ctypes.string_at(a, 8) == b'xdebugpy'\n"
    "print(' '.join(str(ctypes.c_uint64.from_address(a + 8 * i).value) for i in range(71)))\n";

std::string find_python313() {
  if (access("/usr/bin/python3.13", X_OK) == 0) return "/usr/bin/python3.13";
  const char* home = std::getenv("HOME");
  if (home == nullptr) return "";
  std::error_code ec;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(home) + "/.pyenv/versions", ec)) {
    auto python = e.path() / "bin" / "python3.13";
    if (e.path().filename().string().rfind("3.13", 0) == 0 && access(python.c_str(), X_OK) == 0) {
      return python.string();
    }
  }
  return "";
}

TEST(PythonLayouts, Python313IsWhatTheInterpreterPublishes) {
  const std::string python = find_python313();
  if (python.empty()) GTEST_SKIP() << "no CPython 3.13 here";
  const std::string command =
      "'" + python + "' -c \"$(cat <<'EOF'\n" + std::string(kDebugOffsetsScript) + "EOF\n)\"";
  FILE* pipe = popen(command.c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::vector<uint64_t> words;
  unsigned long long value = 0;
  while (std::fscanf(pipe, "%llu", &value) == 1) words.push_back(value);
  ASSERT_EQ(pclose(pipe), 0);
  ASSERT_EQ(words.size(), 71u);
  const PythonLayout& l = *python_layout(3, 13);
  EXPECT_EQ(words[5], l.runtime_interpreters_head);
  EXPECT_EQ(words[8], l.interp_next);
  EXPECT_EQ(words[9], l.interp_threads_head);
  EXPECT_EQ(words[21], l.tstate_next);
  EXPECT_EQ(words[23], l.tstate_current_frame);
  EXPECT_EQ(words[24], l.tstate_thread_id);
  EXPECT_EQ(words[25], l.tstate_native_thread_id);
  EXPECT_EQ(words[29], l.frame_back);
  EXPECT_EQ(words[30], l.frame_code);
  EXPECT_EQ(words[31], l.frame_instr);
  EXPECT_EQ(words[32], l.frame_size);  // localsplus: the frame's fixed part ends there
  EXPECT_EQ(words[33], l.frame_owner);
  EXPECT_EQ(words[35], l.code_filename);
  EXPECT_EQ(words[36], l.code_name);
  EXPECT_EQ(words[37], l.code_qualname);
  EXPECT_EQ(words[38], l.code_linetable);
  EXPECT_EQ(words[39], l.code_firstlineno);
  EXPECT_EQ(words[43], l.code_adaptive);
  EXPECT_EQ(words[70], l.ascii_data);  // sizeof(PyASCIIObject)
}

TEST(PythonThreads, FindsItsOwnTidInsideStructPthread) {
  auto offset = pthread_tid_offset();
  ASSERT_TRUE(offset.has_value());
  pid_t value;
  std::memcpy(&value, reinterpret_cast<const uint8_t*>(pthread_self()) + *offset, sizeof value);
  EXPECT_EQ(value, gettid());
}

// ProcessMemory on this process: reads within a snapshot come from the
// pages read first (one process_vm_readv per page), a new snapshot reads
// again, a read across pages is whole, and an unmapped address fails.
TEST(ProcessMemoryPages, ReadsEachPageOncePerSnapshot) {
  constexpr size_t kPage = ProcessMemory::kPage;
  alignas(4096) static uint8_t bytes[3 * kPage];
  for (size_t i = 0; i < sizeof bytes; ++i) bytes[i] = static_cast<uint8_t>(i * 7);
  const auto base = reinterpret_cast<uint64_t>(bytes);
  ProcessMemory memory(getpid());
  uint64_t value = 0;
  ASSERT_TRUE(memory.read(base + 8, &value, sizeof value));
  uint64_t expected;
  std::memcpy(&expected, bytes + 8, sizeof expected);
  EXPECT_EQ(value, expected);
  ASSERT_TRUE(memory.read(base + 100, &value, sizeof value));
  EXPECT_EQ(memory.syscalls(), 1u) << "the second read of the page is served from the snapshot";
  // Within one snapshot a changed byte is not seen: the page was read.
  bytes[8] ^= 0xff;
  uint8_t first = 0;
  ASSERT_TRUE(memory.read(base + 8, &first, 1));
  EXPECT_EQ(first, static_cast<uint8_t>(bytes[8] ^ 0xff));
  memory.new_snapshot();
  ASSERT_TRUE(memory.read(base + 8, &first, 1));
  EXPECT_EQ(first, bytes[8]);
  EXPECT_EQ(memory.syscalls(), 2u);
  // Across a page boundary.
  std::vector<uint8_t> across(64);
  ASSERT_TRUE(memory.read(base + kPage - 32, across.data(), across.size()));
  EXPECT_EQ(0, std::memcmp(across.data(), bytes + kPage - 32, across.size()));
  // A long read is one call of its own.
  std::vector<uint8_t> all(sizeof bytes);
  ASSERT_TRUE(memory.read(base, all.data(), all.size()));
  EXPECT_EQ(0, std::memcmp(all.data(), bytes, all.size()));
  // Address 0's page is never mapped; nor is the top of user space.
  EXPECT_FALSE(memory.read(16, &value, sizeof value));
  EXPECT_FALSE(memory.read(UINT64_MAX - 4, &value, sizeof value));
}

// Memory made of regions; a read must fall inside one.
class ImageMemory : public RemoteMemory {
 public:
  bool read(uint64_t address, void* out, size_t len) override {
    ++reads;
    auto it = regions.upper_bound(address);
    if (it == regions.begin()) return false;
    --it;
    const auto& bytes = it->second;
    if (address - it->first > bytes.size() || len > bytes.size() - (address - it->first)) {
      return false;
    }
    std::memcpy(out, bytes.data() + (address - it->first), len);
    return true;
  }
  void put(uint64_t address, const void* data, size_t len) {
    auto& bytes = region_at(address, len);
    std::memcpy(bytes.data() + (address - base_of(address)), data, len);
  }
  void put64(uint64_t address, uint64_t v) { put(address, &v, 8); }
  void put32(uint64_t address, uint32_t v) { put(address, &v, 4); }
  void add_region(uint64_t base, size_t size) { regions[base].assign(size, 0); }

  std::map<uint64_t, std::vector<uint8_t>> regions;
  size_t reads = 0;

 private:
  uint64_t base_of(uint64_t address) { return std::prev(regions.upper_bound(address))->first; }
  std::vector<uint8_t>& region_at(uint64_t address, size_t) {
    return std::prev(regions.upper_bound(address))->second;
  }
};

constexpr uint64_t kRuntime = 0x100000;
constexpr uint64_t kInterp = 0x200000;
constexpr uint64_t kThread = 0x300000;
constexpr uint64_t kPthread = 0x380000;
constexpr uint64_t kFrames = 0x400000;
constexpr uint64_t kCodes = 0x500000;
constexpr uint64_t kStrings = 0x600000;
constexpr uint64_t kCodeType = 0x700000;
constexpr uint32_t kTid = 4242;
constexpr uint32_t kTidOffset = 0x2d0;

// A CPython image: one interpreter, one thread (kTid), a chain of frames
// running code objects named by `names` (leaf first), each at line
// first_line + 1 of a 3-line table. `entry[i]` makes frame i the first of a
// C-level eval call (all of them by default): 3.11 flags it, 3.12+ put the
// eval loop's entry frame (owned by the C stack) after it in the chain.
struct PythonImage {
  ImageMemory memory;
  const PythonLayout& layout;
  uint64_t next_string = kStrings;

  PythonImage(int minor, const std::vector<std::string>& names, std::vector<bool> entry = {})
      : layout(*python_layout(3, minor)) {
    entry.resize(names.size(), true);
    for (uint64_t base :
         {kRuntime, kInterp, kThread, kPthread, kFrames, kCodes, kStrings, kCodeType}) {
      memory.add_region(base, 0x10000);
    }
    memory.put64(kRuntime + layout.runtime_interpreters_head, kInterp);
    memory.put64(kInterp + layout.interp_threads_head, kThread);
    if (layout.tstate_native_thread_id) {
      memory.put64(kThread + layout.tstate_native_thread_id, kTid);
    } else {
      memory.put64(kThread + layout.tstate_thread_id, kPthread);
      memory.put32(kPthread + kTidOffset, kTid);
    }
    memory.put64(kCodeType + 24, kCodeType + 0x100);
    memory.put(kCodeType + 0x100, "code", 5);
    const uint64_t first_frame = kFrames;
    if (layout.tstate_cframe) {
      memory.put64(kThread + layout.tstate_cframe, kThread + 0x800);
      memory.put64(kThread + 0x800 + layout.cframe_current_frame, first_frame);
    } else if (layout.tstate_current_frame) {
      memory.put64(kThread + layout.tstate_current_frame, first_frame);
    } else {
      memory.put64(kThread + layout.tstate_frame, first_frame);
    }
    for (size_t i = 0; i < names.size(); ++i) {
      const uint64_t frame = kFrames + i * 0x100;
      const uint64_t code = kCodes + i * 0x200;
      uint64_t back = i + 1 < names.size() ? frame + 0x100 : 0;
      if (layout.frame_owner && entry[i]) {
        const uint64_t shim = kFrames + 0x8000 + i * 0x100;
        memory.put(shim + layout.frame_owner, &kFrameOwnedByCStack, 1);
        memory.put64(shim + layout.frame_back, back);
        back = shim;
      }
      memory.put64(frame + layout.frame_code, code);
      memory.put64(frame + layout.frame_back, back);
      memory.put64(code + 8, kCodeType);
      const uint64_t name = string(names[i]);
      memory.put64(code + layout.code_name, name);
      if (layout.code_qualname) memory.put64(code + layout.code_qualname, name);
      memory.put64(code + layout.code_filename, string("/src/prog.py"));
      memory.put32(code + layout.code_firstlineno, static_cast<uint32_t>(10 * (i + 1)));
      // Bytes: ob_size at 16, data at 32. One line per 4 bytes of code.
      const uint64_t table = code + 0x100;
      std::vector<uint8_t> bytes;
      if (minor <= 9) bytes = {0, 1, 4, 1, 4, 1};         // lines first+1 .. first+3
      if (minor == 10) bytes = {4, 1, 4, 1, 4, 1};        // [0,4): +1, [4,8): +2, ...
      if (minor >= 11) bytes = {0xd9, 0, 0, 0xd9, 0, 0};  // one-line form: +1, 2 code units
      memory.put64(table + 16, bytes.size());
      memory.put(table + 32, bytes.data(), bytes.size());
      memory.put64(code + layout.code_linetable, table);
      // Every frame at its code's byte offset 4.
      if (layout.frame_instr) {
        memory.put64(frame + layout.frame_instr, code + layout.code_adaptive + 4);
        const uint8_t is_entry = entry[i] ? 1 : 0;
        if (layout.frame_is_entry) memory.put(frame + layout.frame_is_entry, &is_entry, 1);
      } else {
        memory.put32(frame + layout.frame_lasti, minor == 10 ? 2 : 4);
      }
    }
  }

  // A compact ASCII str object.
  uint64_t string(const std::string& text) {
    const uint64_t at = next_string;
    next_string += 0x100;
    memory.put64(at + 16, text.size());
    memory.put32(at + 32, (1u << 2) | (1u << 5) | (1u << 6));  // kind 1, compact, ascii
    memory.put(at + layout.ascii_data, text.data(), text.size());
    return at;
  }
};

std::vector<std::string> names_of(const PythonStackReader& reader,
                                  const std::vector<PythonFrameRead>& frames) {
  std::vector<std::string> out;
  for (const auto& f : frames) out.push_back(reader.codes().at(f.code).name);
  return out;
}

class PythonStackVersions : public ::testing::TestWithParam<int> {};

TEST_P(PythonStackVersions, ReadsTheSampledThreadsFramesLeafFirst) {
  PythonImage image(GetParam(), {"hot", "outer", "<module>"});
  PythonStackReader reader(image.layout, kRuntime, kTidOffset);
  std::vector<PythonFrameRead> frames;
  ASSERT_EQ(reader.read(image.memory, kTid, &frames), PythonReadResult::kOk);
  EXPECT_EQ(names_of(reader, frames), (std::vector<std::string>{"hot", "outer", "<module>"}));
  ASSERT_EQ(frames.size(), 3u);
  // Offset 4: the second line of each table.
  EXPECT_EQ(frames[0].line, 12);
  EXPECT_EQ(frames[2].line, 32);
  EXPECT_EQ(reader.codes()[frames[0].code].file, "/src/prog.py");
  EXPECT_EQ(reader.codes()[frames[0].code].first_line, 10);
  // Code objects are read once: a second read costs fewer memory reads.
  const size_t first_reads = image.memory.reads;
  image.memory.reads = 0;
  ASSERT_EQ(reader.read(image.memory, kTid, &frames), PythonReadResult::kOk);
  EXPECT_LT(image.memory.reads * 2, first_reads);
  EXPECT_EQ(reader.codes().size(), 3u);
  // Another code object at a freed one's address is read again, not taken
  // for the old one.
  const uint64_t leaf_code = kCodes;
  image.memory.put64(leaf_code + image.layout.code_name, image.string("reborn"));
  if (image.layout.code_qualname) {
    image.memory.put64(leaf_code + image.layout.code_qualname, image.string("reborn"));
  }
  ASSERT_EQ(reader.read(image.memory, kTid, &frames), PythonReadResult::kOk);
  EXPECT_EQ(names_of(reader, frames), (std::vector<std::string>{"reborn", "outer", "<module>"}));
}

TEST_P(PythonStackVersions, AnotherThreadHasNoPythonStack) {
  PythonImage image(GetParam(), {"hot"});
  PythonStackReader reader(image.layout, kRuntime, kTidOffset);
  std::vector<PythonFrameRead> frames;
  EXPECT_EQ(reader.read(image.memory, kTid + 1, &frames), PythonReadResult::kNoThread);
  EXPECT_TRUE(frames.empty());
}

TEST_P(PythonStackVersions, ACycleInTheFrameChainEndsTheWalk) {
  PythonImage image(GetParam(), {"a", "b"});
  image.memory.put64(kFrames + 0x100 + image.layout.frame_back, kFrames);  // b -> a -> b ...
  PythonStackReader reader(image.layout, kRuntime, kTidOffset);
  std::vector<PythonFrameRead> frames;
  EXPECT_EQ(reader.read(image.memory, kTid, &frames), PythonReadResult::kReadFailed);
  EXPECT_TRUE(frames.empty());
}

TEST_P(PythonStackVersions, APointerToSomethingNotACodeObjectIsRefused) {
  PythonImage image(GetParam(), {"a"});
  image.memory.put(kCodeType + 0x100, "list", 5);
  PythonStackReader reader(image.layout, kRuntime, kTidOffset);
  std::vector<PythonFrameRead> frames;
  EXPECT_EQ(reader.read(image.memory, kTid, &frames), PythonReadResult::kReadFailed);
}

// Random damage to every region of a valid image: the reader answers, reads
// no more than its bounds, and whatever it returns indexes its own tables.
TEST_P(PythonStackVersions, MutatedImagesNeverBreakTheReader) {
  std::mt19937_64 rng(1000 + GetParam());
  const PythonImage pristine(GetParam(), {"leaf", "mid", "outer", "<module>"});
  size_t ok = 0;
  for (int round = 0; round < 3000; ++round) {
    ImageMemory memory = pristine.memory;
    const int mutations = 1 + static_cast<int>(rng() % 8);
    for (int m = 0; m < mutations; ++m) {
      auto it = memory.regions.begin();
      std::advance(it, static_cast<long>(rng() % memory.regions.size()));
      auto& bytes = it->second;
      // Mostly the first 0x1000 bytes, where the structures are.
      const size_t at = rng() % (rng() % 4 ? 0x1000 : bytes.size());
      switch (rng() % 4) {
        case 0:
          bytes[at] = static_cast<uint8_t>(rng());
          break;
        case 1:
          bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
          break;
        case 2:
          // A pointer into another region (or itself): cycles and confusions.
          if (at + 8 <= bytes.size()) {
            auto other = memory.regions.begin();
            std::advance(other, static_cast<long>(rng() % memory.regions.size()));
            uint64_t p = other->first + (rng() % 0x400) * 8;
            std::memcpy(bytes.data() + at - at % 8, &p, 8);
          }
          break;
        default:
          if (at + 8 <= bytes.size()) {
            uint64_t huge = rng();
            std::memcpy(bytes.data() + at - at % 8, &huge, 8);
          }
      }
    }
    PythonStackReader reader(pristine.layout, kRuntime, kTidOffset);
    std::vector<PythonFrameRead> frames;
    memory.reads = 0;
    const PythonReadResult result = reader.read(memory, kTid, &frames);
    ASSERT_LE(frames.size(), PythonStackReader::kMaxFrames);
    // Each frame costs a bounded number of reads: no unbounded loop.
    ASSERT_LT(memory.reads, 16 * (PythonStackReader::kMaxFrames + PythonStackReader::kMaxThreads));
    if (result != PythonReadResult::kOk) {
      EXPECT_TRUE(frames.empty());
      continue;
    }
    ++ok;
    for (const auto& f : frames) {
      ASSERT_LT(f.code, reader.codes().size());
      ASSERT_GE(f.line, 0);
      const auto& code = reader.codes()[f.code];
      ASSERT_LE(code.name.size(), 4 * PythonStackReader::kMaxString + 3);
      ASSERT_LE(code.file.size(), 4 * PythonStackReader::kMaxString + 3);
    }
  }
  // Most mutations miss the few bytes that matter: the reader still reads.
  EXPECT_GT(ok, 500u);
}

// A C-level call of the eval loop begins a group of frames: 3.11 flags its
// first frame, 3.12+ follow it with the loop's entry frame, which is no
// Python frame and is not returned.
TEST_P(PythonStackVersions, EntryFramesEndEachCLevelCall) {
  if (GetParam() < 11) GTEST_SKIP() << "before 3.11 every frame is its own C-level call";
  PythonImage image(GetParam(), {"leaf", "inlined", "callback", "<module>"},
                    {true, false, true, true});
  PythonStackReader reader(image.layout, kRuntime, kTidOffset);
  std::vector<PythonFrameRead> frames;
  ASSERT_EQ(reader.read(image.memory, kTid, &frames), PythonReadResult::kOk);
  EXPECT_EQ(names_of(reader, frames),
            (std::vector<std::string>{"leaf", "inlined", "callback", "<module>"}));
  std::vector<bool> entries;
  for (const auto& f : frames) entries.push_back(f.entry);
  EXPECT_EQ(entries, (std::vector<bool>{true, false, true, true}));
  EXPECT_EQ(frames[1].line, 22);
}

INSTANTIATE_TEST_SUITE_P(Versions, PythonStackVersions, ::testing::Values(8, 9, 10, 11, 12, 13));

}  // namespace
}  // namespace strata::sampler
