// Replays inputs through a fuzz target's LLVMFuzzerTestOneInput without
// libFuzzer: what the ctest fuzz.replay.* runs in the ordinary (g++) build, so
// every corpus seed and every crash input kept in fuzz/regressions/ goes
// through the entry point on every `make test` (and under ASan/UBSan in
// `make test-asan`). A finding aborts, as it would under libFuzzer.
//
// Usage: <target>_replay PATH...   (a directory: its regular files, sorted;
// names starting with '.' are skipped, so an empty directory can hold a .keep)
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

bool read_file(const std::filesystem::path& path, std::vector<uint8_t>* bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  bytes->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  return !in.bad();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s PATH...\n", argv[0]);
    return 2;
  }
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; i++) {
    std::error_code ec;
    std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg, ec)) {
        if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') {
          inputs.push_back(entry.path());
        }
      }
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "strata: cannot read '%s': no such file or directory\n", argv[i]);
      return 2;
    }
  }
  std::sort(inputs.begin(), inputs.end());
  if (inputs.empty()) {
    std::fprintf(stderr, "strata: no inputs to replay in the paths given\n");
    return 2;
  }
  std::vector<uint8_t> bytes;
  for (const auto& path : inputs) {
    if (!read_file(path, &bytes)) {
      std::fprintf(stderr, "strata: cannot read '%s'\n", path.c_str());
      return 1;
    }
    std::fprintf(stderr, "replay %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
  }
  std::fprintf(stderr, "replayed %zu inputs\n", inputs.size());
  return 0;
}
