// Overhead of the perf_event sampler on a CPU-bound target: the same child
// run bare, under strata's sampler (dwarf mode, 1 kHz) and under
// `perf record -F 1000 --call-graph dwarf`, interleaved, medians of N runs.
// Prints the ratios (shared/DESIGN.md, Conventions: benchmarks print ratios).
//
//   sampler_overhead [--runs N] [--ms TARGET_MS] [--no-perf]
//
// The child is this program re-executed with --child: a call-heavy loop
// (recursive fib) of a fixed amount of work calibrated to TARGET_MS bare. Two
// figures per tool: end-to-end wall time (fork to reaped, what a user waits
// for, including the tool's own start-up and wrap-up) and the target's own
// elapsed time measured inside it (the slowdown sampling inflicts on it).
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "common/clock.h"
#include "common/process.h"
#include "sampler/sampler.h"

namespace {

__attribute__((noinline)) uint64_t fib(int n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

uint64_t work(uint64_t iterations) {
  uint64_t acc = 0;
  for (uint64_t i = 0; i < iterations; ++i) acc += fib(18 + static_cast<int>(i % 3));
  return acc;
}

int64_t process_cpu_ns() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

// Writes "elapsed_ns cpu_ns": CPU time (user + sys, the sampler's interrupt
// work on this task included) is the steadier figure on a shared machine.
int child_main(uint64_t iterations, const char* out_path) {
  const int64_t start = strata::monotonic_ns();
  const int64_t cpu_start = process_cpu_ns();
  volatile uint64_t sink = work(iterations);
  (void)sink;
  const int64_t elapsed = strata::monotonic_ns() - start;
  const int64_t cpu = process_cpu_ns() - cpu_start;
  std::ofstream(out_path) << elapsed << " " << cpu << "\n";
  return 0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct TargetTimes {
  double elapsed_ms = 0;
  double cpu_ms = 0;
};

TargetTimes read_target(const std::string& path) {
  std::ifstream in(path);
  double elapsed = 0, cpu = 0;
  in >> elapsed >> cpu;
  return {elapsed / 1e6, cpu / 1e6};
}

std::string self_exe() {
  char buf[4096];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return "/proc/self/exe";
  buf[n] = 0;
  return buf;
}

struct Series {
  std::vector<double> wall_ms;
  std::vector<double> target_ms;
  std::vector<double> cpu_ms;
  void add(double wall, const TargetTimes& t) {
    wall_ms.push_back(wall);
    target_ms.push_back(t.elapsed_ms);
    cpu_ms.push_back(t.cpu_ms);
  }
};

}  // namespace

int main(int argc, char** argv) {
  if (argc == 4 && !std::strcmp(argv[1], "--child")) {
    return child_main(std::strtoull(argv[2], nullptr, 10), argv[3]);
  }
  int runs = 5;
  double target_ms = 1000;
  bool with_perf = true;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--runs") && i + 1 < argc) {
      runs = std::max(1, std::atoi(argv[++i]));
    } else if (!std::strcmp(argv[i], "--ms") && i + 1 < argc) {
      target_ms = std::atof(argv[++i]);
    } else if (!std::strcmp(argv[i], "--no-perf")) {
      with_perf = false;
    } else {
      std::fprintf(stderr, "usage: sampler_overhead [--runs N] [--ms TARGET_MS] [--no-perf]\n");
      return 2;
    }
  }

  // Calibrate the work to about target_ms on this machine.
  const uint64_t probe = 300;
  const int64_t t0 = strata::monotonic_ns();
  volatile uint64_t sink = work(probe);
  (void)sink;
  const double probe_ms = static_cast<double>(strata::monotonic_ns() - t0) / 1e6;
  const uint64_t iterations =
      std::max<uint64_t>(1, static_cast<uint64_t>(probe * target_ms / std::max(probe_ms, 0.01)));

  const std::string exe = self_exe();
  char dir_template[] = "/tmp/strata-sampler-bench-XXXXXX";
  const char* dir = mkdtemp(dir_template);
  if (!dir) {
    std::perror("mkdtemp");
    return 1;
  }
  const std::string out = std::string(dir) + "/elapsed";
  const std::string perf_data = std::string(dir) + "/perf.data";
  const std::vector<std::string> child = {exe, "--child", std::to_string(iterations), out};
  std::vector<std::string> perf_cmd = {"perf",  "record", "-F", "1000",    "--call-graph",
                                       "dwarf", "-q",     "-o", perf_data, "--"};
  perf_cmd.insert(perf_cmd.end(), child.begin(), child.end());

  Series bare, strata_s, perf_s;
  uint64_t samples = 0, stack_bytes = 0, lost = 0;
  bool perf_ok = with_perf;
  strata::ProcessOptions quiet;
  quiet.output = strata::OutputMode::kDiscard;
  for (int run = 0; run < runs; ++run) {
    {
      auto r = strata::run_process(child, quiet);
      if (!r || !r->succeeded()) {
        std::fprintf(stderr, "sampler_overhead: bare run failed\n");
        return 1;
      }
      bare.add(static_cast<double>(r->wall_ns) / 1e6, read_target(out));
    }
    {
      strata::sampler::SamplerOptions o;  // dwarf, 1 kHz, 16 KiB stacks
      strata::sampler::SampleErrorKind kind;
      const int64_t start = strata::monotonic_ns();
      auto r = strata::sampler::sample_command(child, o, &kind);
      const int64_t wall = strata::monotonic_ns() - start;
      if (!r) {
        std::fprintf(stderr, "sampler_overhead: strata: %s\n", r.error().message.c_str());
        return 1;
      }
      strata_s.add(static_cast<double>(wall) / 1e6, read_target(out));
      samples = r->samples.size();
      stack_bytes = r->stacks.size();
      lost = r->counters.lost_samples;
    }
    if (perf_ok) {
      auto r = strata::run_process(perf_cmd, quiet);
      if (!r || !r->succeeded()) {
        std::fprintf(stderr, "sampler_overhead: perf record failed (%s); leaving it out\n",
                     r ? strata::describe_termination(*r).c_str() : r.error().message.c_str());
        perf_ok = false;
      } else {
        perf_s.add(static_cast<double>(r->wall_ns) / 1e6, read_target(out));
      }
    }
  }

  std::printf("sampler_overhead: %d interleaved runs, child %s --child %llu (~%.0f ms bare)\n",
              runs, exe.c_str(), static_cast<unsigned long long>(iterations), target_ms);
  std::printf("medians; ratios against bare\n");
  std::printf("%-36s %9s %9s %9s %8s %8s %8s\n", "", "wall ms", "tgt ms", "tgt cpu", "wall x",
              "tgt x", "cpu x");
  const double bw = median(bare.wall_ms), bt = median(bare.target_ms), bc = median(bare.cpu_ms);
  auto row = [&](const char* name, const Series& s) {
    const double w = median(s.wall_ms), t = median(s.target_ms), c = median(s.cpu_ms);
    std::printf("%-36s %9.1f %9.1f %9.1f %8.3f %8.3f %8.3f\n", name, w, t, c, w / bw, t / bt,
                c / bc);
  };
  row("bare", bare);
  row("strata sampler (dwarf, 1 kHz, 16K)", strata_s);
  if (perf_ok && !perf_s.wall_ms.empty()) {
    row("perf record -F 1000 --call-graph dwarf", perf_s);
    std::printf("strata/perf: wall %.3f, target %.3f, target cpu %.3f\n",
                median(strata_s.wall_ms) / median(perf_s.wall_ms),
                median(strata_s.target_ms) / median(perf_s.target_ms),
                median(strata_s.cpu_ms) / median(perf_s.cpu_ms));
  }
  std::printf("strata last run: %llu samples, %.1f MiB of stack copies kept, %llu lost\n",
              static_cast<unsigned long long>(samples),
              static_cast<double>(stack_bytes) / 1048576.0, static_cast<unsigned long long>(lost));
  std::remove(out.c_str());
  std::remove(perf_data.c_str());
  std::remove((perf_data + ".old").c_str());
  rmdir(dir);
  return 0;
}
