// `strata trace`: the nsys profile --stats step. Runs the command with
// libstrata_agent.so injected (CUDA_INJECTION64_PATH, NVTX_INJECTION64_PATH)
// and a private run directory for its spools (docs/agent.md), ingests the
// spools into the trace's nsys-schema tables and prints nsys's default
// reports from the trace. With cpu in --trace the same run is also sampled
// by the CPU layer (perf_event_open on CLOCK_MONOTONIC, the clock the agent
// points CUPTI at), so CPU samples and GPU activity share one timeline.
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/agent_run.h"
#include "cli/cpu_flags.h"
#include "cli/cpu_sampling.h"
#include "cli/gpu_report_print.h"
#include "cli/new_trace.h"
#include "cli/torch_hook.h"
#include "cli/verbs.h"
#include "common/build_info.h"
#include "common/clock.h"
#include "common/process.h"
#include "common/strings.h"
#include "report/registry.h"
#include "report/report_document.h"
#include "report/table.h"
#include "store/gpu_tables.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

struct TraceOptions {
  std::string trace = "cuda,nvtx,torch";
  bool record_shapes = false;
  int with_stack = 0;  // Python frames per PyTorch op; 0: none
  std::optional<std::string> output;
  bool force = false;
  std::string stats = "true";
  std::string format = "table";
  SamplingFlags sampling;
  std::vector<std::string> command;
};

// How the target ended, and its CPU profile when the cpu layer sampled it.
struct TargetRun : TargetExit {
  std::optional<BuiltProfile> cpu;
};

// Runs the command (the agent's environment is set already), under the CPU
// sampler when `sampling` is given. The error is the one-line message and
// the exit status strata returns.
Result<TargetRun> run_target(const std::vector<std::string>& command,
                             const std::optional<sampler::SamplerOptions>& sampling,
                             const std::string& sampler_choice, int* error_status) {
  TargetRun run;
  if (!sampling) {
    STRATA_ASSIGN_OR_RETURN(static_cast<TargetExit&>(run),
                            run_forwarding_signals(command, error_status));
    return run;
  }
  // The sampler's signal forwarder (nested in run_trace's) reaches the child.
  sampler::SampleErrorKind kind = sampler::SampleErrorKind::kNone;
  auto sampled = sample_with_fallback(command, *sampling, sampler_choice, &kind);
  if (!sampled) {
    *error_status = kind == sampler::SampleErrorKind::kCannotStart ? kExitCannotStart : kExitFailed;
    return sampled.error();
  }
  run.exit_status = sampled->raw.exit_status;
  run.signal = sampled->raw.signal;
  print_sampling_notes(sampled->raw);
  run.cpu = build_sampled_profile(*sampled, sampling->stack_bytes);
  return run;
}

// nsys's default reports when the trace has CUDA data, with op_sum as
// torch.profiler's table when it has PyTorch ops (alone for CPU-only torch).
int add_trace_reports(const std::string& path, bool torch_ops, report::ReportDocument& document) {
  auto reader = store::TraceReader::open(path);
  auto present = reader ? store::cuda_data_present(*reader) : Result<bool>(reader.error());
  if (!present) {
    std::fprintf(stderr, "strata: %s\n", printable(present.error().message).c_str());
    return kExitFailed;
  }
  std::optional<report::GpuReport> torch_table;
  if (torch_ops) {
    int status = kExitOk;
    torch_table = torch_op_report(*reader, path, TorchOpFlags{}, document.format(), &status);
    if (!torch_table) return kExitFailed;
  }
  if (*present) {
    std::vector<std::string> names = report::default_gpu_reports();
    if (torch_table) std::erase(names, std::string("op_sum"));
    GpuReportInput input;
    if (int status = load_gpu_reports(*reader, names, input); status != kExitOk) return status;
    add_gpu_reports(*reader, input, document);
  }
  if (torch_table) add_torch_op_report(*torch_table, document);
  return kExitOk;
}

int run_trace(const TraceOptions& opt) {
  bool cuda = false, nvtx = false, cpu = false, torch = false;
  for (const auto& layer : split_commas(opt.trace)) {
    if (layer == "cuda") {
      cuda = true;
    } else if (layer == "nvtx") {
      nvtx = true;
    } else if (layer == "cpu") {
      cpu = true;
    } else if (layer == "torch") {
      torch = true;
    } else {
      std::fprintf(stderr,
                   "strata: --trace '%s': unknown layer (supported: cuda, nvtx, cpu, torch)\n",
                   printable(layer).c_str());
      return kExitUsage;
    }
  }
  if (!cuda && nvtx) {
    // NVTX ranges reach the spool through CUPTI, which the CUDA layer sets up.
    std::fprintf(stderr, "strata: --trace nvtx needs cuda as well (--trace cuda,nvtx)\n");
    return kExitUsage;
  }
  if (!cuda) {
    std::fprintf(stderr, "strata: --trace needs cuda (for the CPU layer alone use strata cpu)\n");
    return kExitUsage;
  }
  if (opt.with_stack < 0 || opt.with_stack > 64) {
    std::fprintf(stderr, "strata: --with-stack=%d: use 1 to 64 Python frames\n", opt.with_stack);
    return kExitUsage;
  }
  if (!torch && (opt.record_shapes || opt.with_stack > 0)) {
    std::fprintf(stderr, "strata: --record-shapes and --with-stack need torch in --trace\n");
    return kExitUsage;
  }
  std::optional<sampler::SamplerOptions> sampling;
  if (cpu) {
    auto so = sampler_options(opt.sampling);
    if (!so) return print_usage_error(so.error().message);
    sampling = *so;
  }
  bool stats;
  if (opt.stats == "true") {
    stats = true;
  } else if (opt.stats == "false") {
    stats = false;
  } else {
    std::fprintf(stderr, "strata: --stats '%s': use true or false\n", printable(opt.stats).c_str());
    return kExitUsage;
  }
  auto format = report::parse_format(opt.format);
  if (!format) return print_usage_error(format.error().message);
  auto agent = find_agent();
  if (!agent) {
    std::fprintf(stderr, "strata: %s\n", agent.error().message.c_str());
    return kExitFailed;
  }
  // Until the trace is committed, signals that would kill strata go to the
  // target instead, and what it recorded is written (docs/cli.md, Signals).
  SignalForwarder interrupts;
  auto new_trace = start_trace(opt.output, opt.force, "strata-trace", "trace", opt.command);
  NewTrace* trace = std::get_if<NewTrace>(&new_trace);
  if (trace == nullptr) return std::get<int>(new_trace);
  store::TraceWriter& writer = trace->writer;
  store::RunInfo& info = trace->info;
  auto run_dir = make_run_dir();
  if (!run_dir) {
    std::fprintf(stderr, "strata: %s\n", run_dir.error().message.c_str());
    return kExitFailed;
  }
  setenv("STRATA_RUN_DIR", run_dir->c_str(), 1);
  setenv("CUDA_INJECTION64_PATH", agent->c_str(), 1);
  if (nvtx) setenv("NVTX_INJECTION64_PATH", agent->c_str(), 1);
  unsetenv("STRATA_AGENT_MODE");  // an inherited "kernels" would turn tracing off

  // PyTorch ops: every Python process of the command runs the hook, which
  // records only once the program imports torch (docs/torch-ops.md).
  clear_torch_env();
  if (torch) {
    if (auto hook = find_torch_hook()) {
      set_torch_env(*hook, *run_dir, TorchHookOptions{opt.record_shapes, opt.with_stack});
    } else {
      std::fprintf(stderr, "strata: PyTorch ops are not recorded: %s\n",
                   hook.error().message.c_str());
    }
  }

  int error_status = kExitFailed;
  auto result = run_target(opt.command, sampling, opt.sampling.sampler, &error_status);
  info.end_ns = realtime_ns();
  std::error_code ec;
  if (!result) {
    fs::remove_all(*run_dir, ec);
    std::fprintf(stderr, "strata: %s\n", result.error().message.c_str());
    return error_status;
  }
  auto ingested = ingest_agent_run(*run_dir, *result, *trace, [&]() -> Status {
    if (result->cpu) return write_sampled_profile(writer, *result->cpu);
    return Ok{};
  });
  if (!ingested) return kExitFailed;
  const std::vector<std::string>& spools = ingested->spools;
  if (spools.empty() && ingested->torch_ops > 0) {
    std::fprintf(stderr,
                 "strata: no CUDA activity was recorded (the PyTorch program made no CUDA call)\n");
  } else if (spools.empty()) {
    std::fprintf(stderr,
                 "strata: no CUDA activity was recorded (the program made no CUDA call, or its "
                 "CUDA runtime is linked statically without injection support)\n");
  } else {
    if (ingested->stats.agent_dropped > 0) {
      std::fprintf(stderr,
                   "strata: the agent dropped %llu records or buffers (raise "
                   "STRATA_AGENT_BUFFER_COUNT; see strata_counters)\n",
                   static_cast<unsigned long long>(ingested->stats.agent_dropped));
    }
  }
  std::fprintf(stderr, "strata: trace written to %s\n", printable(trace->path()).c_str());

  // The reports are one document (report/report_document.h), as strata report prints them.
  int report_status = kExitOk;
  report::ReportDocument document(*format);
  if (stats && (!spools.empty() || ingested->torch_ops > 0)) {
    report_status = add_trace_reports(trace->path(), ingested->torch_ops > 0, document);
  }
  if (stats && result->cpu && report_status == kExitOk) {
    // The CPU layer's top functions (all of it: strata report FILE).
    CpuReportFlags top;
    top.limit = 15;
    top.format = opt.format;
    std::string text;
    report_status = render_cpu_profile_text(result->cpu->profile, top, &text);
    document.add("cpu", report::section_title("CPU Profile", "cpu"), std::move(text));
  }
  if (report_status == kExitOk && !document.empty()) {
    report_status = emit_document(document, DocumentOutput{});
  }
  if (report_status != kExitOk) return exit_status_after_report(*result, report_status);
  return status_unless_interrupted(interrupts, result->shell_status());
}

}  // namespace

VerbRunner add_trace(CLI::App& app) {
  auto opt = std::make_shared<TraceOptions>();
  auto* sub = app.add_subcommand(
      "trace", "CUDA/NVTX trace (nsys profile --stats): run a command with the GPU layers");
  sub->add_option("-t,--trace", opt->trace,
                  "Layers to trace: cuda, nvtx, torch, cpu (comma-separated; torch records "
                  "the ops of Python programs that import torch; cpu samples the CPU into the "
                  "same trace)")
      ->capture_default_str();
  sub->add_flag("--record-shapes", opt->record_shapes,
                "PyTorch ops: record input shapes (torch.profiler's record_shapes)");
  sub->add_flag("--with-stack{5}", opt->with_stack,
                "PyTorch ops: record the Python caller, N frames (--with-stack=N; default 5)");
  add_sampling_flags(sub, opt->sampling);
  sub->add_option("-o,--output", opt->output, "Trace file (default: strata-traceN.sqlite)");
  sub->add_flag("--force", opt->force, "Overwrite the trace file if it exists");
  sub->add_option("--stats", opt->stats, "Print nsys's default reports after the run: true|false")
      ->capture_default_str();
  sub->add_option("--format", opt->format, "Report format: table, csv or json")
      ->capture_default_str();
  sub->add_option("command", opt->command, "-- CMD [ARGS...]")->required();
  sub->positionals_at_end(true);
  return [opt] { return run_trace(*opt); };
}

}  // namespace strata::cli
