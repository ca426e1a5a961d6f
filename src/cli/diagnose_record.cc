#include "cli/diagnose_record.h"

#include <stdlib.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <unordered_map>

#include "cli/cpu_sampling.h"
#include "cli/verbs.h"
#include "common/clock.h"
#include "common/strings.h"
#include "store/trace_db.h"

#ifdef STRATA_DIAGNOSE_GPU_LAYERS
#include <fmt/format.h>

#include "analysis/diagnose_verdict.h"
#include "cli/agent_run.h"
#include "cli/torch_hook.h"
#include "import/cupti_ingest.h"
#include "import/spool_files.h"
#include "store/gpu_tables.h"
#include "store/kernel_names.h"
#endif

namespace strata::cli {
namespace {

namespace fs = std::filesystem;

struct SampledTarget {
  RecordedExit target;
  import::BuiltProfile cpu;
};

// The command under the CPU sampler with `strata cpu`'s defaults (perf
// events, or the in-process sampler where they are refused). Signals sent
// to strata reach the target through the sampler's forwarder.
Result<SampledTarget> sample_target(const std::vector<std::string>& command, int* error_status) {
  // A Python program's stacks are deep (imports nest, and with perf maps on
  // each Python frame is several native ones): at strata cpu's 16 KB copy
  // 44 % of a PyTorch program's stacks were cut on the H200, 3.7 % at the
  // largest copy (bench/results/python_torch_stacks-h200-2026-12-04.txt,
  // perf maps on, as strata ran 3.12 then), and a cut stack loses the
  // imports and callers the start-up and CPU findings name. Without perf
  // maps (frames read from memory) the stacks are shallower, and a cut one
  // keeps its Python frames whole: whether the smaller copy (and its lower
  // cost) then suffices is for the next H200 run to say.
  SamplingFlags flags;
  if (command_runs_python(command)) flags.stack_bytes = kLargestStackCopy;
  auto options = sampler_options(flags);
  if (!options) {
    *error_status = kExitFailed;
    return options.error();
  }
  sampler::SampleErrorKind kind = sampler::SampleErrorKind::kNone;
  auto sampled = sample_with_fallback(command, *options, flags.sampler, &kind);
  if (!sampled) {
    *error_status = kind == sampler::SampleErrorKind::kCannotStart ? kExitCannotStart : kExitFailed;
    return sampled.error();
  }
  print_sampling_notes(sampled->raw);
  SampledTarget out;
  out.target.exit_status = sampled->raw.exit_status;
  out.target.signal = sampled->raw.signal;
  out.cpu = build_sampled_profile(*sampled, flags.stack_bytes);
  return out;
}

store::DiagnoseLayerRow layer(const char* name, bool ran, std::string reason,
                              int64_t elapsed_ns = 0) {
  return {name, ran, std::move(reason), elapsed_ns};
}

#ifdef STRATA_DIAGNOSE_GPU_LAYERS

// The recorded run's GPU tables, read from a scratch trace of its spools:
// what decides whether the kernel metrics are worth a run. The scratch file
// lives in the run directory and goes with it.
Result<store::GpuTables> scratch_gpu_tables(const std::string& run_dir,
                                            const std::vector<std::string>& spools) {
  const std::string path = run_dir + "/scratch.sqlite";
  STRATA_ASSIGN_OR_RETURN(auto writer, store::TraceWriter::create(path, true));
  STRATA_TRY(import::ingest_spools(spools, writer));
  STRATA_TRY(writer.commit());
  STRATA_ASSIGN_OR_RETURN(auto reader, store::TraceReader::open(path));
  store::GpuLoadOptions load;
  load.timeline = true;
  return store::load_gpu_tables(reader.handle(), path, load);
}

// The scratch trace's kernels, demangled name -> mangled name: what the
// agent is asked for, so that one template instantiation is profiled and
// not whichever of its siblings launches first. `demangled` is
// scratch_gpu_tables' load of the same file; only the mangled names are read.
std::unordered_map<std::string, std::string> scratch_mangled_names(
    const std::string& run_dir, const store::GpuTables& demangled) {
  const std::string path = run_dir + "/scratch.sqlite";
  auto reader = store::TraceReader::open(path);
  if (!reader) return {};
  store::GpuLoadOptions load;
  load.tables = store::kKernelTable;
  load.kernel_links = false;
  load.kernel_names = store::KernelNameKind::kMangled;
  auto mangled = store::load_gpu_tables(reader->handle(), path, load);
  if (!mangled) return {};
  return store::mangled_kernel_names(demangled, *mangled);
}

// One kernels-mode run of the command profiling launch `skip` + 1 of the
// kernel `filter` names (a mangled name, or a base name); its spools stay
// in the returned directory.
Result<std::string> profile_kernel(const std::vector<std::string>& command,
                                   const std::string& agent, const std::string& filter,
                                   int64_t skip, int* error_status) {
  STRATA_ASSIGN_OR_RETURN(std::string run_dir, make_run_dir());
  setenv("STRATA_RUN_DIR", run_dir.c_str(), 1);
  setenv("CUDA_INJECTION64_PATH", agent.c_str(), 1);
  setenv("STRATA_AGENT_MODE", "kernels", 1);
  setenv("STRATA_KERNEL_NAME", filter.c_str(), 1);
  setenv("STRATA_KERNEL_SKIP", std::to_string(skip).c_str(), 1);
  setenv("STRATA_KERNEL_COUNT", "1", 1);
  setenv("STRATA_KERNEL_SECTIONS", "sol,workload,launch,occupancy", 1);
  unsetenv("STRATA_KERNEL_METRICS");
  setenv("STRATA_KERNEL_CACHE_CONTROL", "all", 1);
  unsetenv("NVTX_INJECTION64_PATH");
  clear_torch_env();
  auto ran = run_forwarding_signals(command, error_status);
  unsetenv("STRATA_AGENT_MODE");
  if (!ran) {
    std::error_code ec;
    fs::remove_all(run_dir, ec);
    return ran.error();
  }
  return run_dir;
}

// The kernels layer: skipped when the timeline explains the time, when no
// kernel ran, or when the budget is spent; else one run per top kernel.
void kernel_layer(const RecordRequest& request, const std::string& agent,
                  const std::vector<std::string>& spools, Recording& rec) {
  if (spools.empty()) {
    rec.layers.push_back(layer("kernels", false, "no kernel ran: nothing to measure"));
    return;
  }
  auto tables = scratch_gpu_tables(rec.run_dirs.front(), spools);
  if (!tables) {
    rec.layers.push_back(
        layer("kernels", false,
              "the recorded run's GPU tables could not be read: " + tables.error().message));
    return;
  }
  analysis::Diagnosis d = analysis::diagnose_gpu_trace(*tables, request.thresholds);
  if (!d.idle.has_activity) {
    rec.layers.push_back(layer("kernels", false,
                               "no kernel, copy or memset ran on a GPU (no CUDA device, or the "
                               "program made no GPU work)"));
    return;
  }
  if (analysis::explained_before_kernels(d)) {
    rec.layers.push_back(layer("kernels", false,
                               "the timeline explains the time (" + d.findings.front().rule +
                                   "): kernel metrics would not change the verdict"));
    return;
  }
  const auto names =
      analysis::top_kernels(*tables, request.top_kernels, request.thresholds.kernel_share);
  // The middle launch of each, not the first: a program's first launch is
  // often a warm-up on no data (the planted memory-bound program's is), and
  // its metrics would describe nothing the loop does.
  std::map<std::string, int64_t> launches;
  for (size_t i = 0; i < tables->kernels.size(); ++i) {
    if (const std::string* n = tables->string(tables->kernels.name_id[i])) ++launches[*n];
  }
  // The agent matches a name against the mangled name, then the base name
  // (ncu's --kernel-name-base function: "(anonymous namespace)::add(float*)"
  // is "add"); a whole demangled name matched no launch (the planted
  // memory-bound kernels on the H200). The mangled name is exact: by base
  // name, kernels that share one (a template at two arguments, PyTorch's
  // elementwise kernels) got the profile of the first to launch, and the
  // middle launch was counted among all of them.
  const auto mangled = scratch_mangled_names(rec.run_dirs.front(), *tables);
  std::vector<std::string> profiled, skipped;
  double left = request.seconds_left;
  const int64_t start = monotonic_ns();
  for (const auto& name : names) {
    if (request.seconds_per_kernel_run > left) {
      skipped.push_back(name);
      continue;
    }
    int status = kExitFailed;
    // A mangled name the agent cannot hold (agent/config.h's kMaxKernelName,
    // 1024 bytes with its NUL) falls back to the base name.
    const auto exact = mangled.find(name);
    const std::string filter = exact != mangled.end() && exact->second.size() < 1024
                                   ? exact->second
                                   : store::base_name(name);
    auto dir = profile_kernel(request.command, agent, filter, launches[name] / 2, &status);
    if (!dir) {
      std::fprintf(stderr, "strata: kernel metrics of %s: %s\n", printable(name).c_str(),
                   dir.error().message.c_str());
      skipped.push_back(name);
      continue;
    }
    rec.run_dirs.push_back(*dir);
    profiled.push_back(name);
    left -= request.seconds_per_kernel_run;
  }
  std::string reason;
  if (!profiled.empty()) {
    reason = fmt::format(
        "the GPU is busy and no timeline rule fired: metrics of the middle launch "
        "of {}",
        printable(profiled.front()));
    for (size_t i = 1; i < profiled.size(); ++i) reason += ", " + printable(profiled[i]);
  }
  if (!skipped.empty()) {
    reason += std::string(reason.empty() ? "" : "; ") + "--budget left no time for " +
              std::to_string(skipped.size()) + " kernel" + (skipped.size() == 1 ? "" : "s");
  }
  rec.layers.push_back(layer("kernels", !profiled.empty(), reason, monotonic_ns() - start));
}

#endif  // STRATA_DIAGNOSE_GPU_LAYERS

}  // namespace

#ifdef STRATA_DIAGNOSE_GPU_LAYERS

Result<Recording> record_layers(const RecordRequest& request, int* error_status) {
  *error_status = kExitFailed;
  STRATA_ASSIGN_OR_RETURN(std::string agent, find_agent());
  STRATA_ASSIGN_OR_RETURN(std::string run_dir, make_run_dir());
  Recording rec;
  rec.run_dirs.push_back(run_dir);
  // `strata trace --trace cuda,nvtx,torch,cpu`'s environment.
  setenv("STRATA_RUN_DIR", run_dir.c_str(), 1);
  setenv("CUDA_INJECTION64_PATH", agent.c_str(), 1);
  setenv("NVTX_INJECTION64_PATH", agent.c_str(), 1);
  unsetenv("STRATA_AGENT_MODE");
  clear_torch_env();
  auto hook = find_torch_hook();
  if (hook) set_torch_env(*hook, run_dir, TorchHookOptions{});
  const int64_t start = monotonic_ns();
  auto sampled = sample_target(request.command, error_status);
  const int64_t elapsed = monotonic_ns() - start;
  if (!sampled) {
    std::error_code ec;
    fs::remove_all(run_dir, ec);
    return sampled.error();
  }
  rec.target = sampled->target;
  rec.cpu = std::move(sampled->cpu);
  rec.layers.push_back(layer(
      "cpu", true, fmt::format("{} samples of the recorded run", rec.cpu->profile.samples.size()),
      elapsed));
  const auto spools = import::list_spools(run_dir, import::kAgentSpoolPrefix);
  rec.layers.push_back(
      spools.empty()
          ? layer("timeline", false,
                  "the program made no CUDA call: the agent recorded nothing (same run as cpu)")
          : layer("timeline", true, "CUDA calls, kernels, copies and NVTX ranges of the same run"));
  const bool torch_spools = !import::list_spools(run_dir, "torch-").empty();
  rec.layers.push_back(
      !hook          ? layer("ops", false, "PyTorch ops are not recorded: " + hook.error().message)
      : torch_spools ? layer("ops", true, "PyTorch ops of the same run")
                     : layer("ops", false, "the program did not import torch"));
  kernel_layer(request, agent, spools, rec);
  unsetenv("CUDA_INJECTION64_PATH");
  unsetenv("NVTX_INJECTION64_PATH");
  clear_torch_env();
  return rec;
}

bool commit_recording(Recording& rec, NewTrace& trace, const std::function<Status()>& write_rest) {
  trace.info.end_ns = realtime_ns();
  TargetExit target;
  target.exit_status = rec.target.exit_status;
  target.signal = rec.target.signal;
  auto ingested = ingest_agent_run(rec.run_dirs.front(), target, trace, [&]() -> Status {
    for (size_t i = 1; i < rec.run_dirs.size(); ++i) {
      STRATA_TRY(import::ingest_spools(
          import::list_spools(rec.run_dirs[i], import::kAgentSpoolPrefix), trace.writer));
    }
    if (rec.cpu) STRATA_TRY(write_sampled_profile(trace.writer, *rec.cpu));
    return write_rest();
  });
  for (size_t i = 1; i < rec.run_dirs.size(); ++i) {
    std::error_code ec;
    fs::remove_all(rec.run_dirs[i], ec);
  }
  return ingested.has_value();
}

#else  // the CPU layer alone

Result<Recording> record_layers(const RecordRequest& request, int* error_status) {
  Recording rec;
  const int64_t start = monotonic_ns();
  STRATA_ASSIGN_OR_RETURN(SampledTarget sampled, sample_target(request.command, error_status));
  rec.target = sampled.target;
  rec.cpu = std::move(sampled.cpu);
  rec.layers.push_back(layer(
      "cpu", true, std::to_string(rec.cpu->profile.samples.size()) + " samples of the recorded run",
      monotonic_ns() - start));
  const char* why = "this strata was built without CUDA (no agent, no PyTorch op recorder)";
  rec.layers.push_back(layer("timeline", false, why));
  rec.layers.push_back(layer("ops", false, why));
  rec.layers.push_back(layer("kernels", false, why));
  return rec;
}

bool commit_recording(Recording& rec, NewTrace& trace, const std::function<Status()>& write_rest) {
  trace.info.end_ns = realtime_ns();
  trace.info.exit_status = rec.target.exit_status;
  trace.info.signal = rec.target.signal;
  Status written = write_run_and_commit(trace, [&]() -> Status {
    if (rec.cpu) STRATA_TRY(write_sampled_profile(trace.writer, *rec.cpu));
    return write_rest();
  });
  if (!written) {
    std::fprintf(stderr, "strata: %s\n", printable(written.error().message).c_str());
    return false;
  }
  return true;
}

#endif

}  // namespace strata::cli
