#include "cli/diagnose_print.h"

#include <charconv>
#include <cstdio>

#include "analysis/cpu_profile_rows_convert.h"
#include "analysis/diagnose_thresholds.h"
#include "analysis/diagnose_verdict.h"
#include "analysis/kernel_profile.h"
#include "cli/verbs.h"
#include "common/strings.h"
#include "report/diagnosis_report.h"
#include "store/cpu_profile_rows.h"
#include "store/diagnose_rows.h"
#include "store/gpu_tables.h"
#include "store/kernel_metric_rows.h"
#include "store/torch_op_rows.h"

namespace strata::cli {
namespace {

// The verdict's input from the trace; errors name the file.
Result<analysis::VerdictInput> load_input(const store::TraceReader& reader) {
  analysis::VerdictInput in;
  const std::string name = printable(reader.path());
  STRATA_ASSIGN_OR_RETURN(store::DiagnoseRecord record, store::read_diagnose_record(reader));
  in.layers = std::move(record.layers);
  for (const auto& [key, value] : record.settings) {
    if (key == "range") {
      in.range = value;
    } else if (key == "budget_s") {
      double seconds = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
      if (ec != std::errc() || end != value.data() + value.size()) {
        return make_error(name + ": strata_diagnose_settings: budget_s '" + printable(value) +
                          "' is not a number");
      }
      in.budget_s = seconds;
    } else if (auto set = analysis::set_threshold(in.thresholds, key, value); !set) {
      return make_error(name + ": strata_diagnose_settings: " + set.error().message);
    }
  }
  STRATA_ASSIGN_OR_RETURN(in.bench, reader.bench_runs());
  STRATA_ASSIGN_OR_RETURN(auto cpu_rows, store::read_cpu_profile(reader));
  if (cpu_rows) in.cpu = analysis::from_rows(*cpu_rows);
  STRATA_ASSIGN_OR_RETURN(bool cuda, store::cuda_data_present(reader));
  if (cuda) {
    store::GpuLoadOptions load;
    load.timeline = true;
    STRATA_ASSIGN_OR_RETURN(in.gpu, store::load_gpu_tables(reader.handle(), reader.path(), load));
  }
  STRATA_ASSIGN_OR_RETURN(bool torch, store::torch_ops_present(reader));
  if (torch) {
    STRATA_ASSIGN_OR_RETURN(in.ops, store::load_torch_op_rows(reader));
  }
  STRATA_ASSIGN_OR_RETURN(bool profiled, store::kernel_profiles_present(reader));
  if (profiled) {
    STRATA_ASSIGN_OR_RETURN(auto launches, store::read_profiled_launches(reader));
    in.kernels = analysis::analyze_profiled_launches(launches);
  }
  return in;
}

}  // namespace

Result<bool> is_diagnose_trace(const store::TraceReader& reader) {
  return store::diagnose_record_present(reader);
}

Result<analysis::DiagnoseVerdict> load_verdict(const store::TraceReader& reader) {
  STRATA_ASSIGN_OR_RETURN(auto input, load_input(reader));
  return analysis::build_verdict(input);
}

int print_diagnose_verdict(const std::string& path, report::Format format,
                           const std::optional<std::string>& range) {
  auto reader = store::TraceReader::open(path);
  if (!reader) return print_usage_error(printable(reader.error().message));
  auto input = load_input(*reader);
  if (!input) return print_usage_error(printable(input.error().message));
  if (range) input->range = range;
  auto verdict = analysis::build_verdict(*input);
  if (!verdict) return print_usage_error(printable(verdict.error().message));
  std::fputs(report::render_verdict(*verdict, path, format).c_str(), stdout);
  return kExitOk;
}

}  // namespace strata::cli
