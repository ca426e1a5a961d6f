// cpu_hotspot: the seed's Case 1, a CPU-only program whose time goes into its own
// text-cleaning code. `--mode slow` spends it in normalize_line_slow, which a CPU
// profiler (strata cpu, perf) shows at the top; `--mode fast` does the same work
// efficiently and prints the same result.
//
//   cpu_hotspot --mode slow|fast [--lines N] [--seed S]
//   mode=slow lines=6000 elapsed_ms=67.840 top10=[('launch', 6602), ...]
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "cpu_hotspot_lib.h"

namespace {

constexpr int64_t kMaxLines = 10'000'000;  // keeps memory use below about 2 GiB

void print_usage(std::FILE* to) {
  std::fprintf(to,
               "usage: cpu_hotspot --mode slow|fast [--lines N] [--seed S]\n"
               "  --lines N  lines of text to generate, 0..%lld (default 6000)\n"
               "  --seed S   generator seed, an unsigned integer (default %llu)\n",
               static_cast<long long>(kMaxLines),
               static_cast<unsigned long long>(cpu_hotspot::kDefaultSeed));
}

[[noreturn]] void usage_error(const std::string& why) {
  std::fprintf(stderr, "cpu_hotspot: %s\n", why.c_str());
  print_usage(stderr);
  std::exit(2);
}

template <typename T>
bool parse_int(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return ec == std::errc() && end == text.data() + text.size();
}

struct Options {
  std::string mode;
  int64_t lines = 6000;
  uint64_t seed = cpu_hotspot::kDefaultSeed;
};

Options parse_args(int argc, char** argv) {
  Options opts;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    // Accept both "--flag value" and "--flag=value", as argparse does.
    if (size_t eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    } else if (arg == "--mode" || arg == "--lines" || arg == "--seed") {
      if (i + 1 >= argc) usage_error(std::string(arg) + " needs a value");
      value = argv[++i];
    }
    if (arg == "--help" || arg == "-h") {
      print_usage(stdout);
      std::exit(0);
    } else if (arg == "--mode") {
      if (value != "slow" && value != "fast") {
        usage_error("--mode must be slow or fast, not '" + std::string(value) + "'");
      }
      opts.mode = value;
    } else if (arg == "--lines") {
      if (!parse_int(value, opts.lines) || opts.lines < 0 || opts.lines > kMaxLines) {
        usage_error("--lines must be an integer in 0.." + std::to_string(kMaxLines) + ", not '" +
                    std::string(value) + "'");
      }
    } else if (arg == "--seed") {
      if (!parse_int(value, opts.seed)) {
        usage_error("--seed must be an unsigned integer, not '" + std::string(value) + "'");
      }
    } else {
      usage_error("unknown argument '" + std::string(argv[i]) + "'");
    }
  }
  if (opts.mode.empty()) usage_error("--mode is required");
  return opts;
}

}  // namespace

int main(int argc, char** argv) {
  Options opts = parse_args(argc, argv);
  std::vector<std::string> lines = cpu_hotspot::make_lines(opts.lines, opts.seed);

  // Like the seed, time only the normalize+count work, not the generation.
  auto start = std::chrono::steady_clock::now();
  std::vector<cpu_hotspot::WordCount> counts = opts.mode == "slow"
                                                   ? cpu_hotspot::count_words_slow(lines)
                                                   : cpu_hotspot::count_words_fast(lines);
  auto stop = std::chrono::steady_clock::now();
  double elapsed_ms = std::chrono::duration<double, std::milli>(stop - start).count();

  std::printf("mode=%s lines=%lld elapsed_ms=%.3f top10=%s\n", opts.mode.c_str(),
              static_cast<long long>(opts.lines), elapsed_ms,
              cpu_hotspot::format_top(counts, 10).c_str());
  return 0;
}
