#include "report/gpu_reports.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "common/strings.h"

namespace strata::report {

namespace {

using analysis::IntStats;
using analysis::round1;

// nsys's "table" output cuts cells at 100 characters (seen in nsys 2025.4's
// cuda_gpu_kern_sum output in the seed); torch.profiler's table cuts names
// at max_name_column_width = 55.
constexpr size_t kNsysNameWidth = 100;
constexpr size_t kTorchNameWidth = 55;

std::string group_digits(std::string_view text) {
  std::string_view sign = text.substr(0, text.starts_with('-') ? 1 : 0);
  std::string_view digits = text.substr(sign.size());
  std::string out(sign);
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

class CellMaker {
 public:
  explicit CellMaker(const GpuReportOptions& options) : options_(options) {}

  // Exact: an int64 total may exceed a double's 53 bits.
  Cell integer(int64_t value) const {
    std::string text = std::to_string(value);
    if (options_.thousands_separators) text = group_digits(text);
    return Cell{std::move(text), static_cast<double>(value)};
  }
  Cell decimal1(double value) const {
    return number_cell(round1(value), 1, options_.thousands_separators);
  }
  Cell megabytes(double bytes) const {
    return number_cell(bytes / 1e6, 3, options_.thousands_separators);
  }
  Cell name(const std::string& text, size_t width, const char* ellipsis) const {
    if (options_.format != Format::kTable) return text_cell(text);
    return text_cell(fit_name(text, width, ellipsis));
  }
  Cell nsys_name(const std::string& text) const { return name(text, kNsysNameWidth, "…"); }

 private:
  GpuReportOptions options_;
};

std::string title(const char* display_name, const char* report) {
  return fmt::format(" ** {} ({}):", display_name, report);
}

GpuReport start(const char* display_name, const char* report, const std::string& missing,
                const std::string& source) {
  GpuReport r;
  r.table.title = title(display_name, report);
  if (!missing.empty()) r.skipped = fmt::format("SKIPPED: {} {}", printable(source), missing);
  return r;
}

// The eight statistics columns nsys's time summaries share.
std::vector<Column> time_columns(const char* count_name) {
  return {{"Time (%)"}, {"Total Time (ns)"}, {count_name}, {"Avg (ns)"},
          {"Med (ns)"}, {"Min (ns)"},        {"Max (ns)"}, {"StdDev (ns)"}};
}

std::vector<Cell> time_cells(const CellMaker& m, const analysis::SummaryRow& row) {
  const IntStats& s = row.stats;
  return {
      m.decimal1(row.time_percent), m.integer(s.total), m.integer(s.count), m.decimal1(s.mean),
      m.decimal1(s.median),         m.integer(s.min),   m.integer(s.max),   m.decimal1(s.stddev)};
}

GpuReport time_summary(const char* display_name, const char* report, const char* count_name,
                       const char* name_column, const analysis::GpuSummary& summary,
                       const std::string& source, const GpuReportOptions& options) {
  GpuReport r = start(display_name, report, summary.missing, source);
  CellMaker m(options);
  r.table.columns = time_columns(count_name);
  r.table.columns.push_back({name_column, Align::kLeft});
  for (const auto& row : summary.rows) {
    auto cells = time_cells(m, row);
    cells.push_back(m.nsys_name(row.name));
    r.table.rows.push_back(std::move(cells));
  }
  return r;
}

void note_left_out(GpuReport& r, const analysis::GpuSummary& summary) {
  if (summary.rows_left_out > 0) {
    r.notes.push_back(fmt::format(
        "note: {} memcpy rows have a copyKind missing from ENUM_CUDA_MEMCPY_OPER and are left "
        "out, as nsys leaves them out",
        summary.rows_left_out));
  }
}

// Queue statistics exist only where some launch queued; nsys prints NULL.
void stats_cells(const CellMaker& m, const IntStats& s, bool present, std::vector<Cell>& out) {
  if (!present) {
    for (int i = 0; i < 5; ++i) out.push_back(text_cell(""));
    return;
  }
  out.push_back(m.decimal1(s.mean));
  out.push_back(m.decimal1(s.median));
  out.push_back(m.integer(s.min));
  out.push_back(m.integer(s.max));
  out.push_back(m.decimal1(s.stddev));
}

Cell torch_share(int64_t part_ns, int64_t total_ns) {
  if (total_ns == 0) return text_cell("NaN");
  double percent = static_cast<double>(part_ns) * 100.0 / static_cast<double>(total_ns);
  return Cell{fmt::format("{:.2f}%", percent), percent};
}

Cell torch_time_cell(double ns) {
  double us = ns / 1e3;
  return Cell{torch_time(us), us};
}

}  // namespace

std::string torch_time(double us) {
  if (us >= 1e6) return fmt::format("{:.3f}s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.3f}ms", us / 1e3);
  return fmt::format("{:.3f}us", us);
}

std::string fit_name(const std::string& name, size_t width, const std::string& ellipsis) {
  std::string text = printable(name);
  // Character starts; an escape "\xNN" counts as four characters and is
  // never split, and neither is a UTF-8 sequence.
  std::vector<size_t> starts;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) starts.push_back(i);
  }
  if (starts.size() <= width) return text;
  size_t ellipsis_chars = 0;
  for (unsigned char c : ellipsis) ellipsis_chars += (c & 0xC0) != 0x80;
  size_t keep = width > ellipsis_chars ? width - ellipsis_chars : 0;
  size_t cut = starts[keep];
  // Back off to the start of an escape that the cut would split.
  size_t back = cut >= 3 ? cut - 3 : 0;
  for (size_t i = back; i < cut; ++i) {
    if (text[i] == '\\' && i + 1 < text.size() && text[i + 1] == 'x' && i + 4 > cut) cut = i;
  }
  return text.substr(0, cut) + ellipsis;
}

GpuReport cuda_api_sum_report(const analysis::GpuSummary& summary, const std::string& source,
                              const GpuReportOptions& options) {
  return time_summary("CUDA API Summary", "cuda_api_sum", "Num Calls", "Name", summary, source,
                      options);
}

GpuReport cuda_gpu_kern_sum_report(const analysis::GpuSummary& summary, const std::string& source,
                                   const GpuReportOptions& options) {
  return time_summary("CUDA GPU Kernel Summary", "cuda_gpu_kern_sum", "Instances", "Name", summary,
                      source, options);
}

GpuReport cuda_gpu_mem_time_sum_report(const analysis::GpuSummary& summary,
                                       const std::string& source, const GpuReportOptions& options) {
  GpuReport r = time_summary("CUDA GPU MemOps Summary (by Time)", "cuda_gpu_mem_time_sum", "Count",
                             "Operation", summary, source, options);
  note_left_out(r, summary);
  return r;
}

GpuReport cuda_gpu_mem_size_sum_report(const analysis::GpuSummary& summary,
                                       const std::string& source, const GpuReportOptions& options) {
  GpuReport r =
      start("CUDA GPU MemOps Summary (by Size)", "cuda_gpu_mem_size_sum", summary.missing, source);
  CellMaker m(options);
  r.table.columns = {{"Total (MB)"}, {"Count"},    {"Avg (MB)"},    {"Med (MB)"},
                     {"Min (MB)"},   {"Max (MB)"}, {"StdDev (MB)"}, {"Operation", Align::kLeft}};
  for (const auto& row : summary.rows) {
    const IntStats& s = row.stats;
    r.table.rows.push_back(
        {m.megabytes(static_cast<double>(s.total)), m.integer(s.count), m.megabytes(s.mean),
         m.megabytes(s.median), m.megabytes(static_cast<double>(s.min)),
         m.megabytes(static_cast<double>(s.max)), m.megabytes(s.stddev), m.nsys_name(row.name)});
  }
  note_left_out(r, summary);
  return r;
}

GpuReport nvtx_sum_report(const analysis::GpuSummary& summary, const std::string& source,
                          const GpuReportOptions& options) {
  GpuReport r = start("NVTX Range Summary", "nvtx_sum", summary.missing, source);
  CellMaker m(options);
  r.table.columns = time_columns("Instances");
  r.table.columns.push_back({"Style", Align::kLeft});
  r.table.columns.push_back({"Range", Align::kLeft});
  for (const auto& row : summary.rows) {
    auto cells = time_cells(m, row);
    cells.push_back(text_cell(row.style));
    cells.push_back(m.nsys_name(row.name));
    r.table.rows.push_back(std::move(cells));
  }
  return r;
}

GpuReport cuda_kern_exec_sum_report(const analysis::KernExecSummary& summary,
                                    const std::string& source, const GpuReportOptions& options) {
  GpuReport r = start("CUDA Kernel Launch & Exec Time Summary", "cuda_kern_exec_sum",
                      summary.missing, source);
  CellMaker m(options);
  r.table.columns = {{"PID"}, {"TID"}, {"DevId"}, {"Count"}, {"QCount"}};
  for (const char* prefix : {"T", "A", "Q", "K"}) {
    for (const char* stat : {"Avg", "Med", "Min", "Max", "StdDev"}) {
      r.table.columns.push_back({fmt::format("{}{} (ns)", prefix, stat)});
    }
  }
  r.table.columns.push_back({"API Name", Align::kLeft});
  r.table.columns.push_back({"Kernel Name", Align::kLeft});
  for (const auto& row : summary.rows) {
    std::vector<Cell> cells = {m.integer(row.pid), m.integer(row.tid), m.integer(row.device_id),
                               m.integer(row.count), m.integer(row.queue_count)};
    stats_cells(m, row.total, true, cells);
    stats_cells(m, row.api, true, cells);
    stats_cells(m, row.queue, row.queue_count > 0, cells);
    stats_cells(m, row.kernel, true, cells);
    cells.push_back(m.nsys_name(row.api_name));
    cells.push_back(m.nsys_name(row.kernel_name));
    r.table.rows.push_back(std::move(cells));
  }
  if (summary.kernels_unmatched > 0) {
    r.notes.push_back(fmt::format(
        "note: {} kernels have no launch call with their correlationId in the trace and are left "
        "out, as nsys's join leaves them out",
        summary.kernels_unmatched));
  }
  return r;
}

std::string strip_emit_nvtx_suffix(const std::string& name) {
  // torch.autograd.profiler.emit_nvtx names a range "aten::mm, seq = 12,
  // op_id = 40, sizes = [[8, 16], [16, 4]]" (1.13; 2.x adds "input_op_ids
  // = ..."): the op is the text before the first ", seq = " / ", op_id = " /
  // ", sizes = ".
  size_t cut = name.size();
  for (const char* suffix : {", seq = ", ", op_id = ", ", sizes = "}) {
    cut = std::min(cut, name.find(suffix));
  }
  return name.substr(0, cut);
}

static analysis::OpTable merge_emit_nvtx_rows(const analysis::OpTable& table) {
  analysis::OpTable merged = table;
  merged.rows.clear();
  std::map<std::string, size_t> at;
  for (const auto& row : table.rows) {
    std::string name = strip_emit_nvtx_suffix(row.name);
    auto [it, fresh] = at.emplace(name, merged.rows.size());
    if (fresh) {
      merged.rows.push_back(row);
      merged.rows.back().name = std::move(name);
      continue;
    }
    analysis::OpRow& into = merged.rows[it->second];
    into.calls += row.calls;
    into.self_cpu_ns += row.self_cpu_ns;
    into.cpu_total_ns += row.cpu_total_ns;
    into.self_gpu_ns += row.self_gpu_ns;
    into.gpu_total_ns += row.gpu_total_ns;
  }
  if (merged.rows.size() == table.rows.size()) return table;  // nothing to merge: keep the order
  // analysis::op_table's default order: self GPU desc, CPU total desc, name.
  std::sort(merged.rows.begin(), merged.rows.end(), [](const auto& a, const auto& b) {
    if (a.self_gpu_ns != b.self_gpu_ns) return a.self_gpu_ns > b.self_gpu_ns;
    if (a.cpu_total_ns != b.cpu_total_ns) return a.cpu_total_ns > b.cpu_total_ns;
    return a.name < b.name;
  });
  return merged;
}

GpuReport op_sum_report(const analysis::OpTable& nvtx_table, const std::string& source,
                        const GpuReportOptions& options) {
  const analysis::OpTable table = merge_emit_nvtx_rows(nvtx_table);
  GpuReport r =
      start("NVTX Op Summary, as torch.profiler key_averages()", "op_sum", table.missing, source);
  CellMaker m(options);
  r.table.columns = {{"Name"},       {"Self CPU %"},    {"Self CPU"},  {"CPU total %"},
                     {"CPU total"},  {"CPU time avg"},  {"Self CUDA"}, {"Self CUDA %"},
                     {"CUDA total"}, {"CUDA time avg"}, {"# of Calls"}};
  for (const auto& row : table.rows) {
    double calls = static_cast<double>(row.calls);
    r.table.rows.push_back({
        m.name(row.name, kTorchNameWidth, "..."),
        torch_share(row.self_cpu_ns, table.self_cpu_total_ns),
        torch_time_cell(static_cast<double>(row.self_cpu_ns)),
        torch_share(row.cpu_total_ns, table.self_cpu_total_ns),
        torch_time_cell(static_cast<double>(row.cpu_total_ns)),
        torch_time_cell(static_cast<double>(row.cpu_total_ns) / calls),
        torch_time_cell(static_cast<double>(row.self_gpu_ns)),
        torch_share(row.self_gpu_ns, table.self_gpu_total_ns),
        torch_time_cell(static_cast<double>(row.gpu_total_ns)),
        torch_time_cell(static_cast<double>(row.gpu_total_ns) / calls),
        m.integer(row.calls),
    });
  }
  if (table.missing.empty()) {
    r.notes.push_back("Self CPU time total: " +
                      torch_time(static_cast<double>(table.self_cpu_total_ns) / 1e3));
    r.notes.push_back("Self CUDA time total: " +
                      torch_time(static_cast<double>(table.self_gpu_total_ns) / 1e3));
    if (table.kernels_outside_ranges > 0) {
      r.notes.push_back(fmt::format("note: {} kernels were launched outside every NVTX range",
                                    table.kernels_outside_ranges));
    }
  }
  return r;
}

GpuReport torch_op_sum_report(const analysis::TorchOpTable& table,
                              const GpuReportOptions& options) {
  GpuReport r;
  r.table.title = " ** PyTorch Op Summary, as torch.profiler key_averages() (op_sum):";
  CellMaker m(options);
  // As torch's _build_table: the CUDA columns only when some event has CUDA
  // time (a CPU-only program's table has none).
  const bool cuda = table.self_cuda_total_ns > 0;
  r.table.columns = {{"Name", Align::kLeft}, {"Self CPU %"}, {"Self CPU"},
                     {"CPU total %"},        {"CPU total"},  {"CPU time avg"}};
  if (cuda) {
    for (const char* c : {"Self CUDA", "Self CUDA %", "CUDA total", "CUDA time avg"}) {
      r.table.columns.push_back({c});
    }
  }
  r.table.columns.push_back({"# of Calls"});
  if (table.shapes_column) r.table.columns.push_back({"Input Shapes", Align::kLeft});
  if (table.stack_column) r.table.columns.push_back({"Source Location", Align::kLeft});
  const bool text = options.format == Format::kTable;
  for (const auto& row : table.rows) {
    double calls = static_cast<double>(row.calls);
    std::vector<Cell> cells = {
        m.name(row.name, kTorchNameWidth, "..."),
        torch_share(row.self_cpu_ns, table.self_cpu_total_ns),
        torch_time_cell(static_cast<double>(row.self_cpu_ns)),
        torch_share(row.cpu_total_ns, table.self_cpu_total_ns),
        torch_time_cell(static_cast<double>(row.cpu_total_ns)),
        torch_time_cell(static_cast<double>(row.cpu_total_ns) / calls),
    };
    if (cuda) {
      cells.push_back(torch_time_cell(static_cast<double>(row.self_cuda_ns)));
      cells.push_back(torch_share(row.self_cuda_ns, table.self_cuda_total_ns));
      cells.push_back(torch_time_cell(static_cast<double>(row.cuda_total_ns)));
      cells.push_back(torch_time_cell(static_cast<double>(row.cuda_total_ns) / calls));
    }
    cells.push_back(m.integer(row.calls));
    if (table.shapes_column) cells.push_back(text_cell(printable(row.shapes)));
    if (table.stack_column) {
      // Table: torch's layout, one frame per line under the row; CSV and
      // JSON: the frames in one cell, one per line.
      std::string frames;
      for (size_t i = 0; i < row.stack.size() && (!text || i == 0); ++i) {
        frames += (i ? "\n" : "") + printable(row.stack[i]);
      }
      cells.push_back(text_cell(frames));
    }
    const size_t width = cells.size();
    r.table.rows.push_back(std::move(cells));
    if (table.stack_column && text) {
      for (size_t i = 1; i < row.stack.size(); ++i) {
        std::vector<Cell> more(width - 1, text_cell(""));
        more.push_back(text_cell(printable(row.stack[i])));
        r.table.rows.push_back(std::move(more));
      }
    }
  }
  r.notes.push_back("Self CPU time total: " +
                    torch_time(static_cast<double>(table.self_cpu_total_ns) / 1e3));
  if (cuda) {
    r.notes.push_back("Self CUDA time total: " +
                      torch_time(static_cast<double>(table.self_cuda_total_ns) / 1e3));
  }
  if (table.unlinked_device > 0) {
    r.notes.push_back(
        fmt::format("note: {} kernels, copies or memsets were launched outside every PyTorch op",
                    table.unlinked_device));
  }
  return r;
}

std::string render_gpu_report(const GpuReport& report, Format format) {
  if (format != Format::kTable) {
    if (!report.skipped.empty()) {
      Table empty = report.table;
      empty.rows.clear();
      return render(empty, format);
    }
    return render(report.table, format);
  }
  std::string out;
  if (!report.skipped.empty()) {
    out = report.table.title + "\n\n" + report.skipped + "\n";
  } else if (!report.header.empty()) {
    Table untitled = report.table;
    untitled.title.clear();
    out = printable(report.table.title) + "\n\n";
    for (const auto& line : report.header) out += printable(line) + '\n';
    // A header says what an empty table would (the diagnosis's verdict).
    if (!untitled.rows.empty()) out += '\n' + render(untitled, format);
  } else {
    out = render(report.table, format);
  }
  if (!report.notes.empty()) out += '\n';
  for (const auto& note : report.notes) out += note + '\n';
  return out;
}

}  // namespace strata::report
