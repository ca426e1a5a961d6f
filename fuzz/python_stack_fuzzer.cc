// The Python stack reader (src/sampler/python_stack) on arbitrary memory:
// the input's first byte picks the CPython version (3.8 + byte % 4), the
// rest is the target's memory, mapped at kBase, with _PyRuntime at kBase;
// every pointer in it is the fuzzer's. The reader must never crash, never
// return more than its bounds, and every frame it returns must index its
// code table. The same bytes feed each version's line-table decoder. A
// broken promise aborts, which libFuzzer and the replay test report.
// Seeds: fuzz/corpus/python_stack/, written by fuzz/make_python_stack_seeds.py.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "sampler/python_stack.h"

namespace {

using namespace strata::sampler;

constexpr uint64_t kBase = 0x10000;
constexpr uint32_t kTid = 4242;
constexpr uint32_t kTidOffset = 0x2d0;

void expect(bool ok) {
  if (!ok) std::abort();
}

class InputMemory : public RemoteMemory {
 public:
  InputMemory(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  bool read(uint64_t address, void* out, size_t len) override {
    if (++reads_ > 1'000'000) std::abort();  // an unbounded walk
    if (address < kBase || address - kBase > size_ || len > size_ - (address - kBase)) return false;
    std::memcpy(out, data_ + (address - kBase), len);
    return true;
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t reads_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  const int minor = 8 + data[0] % 6;  // 3.8-3.13
  const PythonLayout* layout = python_layout(3, minor);
  expect(layout != nullptr);
  InputMemory memory(data + 1, size - 1);
  PythonStackReader reader(*layout, kBase, kTidOffset);
  std::vector<PythonFrameRead> frames;
  for (int round = 0; round < 2; ++round) {  // the second read goes through the caches
    const PythonReadResult result = reader.read(memory, kTid, &frames);
    expect(frames.size() <= PythonStackReader::kMaxFrames);
    if (result != PythonReadResult::kOk) expect(frames.empty());
    for (const auto& f : frames) {
      expect(f.code < reader.codes().size());
      expect(f.line >= 0);
      expect(reader.codes()[f.code].name.size() <= 4 * PythonStackReader::kMaxString + 3);
    }
  }
  std::vector<uint8_t> table(data + 1, data + size);
  for (int m = 8; m <= 13; ++m) {
    for (int64_t offset : {int64_t{-2}, int64_t{0}, int64_t{6}, int64_t(size)}) {
      const int line = python_line_for_offset(m, table, 1, offset);
      expect(line >= -1);
    }
  }
  return 0;
}
