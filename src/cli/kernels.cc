// `strata kernels`: the ncu step (ncu --set basic --kernel-name ... --launch-skip
// --launch-count). Runs the command with libstrata_agent.so injected in its
// kernels mode (STRATA_AGENT_MODE=kernels, docs/kernels.md), which profiles the
// chosen launches with CUPTI's range profiler and writes kernel-metrics and
// kernels-seen chunks; ingests them into strata_kernel_metrics and
// strata_kernels_seen and prints ncu's sections for each profiled launch.
#include <regex.h>
#include <stdlib.h>

#include <CLI/CLI.hpp>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/agent_run.h"
#include "cli/kernel_report_print.h"
#include "cli/new_trace.h"
#include "cli/verbs.h"
#include "common/clock.h"
#include "common/strings.h"
#include "report/kernel_report.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

struct KernelsOptions {
  std::optional<std::string> kernel_name;
  std::optional<int64_t> launch_skip;
  std::optional<int64_t> launch_count;
  std::string sections = "sol,workload,launch,occupancy";
  std::string format = "table";
  std::string cache_control = "all";
  std::optional<std::string> metrics;  // --metrics: raw names beside the sections'
  std::optional<std::string> output;
  bool force = false;
  std::vector<std::string> command;
};

// What is wrong with a --metrics list, if anything: ncu's raw names
// (unit__counter.rollup...: letters, digits, '_' and '.', with a "__"), at
// most 16 (the agent's room, src/agent/config.h), comma-separated. Whether
// a name exists is CUPTI's to say, at the first profiled launch.
std::optional<std::string> metric_list_error(const std::string& list) {
  constexpr size_t kMaxNames = 16;
  size_t count = 0;
  for (size_t begin = 0; begin <= list.size();) {
    size_t end = list.find(',', begin);
    if (end == std::string::npos) end = list.size();
    const std::string name = list.substr(begin, end - begin);
    if (name.empty()) return "empty metric name";
    for (char c : name) {
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.') {
        return "'" + printable(name) + "' is not a metric name (letters, digits, _ and .)";
      }
    }
    if (name.find("__") == std::string::npos) {
      return "'" + name + "' is not a raw metric name such as sm__cycles_active.avg";
    }
    if (++count > kMaxNames) return "more than 16 metrics";
    begin = end + 1;
  }
  return std::nullopt;
}

// Why `pattern` does not compile as the agent compiles it (regcomp,
// REG_EXTENDED: agent/kernels/name_match.cc), or nullopt when it does. The
// same engine, so that a pattern accepted here cannot fail in the target.
std::optional<std::string> posix_regex_error(const std::string& pattern) {
  regex_t compiled;
  int rc = regcomp(&compiled, pattern.c_str(), REG_EXTENDED | REG_NOSUB);
  if (rc == 0) {
    regfree(&compiled);
    return std::nullopt;
  }
  char text[256];
  regerror(rc, &compiled, text, sizeof text);
  return std::string(text);
}

// The agent's comma list, in ncu's section order.
std::string agent_sections(const report::KernelSectionSet& sections) {
  std::string out;
  auto add = [&](analysis::KernelSection s, const char* name) {
    if (sections.count(s)) out += (out.empty() ? "" : ",") + std::string(name);
  };
  add(analysis::KernelSection::kSpeedOfLight, "sol");
  add(analysis::KernelSection::kWorkload, "workload");
  add(analysis::KernelSection::kLaunchStatistics, "launch");
  add(analysis::KernelSection::kOccupancy, "occupancy");
  return out;
}

std::string filter_text(const KernelsOptions& opt) {
  std::string out;
  auto add = [&](const std::string& part) { out += (out.empty() ? "" : ", ") + part; };
  if (opt.kernel_name) add("--kernel-name " + printable(*opt.kernel_name));
  if (opt.launch_skip) add("--launch-skip " + std::to_string(*opt.launch_skip));
  if (opt.launch_count) add("--launch-count " + std::to_string(*opt.launch_count));
  return out;
}

// Sets the agent's environment (docs/kernels.md); values from the caller's
// environment that would change what is profiled are removed.
void set_agent_env(const KernelsOptions& opt, const std::string& agent, const std::string& run_dir,
                   const report::KernelSectionSet& sections) {
  setenv("STRATA_RUN_DIR", run_dir.c_str(), 1);
  setenv("CUDA_INJECTION64_PATH", agent.c_str(), 1);
  setenv("STRATA_AGENT_MODE", "kernels", 1);
  auto set_or_clear = [](const char* name, const std::optional<std::string>& value) {
    if (value) {
      setenv(name, value->c_str(), 1);
    } else {
      unsetenv(name);
    }
  };
  set_or_clear("STRATA_KERNEL_NAME", opt.kernel_name);
  set_or_clear("STRATA_KERNEL_SKIP",
               opt.launch_skip ? std::optional(std::to_string(*opt.launch_skip)) : std::nullopt);
  set_or_clear("STRATA_KERNEL_COUNT",
               opt.launch_count ? std::optional(std::to_string(*opt.launch_count)) : std::nullopt);
  setenv("STRATA_KERNEL_SECTIONS", agent_sections(sections).c_str(), 1);
  set_or_clear("STRATA_KERNEL_METRICS", opt.metrics);
  // Always set, so that an inherited value never changes the replay.
  setenv("STRATA_KERNEL_CACHE_CONTROL", opt.cache_control.c_str(), 1);
  // NVTX ranges are of no use to this mode; a trace's injection is not inherited.
  unsetenv("NVTX_INJECTION64_PATH");
}

int run_kernels(const KernelsOptions& opt) {
  if (opt.kernel_name) {
    const std::string& name = *opt.kernel_name;
    if (name.empty() || name == "regex:") {
      return print_usage_error("--kernel-name: empty name (use NAME or regex:REGEX)");
    }
    if (name.rfind("regex:", 0) == 0) {
      if (auto why = posix_regex_error(name.substr(6))) {
        return print_usage_error("--kernel-name '" + printable(name) +
                                 "': not a regular expression (" + *why + ")");
      }
    }
  }
  if (opt.launch_skip && *opt.launch_skip < 0) {
    return print_usage_error("--launch-skip must not be negative, is " +
                             std::to_string(*opt.launch_skip));
  }
  if (opt.launch_count && *opt.launch_count < 1) {
    return print_usage_error("--launch-count must be at least 1, is " +
                             std::to_string(*opt.launch_count));
  }
  auto sections = report::parse_kernel_sections(opt.sections);
  if (!sections) return print_usage_error(sections.error().message);
  auto format = report::parse_format(opt.format);
  if (!format) return print_usage_error(format.error().message);
  if (opt.cache_control != "all" && opt.cache_control != "none") {
    return print_usage_error("--cache-control '" + printable(opt.cache_control) +
                             "': unknown value (use all or none)");
  }

  if (opt.metrics) {
    if (auto why = metric_list_error(*opt.metrics)) {
      return print_usage_error("--metrics '" + printable(*opt.metrics) + "': " + *why);
    }
  }

  auto agent = find_agent();
  if (!agent) {
    std::fprintf(stderr, "strata: %s\n", agent.error().message.c_str());
    return kExitFailed;
  }
  // Until the trace is committed, signals that would kill strata go to the
  // target instead, and what it recorded is written (docs/cli.md, Signals).
  SignalForwarder interrupts;
  auto new_trace = start_trace(opt.output, opt.force, "strata-kernels", "kernels", opt.command);
  NewTrace* trace = std::get_if<NewTrace>(&new_trace);
  if (trace == nullptr) return std::get<int>(new_trace);
  auto run_dir = make_run_dir();
  if (!run_dir) {
    std::fprintf(stderr, "strata: %s\n", run_dir.error().message.c_str());
    return kExitFailed;
  }
  set_agent_env(opt, *agent, *run_dir, *sections);

  int error_status = kExitFailed;
  auto result = run_forwarding_signals(opt.command, &error_status);
  trace->info.end_ns = realtime_ns();
  if (!result) {
    std::error_code ec;
    std::filesystem::remove_all(*run_dir, ec);
    std::fprintf(stderr, "strata: %s\n", result.error().message.c_str());
    return error_status;
  }
  auto ingested = ingest_agent_run(*run_dir, *result, *trace);
  if (!ingested) return kExitFailed;
  std::fprintf(stderr, "strata: trace written to %s\n", printable(trace->path()).c_str());

  int report_status = kExitOk;
  if (ingested->spools.empty()) {
    std::fprintf(stderr,
                 "strata: no kernel was profiled: no agent output was found (no CUDA device is "
                 "visible, the program made no CUDA call, another CUDA profiler held CUPTI, or "
                 "its CUDA runtime is linked statically without injection support)\n");
    if (*format == report::Format::kJson) std::fputs("{\"kernels\": []}\n", stdout);
  } else {
    auto reader = store::TraceReader::open(trace->path());
    if (!reader) {
      std::fprintf(stderr, "strata: %s\n", reader.error().message.c_str());
      report_status = kExitFailed;
    } else {
      KernelPrintContext context;
      context.filter = filter_text(opt);
      report_status = print_kernel_profiles(*reader, *sections, *format, context);
      if (report_status != kExitOk) report_status = kExitFailed;
    }
  }
  if (report_status != kExitOk) return exit_status_after_report(*result, report_status);
  return status_unless_interrupted(interrupts, result->shell_status());
}

}  // namespace

VerbRunner add_kernels(CLI::App& app) {
  auto opt = std::make_shared<KernelsOptions>();
  auto* sub = app.add_subcommand(
      "kernels", "Kernel metrics (ncu --set basic): profile chosen kernel launches of a command");
  sub->add_option("-k,--kernel-name", opt->kernel_name,
                  "Kernels to profile: NAME (the base function name or the mangled name) or "
                  "regex:REGEX (searched in the base name); default: all");
  sub->add_option("-s,--launch-skip", opt->launch_skip,
                  "Matching launches to skip before profiling (default 0)");
  sub->add_option("-c,--launch-count", opt->launch_count,
                  "Matching launches to profile (default: all)");
  sub->add_option("--section", opt->sections,
                  "Sections: sol, workload, launch, occupancy (comma-separated)")
      ->capture_default_str();
  sub->add_option("--format", opt->format, "Report format: table, csv or json")
      ->capture_default_str();
  sub->add_option("--cache-control", opt->cache_control,
                  "all: flush the instruction and L2 caches before every replay pass (strata's own "
                  "replay, as ncu --cache-control all); none: CUPTI's kernel replay, caches left "
                  "as it leaves them")
      ->capture_default_str();
  sub->add_option("--metrics", opt->metrics,
                  "Raw metrics to collect besides the sections' (ncu's names, comma-separated, "
                  "at most 16), printed under \"Command line profiler metrics\"");
  sub->add_option("-o,--output", opt->output, "Trace file (default: strata-kernelsN.sqlite)");
  sub->add_flag("--force", opt->force, "Overwrite the trace file if it exists");
  sub->add_option("command", opt->command, "-- CMD [ARGS...]")->required();
  sub->positionals_at_end(true);
  return [opt] { return run_kernels(*opt); };
}

}  // namespace strata::cli
