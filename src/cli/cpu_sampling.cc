#include "cli/cpu_sampling.h"

#include <unistd.h>

#include <CLI/CLI.hpp>
#include <bit>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

#include "analysis/python_view.h"
#include "common/process.h"
#include "common/strings.h"
#include "import/cpu/store_profile.h"
#include "import/inprocess_sampling.h"
#include "sampler/python_stack.h"
#include "symbolize/proc_maps.h"
#include "symbolize/python_runtime.h"

namespace strata::cli {
namespace {

std::optional<sampler::PythonRuntime> python_runtime_of_file(const std::string& path,
                                                             uint64_t start, uint64_t pgoff) {
  auto found = symbolize::find_python_runtime(path, start, pgoff);
  if (!found) return std::nullopt;
  return sampler::PythonRuntime{found->address, found->major, found->minor, found->problem};
}

// The interpreter in a live process's executable mappings (those the
// sampler's MMAP records show), one whose frames can be read first. Not
// symbolize::read_proc_maps: it also reads the process's perf map, which
// this lookup (on the sampler's draining thread) has no use for.
std::optional<sampler::PythonRuntime> python_runtime_of_process(uint32_t pid) {
  const std::optional<std::string> text = read_proc_text("/proc/" + std::to_string(pid) + "/maps");
  if (!text) return std::nullopt;
  std::optional<sampler::PythonRuntime> with_problem;
  for (const symbolize::MapsLine& line : symbolize::parse_proc_maps(*text)) {
    if (line.path.empty() || !line.executable()) continue;
    auto runtime = python_runtime_of_file(line.path, line.start, line.pgoff);
    if (!runtime) continue;
    if (runtime->problem.empty() && runtime->address != 0) return runtime;
    if (!with_problem) with_problem = runtime;
  }
  return with_problem;
}

}  // namespace

void add_sampling_flags(CLI::App* sub, SamplingFlags& flags) {
  sub->add_option("-F,--frequency", flags.frequency, "Samples per second per busy thread")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  sub->add_option("--call-graph", flags.call_graph,
                  "dwarf: copy user stacks and unwind with DWARF CFI; fp: frame pointers")
      ->capture_default_str();
  sub->add_option("--stack-size", flags.stack_bytes,
                  "Bytes of user stack copied per sample (dwarf)")
      ->check(CLI::Range(1024, static_cast<int>(kLargestStackCopy)))
      ->capture_default_str();
  sub->add_option("--sampler", flags.sampler,
                  "auto: perf_event_open, in-process where it is refused; perf; in-process "
                  "(LD_PRELOAD'ed SIGPROF sampler)")
      ->check(CLI::IsMember({"auto", "perf", "in-process"}))
      ->capture_default_str();
  sub->add_option("-m,--mmap-pages", flags.mmap_pages,
                  "Ring buffer per CPU, as perf's -m: data pages (a power of two) or a size "
                  "(512K, 2M); default 128 pages (512 KiB)")
      ->type_name("PAGES|SIZE");
}

Result<uint32_t> parse_mmap_pages(std::string_view text, uint32_t page_size) {
  auto bad = [&](const std::string& why) {
    return make_error("-m/--mmap-pages '" + printable(text) + "': " + why);
  };
  uint64_t multiplier = 0;  // 0: the number counts pages
  std::string_view digits = text;
  if (!text.empty()) {
    const char unit = static_cast<char>(std::toupper(static_cast<unsigned char>(text.back())));
    if (unit == 'K') multiplier = 1ull << 10;
    if (unit == 'M') multiplier = 1ull << 20;
    if (unit == 'G') multiplier = 1ull << 30;
    if (multiplier != 0) digits.remove_suffix(1);
  }
  if (digits.empty() || digits.size() > 10 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos) {
    return bad("give a number of pages or a size such as 512K or 2M");
  }
  uint64_t value = std::stoull(std::string(digits));
  uint64_t pages = value;
  if (multiplier != 0) {
    uint64_t bytes = value * multiplier;
    if (bytes % page_size != 0)
      return bad("not a whole number of " + std::to_string(page_size) + "-byte pages");
    pages = bytes / page_size;
  }
  if (!std::has_single_bit(pages)) return bad("the page count must be a power of two");
  if (pages < sampler::kMinRingPages) {
    return bad("at least " + std::to_string(sampler::kMinRingPages) + " pages");
  }
  if (pages * page_size > (1ull << 30)) return bad("at most 1 GiB per CPU");
  return static_cast<uint32_t>(pages);
}

Result<sampler::SamplerOptions> sampler_options(const SamplingFlags& flags) {
  sampler::SamplerOptions so;
  if (flags.call_graph == "dwarf") {
    so.mode = sampler::StackMode::kDwarf;
  } else if (flags.call_graph == "fp") {
    so.mode = sampler::StackMode::kFramePointer;
  } else {
    return make_error("--call-graph '" + printable(flags.call_graph) + "': use dwarf or fp");
  }
  so.frequency_hz = flags.frequency;
  so.stack_bytes = flags.stack_bytes;
  so.find_python_runtime = [](const sampler::Mapping& m) {
    return python_runtime_of_file(m.filename, m.addr, m.pgoff);
  };
  so.find_python_runtime_of_process = python_runtime_of_process;
  if (!flags.mmap_pages.empty()) {
    STRATA_ASSIGN_OR_RETURN(
        so.ring_data_pages,
        parse_mmap_pages(flags.mmap_pages, static_cast<uint32_t>(sysconf(_SC_PAGESIZE))));
  } else if (so.mode == sampler::StackMode::kDwarf && flags.stack_bytes > kDefaultStackCopy) {
    // The default ring holds as many samples of a larger copy when it grows
    // with it: at 65528 bytes and 4 kHz the 512 KiB ring lost a quarter of
    // a PyTorch program's samples on the H200. The sampler halves a ring the
    // mlock limit refuses, with a note.
    so.ring_data_pages *=
        std::bit_ceil((flags.stack_bytes + kDefaultStackCopy - 1) / kDefaultStackCopy);
  }
  return so;
}

namespace {

// The file a command runs: argv[0] as given when it holds a '/', else found
// in PATH, as execvp finds it; "" when not found.
std::string command_file(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  size_t start = 0;
  while (start <= dirs.size()) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = dirs.substr(start, end - start) + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  return "";
}

// The file a command runs, found as execvp would (through `env`), links
// resolved; "" when there is none.
std::string command_program(const std::vector<std::string>& command) {
  size_t i = 0;
  // env [-flags] [NAME=VALUE ...] PROGRAM: the program is what runs.
  if (!command.empty() && std::filesystem::path(command[0]).filename() == "env") {
    for (i = 1; i < command.size() &&
                (command[i].find('=') != std::string::npos || command[i].rfind("-", 0) == 0);
         ++i) {
    }
  }
  if (i >= command.size()) return "";
  const std::string file = command_file(command[i]);
  if (file.empty()) return "";
  std::error_code ec;
  const auto real = std::filesystem::canonical(file, ec);
  return ec ? file : real.string();
}

// Whether the perf sampler reads the Python frames of the command's
// interpreter from its memory (sampler/python_stack.h): the program is a
// CPython whose version (its Py_Version, or its name: python3.12) has a
// known layout. A launcher script (pyenv's shims) hides which one runs.
bool python_frames_read_from_memory(const std::string& program) {
  if (program.empty()) return false;
  auto runtime = symbolize::find_python_runtime(program, 0, 0);
  return runtime && sampler::python_layout(runtime->major, runtime->minor) != nullptr;
}

// CPython >= 3.12 writes /tmp/perf-PID.map naming its functions when
// PYTHONPERFSUPPORT=1 (older interpreters and other programs ignore it).
// strata asks for the maps only where it cannot read the frames from
// memory (the in-process sampler; an interpreter it does not know or cannot
// see): the trampolines behind them make every Python call a C-level call
// several native frames deep, which cuts deep stacks at the stack copy
// (bench/results/python_perf_maps-dev-2026-12-05.txt) and slows the target.
// A PYTHONPERFSUPPORT the user set is left as it is.
void ask_python_for_perf_maps(bool wanted) {
  static const bool user_set = std::getenv("PYTHONPERFSUPPORT") != nullptr;
  if (user_set) return;
  if (wanted) {
    setenv("PYTHONPERFSUPPORT", "1", 1);
  } else {
    unsetenv("PYTHONPERFSUPPORT");
  }
}

}  // namespace

bool command_runs_python(const std::vector<std::string>& command) {
  const std::string program = command_program(command);
  if (program.empty()) return false;
  if (std::filesystem::path(program).filename().string().rfind("python", 0) == 0) return true;
  // A script whose #! line names a Python interpreter.
  std::ifstream in(program, std::ios::binary);
  std::string first(256, '\0');
  in.read(first.data(), static_cast<std::streamsize>(first.size()));
  first.resize(static_cast<size_t>(in.gcount()));
  first = first.substr(0, first.find('\n'));
  return first.rfind("#!", 0) == 0 && first.find("python") != std::string::npos;
}

Result<SampledRun> sample_with_fallback(const std::vector<std::string>& command,
                                        const sampler::SamplerOptions& given,
                                        const std::string& choice, sampler::SampleErrorKind* kind) {
  sampler::SamplerOptions options = given;
  if (options.find_python_runtime) options.wake_per_sample = command_runs_python(command);
  auto in_process_run = [&] {
    ask_python_for_perf_maps(true);
    return import::sample_command_in_process(command, options, sampler::find_sigprof_library(),
                                             kind);
  };
  SampledRun run;
  run.in_process = choice == "in-process";
  auto perf_run = [&] {
    ask_python_for_perf_maps(!python_frames_read_from_memory(command_program(command)));
    return sampler::sample_command(command, options, kind);
  };
  auto raw = run.in_process ? in_process_run() : perf_run();
  if (!raw && *kind == sampler::SampleErrorKind::kPerfUnavailable && choice == "auto") {
    // sample_command gave up before the child exec'd: the command runs once.
    std::fprintf(stderr, "strata: %s; sampling in-process (LD_PRELOAD) instead\n",
                 raw.error().message.c_str());
    run.in_process = true;
    raw = in_process_run();
  }
  STRATA_ASSIGN_OR_RETURN(run.raw, std::move(raw));
  return run;
}

namespace {

// "1 ms", "10 µs": one sampling period.
std::string format_period(uint64_t ns) {
  if (ns % 1'000'000 == 0) return std::to_string(ns / 1'000'000) + " ms";
  if (ns % 1'000 == 0) return std::to_string(ns / 1'000) + " µs";
  return std::to_string(ns) + " ns";
}

// Says where the samples asked for went when more than a tenth of them was
// not recorded, and warns when sampling cost the target more than 10 %
// (sampler::sampling_slowdown says how that is measured).
void print_sample_account(const sampler::RawProfile& raw) {
  const sampler::SampleAccount a = sampler::account_samples(raw);
  if (a.asked == 0) return;  // in-process sampling: no cpu-clock count
  if (a.recorded * 10 < a.asked * 9) {
    std::fprintf(
        stderr,
        "strata: effective rate %.0f Hz of the %u Hz asked: of %llu periods of on-CPU "
        "time, %llu samples recorded, %llu lost (ring buffers full), %llu throttled, "
        "%llu skipped by the kernel (periods ending in kernel mode or while it was "
        "still taking the previous sample)\n",
        a.effective_hz, raw.frequency_hz, static_cast<unsigned long long>(a.asked),
        static_cast<unsigned long long>(a.recorded), static_cast<unsigned long long>(a.lost),
        static_cast<unsigned long long>(a.throttled), static_cast<unsigned long long>(a.skipped));
  }
  const double slowdown = sampler::sampling_slowdown(raw, a);
  const double cpu_s = static_cast<double>(raw.user_ns + raw.sys_ns) / 1e9;
  if (slowdown > 0.10) {
    std::fprintf(stderr,
                 "strata: warning: sampling at %u Hz slowed the target by about %.0f %% (the "
                 "kernel took samples for %.3f s of its %.3f s of CPU time); lower -F\n",
                 raw.frequency_hz, slowdown * 100, cpu_s * slowdown / (1 + slowdown), cpu_s);
  }
}

}  // namespace

void print_sampling_notes(const sampler::RawProfile& raw) {
  for (const auto& note : raw.notes) std::fprintf(stderr, "strata: %s\n", printable(note).c_str());
  print_sample_account(raw);
  const sampler::ProcessCount processes = sampler::count_processes(raw);
  if (processes.unsampled > 0 && raw.period_ns > 0) {
    std::fprintf(stderr,
                 "strata: %s, %zu too short to sample (less than one %s period of CPU time)\n",
                 plural(processes.processes, "process", "processes").c_str(), processes.unsampled,
                 format_period(raw.period_ns).c_str());
  }
  if (raw.signal) {
    const char* abbrev = sigabbrev_np(*raw.signal);
    std::fprintf(stderr,
                 "strata: the target was killed by signal %d (SIG%s); its profile is kept\n",
                 *raw.signal, abbrev ? abbrev : "?");
  }
}

namespace {

// Why a Python program's functions are missing, in one note naming the
// version found and what is required; and a note when many samples' Python
// stacks changed before they were read.
void note_python_names(const SampledRun& run, const BuiltProfile& built) {
  const auto& counters = built.counters;
  const uint64_t read = counters.python_stacks_merged + counters.python_stacks_mismatched;
  if (read >= 20 && counters.python_stacks_mismatched * 10 > read) {
    std::fprintf(stderr,
                 "strata: note: %llu of %llu samples' Python stacks changed before strata read "
                 "them and keep only the interpreter's frames (a busy machine delays the "
                 "reads)\n",
                 static_cast<unsigned long long>(counters.python_stacks_mismatched),
                 static_cast<unsigned long long>(read));
  }
  auto interpreter = analysis::interpreter_without_python_names(built.profile);
  if (!interpreter) return;
  std::string version = analysis::python_version_of(*interpreter);
  std::string problem;
  for (const auto& [pid, process] : run.raw.python_processes) {
    if (version.empty() && process.major == 3) version = "3." + std::to_string(process.minor);
    if (problem.empty()) problem = process.problem;
  }
  const int minor = version.size() > 2 ? std::atoi(version.c_str() + 2) : 0;
  const std::string name = printable(*interpreter);
  std::string why;
  if (run.in_process) {
    why =
        "the in-process sampler reads no Python stacks (it needs perf_event_open: --sampler "
        "perf)";
    if (minor >= 12) why += ", and the interpreter wrote no perf map (PYTHONPERFSUPPORT=0?)";
  } else if (!problem.empty()) {
    why = problem;
  } else if (sampler::python_layout(3, minor) != nullptr) {
    why = "no Python stack could be read from its memory (" +
          std::to_string(run.raw.counters.python_read_failures) + " reads failed, " +
          std::to_string(run.raw.counters.python_no_thread) + " found no Python thread)";
  } else if (minor > 0 && minor < 8) {
    why = std::string("strata reads the frames of CPython ") + sampler::python_layouts_known() +
          " from memory, and one this old writes no perf map";
  } else {
    why = std::string("strata reads the frames of CPython ") + sampler::python_layouts_known() +
          " from memory, and names later ones from the perf maps they write with "
          "PYTHONPERFSUPPORT=1: this one wrote none";
  }
  std::fprintf(stderr,
               "strata: note: %s is CPython %s, whose Python functions could not be named: %s; "
               "its time shows as the interpreter's C functions. Python names need CPython "
               "%s with its memory readable (ptrace access), or a perf map (CPython 3.12 or "
               "later, PYTHONPERFSUPPORT=1)\n",
               name.c_str(), version.empty() ? "(version unknown)" : version.c_str(),
               printable(why).c_str(), sampler::python_layouts_known());
}

}  // namespace

BuiltProfile build_sampled_profile(const SampledRun& run, uint32_t stack_bytes) {
  import::BuildOptions build;
  if (run.in_process) build.mode = analysis::ProfileMode::kInProcess;
  BuiltProfile built = import::build_profile(run.raw, build);
  if (built.counters.unwind_truncated > 0) {
    std::string python_whole;
    if (built.counters.python_whole_of_truncated > 0) {
      python_whole = "; the Python frames of " +
                     std::to_string(built.counters.python_whole_of_truncated) +
                     " of them, read from memory, are whole";
    }
    std::fprintf(stderr,
                 "strata: %llu stacks were deeper than the %u-byte stack copy and are cut short "
                 "(%s)%s\n",
                 static_cast<unsigned long long>(built.counters.unwind_truncated), stack_bytes,
                 stack_bytes < kLargestStackCopy ? "raise --stack-size, up to 65528"
                                                 : "65528 bytes is the most the kernel copies",
                 python_whole.c_str());
  }
  if (built.counters.unwind_max_frames > 0) {
    std::fprintf(stderr, "strata: %llu stacks had more than %zu frames and are cut short\n",
                 static_cast<unsigned long long>(built.counters.unwind_max_frames),
                 import::BuildOptions{}.max_frames);
  }
  note_python_names(run, built);
  return built;
}

Status write_sampled_profile(store::TraceWriter& writer, const BuiltProfile& built) {
  return import::store_profile(writer, built);
}

Status write_sample_account(store::TraceWriter& writer, const sampler::RawProfile& raw) {
  const sampler::SampleAccount a = sampler::account_samples(raw);
  if (a.asked == 0) return Ok{};
  const sampler::ProcessCount processes = sampler::count_processes(raw);
  for (auto [name, value] :
       {std::pair{"cpu.periods_asked", a.asked}, std::pair{"cpu.periods_throttled", a.throttled},
        std::pair{"cpu.periods_skipped", a.skipped},
        std::pair{"cpu.processes", uint64_t{processes.processes}},
        std::pair{"cpu.processes_unsampled", uint64_t{processes.unsampled}}}) {
    STRATA_TRY(writer.add_counter(name, static_cast<int64_t>(value)));
  }
  return Ok{};
}

}  // namespace strata::cli
