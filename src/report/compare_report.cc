#include "report/compare_report.h"

#include <fmt/format.h>

#include <cmath>
#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "report/bench_report.h"

namespace strata::report {
namespace {

using analysis::SectionKind;

// A measure's columns: "NAME Base (UNIT)", "NAME New", "NAME Δ", "NAME Δ %";
// a section with one measure leaves NAME out. Values are divided by `scale`
// (the analysis keeps ns and bytes) to the unit the layer's report uses.
struct MeasureSpec {
  std::string name;
  std::string unit;
  double scale = 1;
  int decimals = 0;
  bool summable = true;  // a sum over rows means something (not for cumtime)
  bool shown = true;
};

struct SectionSpec {
  std::string title;
  std::vector<MeasureSpec> measures;
  std::string count;
  std::string name_column;
};

SectionSpec section_spec(SectionKind kind) {
  switch (kind) {
    case SectionKind::kCpuFunctions:
      return {"CPU functions (pstats' tottime and cumtime; ordered by the change of self time)",
              {{"Self", "ms", 1e6, 3, true}, {"Total", "ms", 1e6, 3, false}},
              "ncalls",
              "filename:lineno(function)"};
    case SectionKind::kTorchOps:
      return {"PyTorch ops (op_sum: torch.profiler's Self CPU and Self CUDA)",
              {{"Self CPU", "us", 1e3, 3, true}, {"Self CUDA", "us", 1e3, 3, true}},
              "Calls",
              "Name"};
    case SectionKind::kKernels:
      return {
          "CUDA GPU kernels (cuda_gpu_kern_sum)", {{"", "ns", 1, 0, true}}, "Instances", "Name"};
    case SectionKind::kCudaApi:
      return {"CUDA API calls (cuda_api_sum)", {{"", "ns", 1, 0, true}}, "Calls", "Name"};
    case SectionKind::kMemOps:
      return {"CUDA GPU memory operations (cuda_gpu_mem_time_sum, cuda_gpu_mem_size_sum)",
              {{"Time", "ns", 1, 0, true}, {"Size", "MB", 1e6, 3, true}},
              "Count",
              "Operation"};
    case SectionKind::kNvtx:
      break;
  }
  return {"NVTX ranges (nvtx_sum)", {{"", "ns", 1, 0, true}}, "Instances", "Range"};
}

// The section's spec less the measures after the first that are 0 on both
// sides (Self CUDA of a CPU-only PyTorch program): columns of zeros.
SectionSpec shown_spec(const analysis::SectionDiff& section) {
  SectionSpec spec = section_spec(section.kind);
  for (size_t i = 1; i < spec.measures.size(); ++i) {
    spec.measures[i].shown = section.diff.total_a[i] != 0 || section.diff.total_b[i] != 0;
  }
  return spec;
}

// What a layer is called in the notes about layers one side lacks.
std::string layer_name(SectionKind kind) {
  switch (kind) {
    case SectionKind::kCpuFunctions:
      return "a CPU profile";
    case SectionKind::kTorchOps:
      return "PyTorch ops";
    default:
      return "CUDA trace data";
  }
}

std::string prefixed(const MeasureSpec& m, const std::string& what) {
  if (m.name.empty()) return what == "total" ? "Total" : what;
  return m.name + " " + what;
}

// A change, with its sign: "+12", "-3.5". JSON keeps the number.
Cell signed_cell(double value, int decimals) {
  Cell c = number_cell(value, decimals);
  if (value > 0) c.text = "+" + c.text;
  return c;
}

// (B - A) / A in percent; "-" where A is 0 (an added row, or nothing to compare).
Cell percent_cell(double a, double b) {
  if (a == 0) return text_cell("-");
  return signed_cell(100.0 * (b - a) / a, 1);
}

std::string percent_text(double a, double b) {
  if (a == 0) return b == 0 ? "0.0 %" : "added";
  return fmt::format("{:+.1f} %", 100.0 * (b - a) / a);
}

std::string change_name(analysis::RowChange change) {
  switch (change) {
    case analysis::RowChange::kAdded:
      return "added";
    case analysis::RowChange::kRemoved:
      return "removed";
    case analysis::RowChange::kBoth:
      break;
  }
  return "";
}

std::string ratio_text(double ratio) {
  return fmt::format("{:.3f}x", ratio);
}

Cell ratio_cell(double ratio) {
  Cell c = number_cell(ratio, 3);
  c.text += "x";
  return c;
}

std::string p_text(double p) {
  return p < 0.0001 ? "p < 0.0001" : fmt::format("p = {:.4f}", p);
}

Cell p_cell(double p) {
  Cell c = number_cell(p, 4);
  if (p < 0.0001) c.text = "<0.0001";
  return c;
}

int confidence_percent(const analysis::RatioTest& test) {
  return static_cast<int>(std::lround(test.confidence * 100));
}

std::string describe(const analysis::CompareSide& side) {
  // The sides of `strata compare --vs` are the commands themselves.
  if (side.name.empty()) return printable(join_command(side.command));
  if (side.nsys_export) return printable(side.name) + ": an Nsight Systems export";
  std::string out = printable(side.name) + ": strata " + side.verb;
  if (!side.command.empty()) out += " of " + printable(join_command(side.command));
  return out;
}

std::string wall_title(const analysis::CompareSide& a, const analysis::WallComparison& wall) {
  size_t na = 0, nb = 0;
  for (const auto& q : wall.quantities) {
    if (q.name == analysis::kVerdictQuantity) {
      na = q.a.count;
      nb = q.b.count;
    }
  }
  if (a.wall_source == "bench") {
    return fmt::format(
        " ** Wall time ({} and {} measured runs; Welch's t-test on log values, {:.0f} % "
        "confidence interval of the ratio B/A):",
        na, nb, wall.confidence * 100);
  }
  return fmt::format(" ** Wall time (one `strata {}` run per side, from its start to its end):",
                     a.wall_source);
}

std::string wall_missing_note(const analysis::CompareSide& a, const analysis::CompareSide& b,
                              analysis::WallMissing missing) {
  auto holds = [](const analysis::CompareSide& s) -> std::string {
    if (s.wall.empty()) return s.nsys_export ? "none (an Nsight Systems export)" : "none";
    if (s.wall_source == "bench") return "bench runs";
    return "one `strata " + s.wall_source + "` run";
  };
  if (missing == analysis::WallMissing::kMeasuredApart) {
    return "wall time not compared: measured differently (A: " + holds(a) + ", B: " + holds(b) +
           ")";
  }
  return "wall time not compared: A has " + holds(a) + ", B has " + holds(b);
}

std::vector<std::string> wall_notes(const analysis::WallComparison& wall) {
  std::vector<std::string> notes;
  for (const auto& q : wall.quantities) {
    if (q.test) continue;
    std::string note = printable(q.name) + ": no significance test: " + q.untested;
    if (q.untested.rfind("one run", 0) == 0) {
      note += " (`strata bench -n N` or `strata compare --vs` measure several)";
    }
    notes.push_back(note);
  }
  return notes;
}

std::vector<std::string> section_notes(const analysis::Comparison& c,
                                       const analysis::SectionDiff& s) {
  const SectionSpec spec = shown_spec(s);
  const auto& d = s.diff;
  std::string totals;
  for (size_t i = 0; i < spec.measures.size(); ++i) {
    const MeasureSpec& m = spec.measures[i];
    if (!m.summable || !m.shown) continue;
    if (!totals.empty()) totals += "; ";
    totals += fmt::format("{}: {:.{}f} -> {:.{}f} {} ({})", prefixed(m, "total"),
                          d.total_a[i] / m.scale, m.decimals, d.total_b[i] / m.scale, m.decimals,
                          m.unit, percent_text(d.total_a[i], d.total_b[i]));
  }
  totals += fmt::format("; {}: {} -> {} ({:+d})", spec.count, d.count_a, d.count_b,
                        d.count_b - d.count_a);
  totals += fmt::format("; {} added, {} removed", d.added, d.removed);
  std::vector<std::string> notes = {totals};
  if (s.kind == SectionKind::kCpuFunctions && c.cpu_modes_differ) {
    notes.push_back(
        "one profile is sampled and the other exact (--instrument): ncalls count samples on "
        "one side and calls on the other");
  }
  if (d.rows.size() < d.total_rows) {
    notes.push_back(
        fmt::format("{} of {} rows shown (--limit 0 shows all)", d.rows.size(), d.total_rows));
  }
  return notes;
}

std::string one_sided_note(const std::pair<SectionKind, bool>& one) {
  return fmt::format("not compared: only {} holds {}", one.second ? "A" : "B",
                     layer_name(one.first));
}

nlohmann::ordered_json side_json(const analysis::CompareSide& side) {
  nlohmann::ordered_json j;
  j["name"] = side.name;
  j["kind"] = side.nsys_export ? "nsys export" : "strata " + side.verb;
  j["command"] = side.command;
  return j;
}

nlohmann::ordered_json table_json(const Table& t) {
  return nlohmann::ordered_json::parse(render(t, Format::kJson));
}

nlohmann::ordered_json verdict_json(const analysis::VerdictResult& v) {
  nlohmann::ordered_json j;
  j["verdict"] = std::string(analysis::verdict_name(v.verdict));
  j["quantity"] = std::string(analysis::kVerdictQuantity);
  if (v.wall && v.wall->ratio) j["ratio"] = *v.wall->ratio;
  if (v.wall && v.wall->test) {
    j["ci_low"] = v.wall->test->ci_low;
    j["ci_high"] = v.wall->test->ci_high;
    j["confidence"] = v.wall->test->confidence;
    j["p"] = v.wall->test->p;
  }
  j["alpha"] = analysis::kSignificanceLevel;
  j["min_change"] = v.min_change;
  j["reason"] = verdict_sentence(v);
  return j;
}

std::string render_json(const analysis::CompareSide& a, const analysis::CompareSide& b,
                        const analysis::Comparison& c) {
  nlohmann::ordered_json doc;
  doc["base"] = side_json(a);
  doc["new"] = side_json(b);
  if (c.wall) {
    nlohmann::ordered_json w;
    w["source"] = a.wall_source;
    w["test"] = "Welch's t-test on log values";
    w["confidence"] = c.wall->confidence;
    w["rows"] = table_json(compare_wall_table(*c.wall));
    w["notes"] = wall_notes(*c.wall);
    doc["wall"] = std::move(w);
  } else {
    doc["wall"] = nullptr;
  }
  for (const auto& s : c.sections) {
    const SectionSpec spec = shown_spec(s);
    nlohmann::ordered_json j;
    j["title"] = spec.title;
    j["rows"] = table_json(compare_section_table(s));
    j["notes"] = section_notes(c, s);
    j["total_rows"] = s.diff.total_rows;
    j["added"] = s.diff.added;
    j["removed"] = s.diff.removed;
    nlohmann::ordered_json totals = nlohmann::ordered_json::array();
    for (size_t i = 0; i < spec.measures.size(); ++i) {
      const MeasureSpec& m = spec.measures[i];
      if (!m.summable || !m.shown) continue;
      totals.push_back({{"measure", prefixed(m, "total") + " (" + m.unit + ")"},
                        {"base", s.diff.total_a[i] / m.scale},
                        {"new", s.diff.total_b[i] / m.scale},
                        {"delta", (s.diff.total_b[i] - s.diff.total_a[i]) / m.scale}});
    }
    j["totals"] = std::move(totals);
    j["count"] = {{"name", spec.count},
                  {"base", s.diff.count_a},
                  {"new", s.diff.count_b},
                  {"delta", s.diff.count_b - s.diff.count_a}};
    doc[std::string(analysis::section_key(s.kind))] = std::move(j);
  }
  nlohmann::ordered_json notes = nlohmann::ordered_json::array();
  if (!c.wall) notes.push_back(wall_missing_note(a, b, c.wall_missing));
  for (const auto& one : c.one_sided) notes.push_back(one_sided_note(one));
  doc["notes"] = std::move(notes);
  doc["verdict"] = verdict_json(c.verdict);
  return escape_json_del(
             doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) +
         "\n";
}

RenderedComparison render_csv(const analysis::CompareSide& a, const analysis::CompareSide& b,
                              const analysis::Comparison& c) {
  RenderedComparison r;
  auto section = [&](std::string_view key, const Table& t) {
    if (!r.out.empty()) r.out += "\n";
    r.out += fmt::format("# {}\n", key);
    r.out += render(t, Format::kCsv);
  };
  if (c.wall) {
    section("wall", compare_wall_table(*c.wall));
    for (auto& note : wall_notes(*c.wall)) r.notes.push_back(std::move(note));
  } else {
    r.notes.push_back(wall_missing_note(a, b, c.wall_missing));
  }
  for (const auto& s : c.sections) {
    section(analysis::section_key(s.kind), compare_section_table(s));
    for (auto& note : section_notes(c, s)) {
      r.notes.push_back(std::string(analysis::section_key(s.kind)) + ": " + note);
    }
  }
  for (const auto& one : c.one_sided) r.notes.push_back(one_sided_note(one));
  Table verdict;
  verdict.columns = {{"Verdict", Align::kLeft},
                     {"Quantity", Align::kLeft},
                     {"Ratio"},
                     {"CI Low"},
                     {"CI High"},
                     {"p"},
                     {"Reason", Align::kLeft}};
  const auto& v = c.verdict;
  std::vector<Cell> row = {text_cell(std::string(analysis::verdict_name(v.verdict))),
                           text_cell(std::string(analysis::kVerdictQuantity))};
  row.push_back(v.wall && v.wall->ratio ? ratio_cell(*v.wall->ratio) : text_cell("-"));
  if (v.wall && v.wall->test) {
    row.push_back(ratio_cell(v.wall->test->ci_low));
    row.push_back(ratio_cell(v.wall->test->ci_high));
    row.push_back(p_cell(v.wall->test->p));
  } else {
    for (int i = 0; i < 3; ++i) row.push_back(text_cell("-"));
  }
  row.push_back(text_cell(verdict_sentence(v)));
  verdict.rows.push_back(std::move(row));
  section("verdict", verdict);
  return r;
}

std::string render_text(const analysis::CompareSide& a, const analysis::CompareSide& b,
                        const analysis::Comparison& c) {
  std::string out = "strata compare: A is the base, B the new\n";
  out += "  A: " + describe(a) + "\n";
  out += "  B: " + describe(b) + "\n";
  auto notes = [&](const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    out += "\n";
    for (const auto& line : lines) out += line + "\n";
  };
  if (c.wall) {
    out += "\n" + wall_title(a, *c.wall) + "\n\n";
    const Table wall = compare_wall_table(*c.wall);
    out += render(wall, Format::kTable);
    std::vector<std::string> lines = wall_notes(*c.wall);
    if (drops_columns(wall)) {
      lines.push_back("means left out to fit " + std::to_string(text_width()) +
                      " columns: --wide, or --format csv/json, shows them");
    }
    notes(lines);
  } else {
    out += "\n" + wall_missing_note(a, b, c.wall_missing) + "\n";
  }
  for (const auto& s : c.sections) {
    out += "\n ** " + section_spec(s.kind).title + ":\n\n";
    out += render(compare_section_table(s), Format::kTable);
    notes(section_notes(c, s));
  }
  if (!c.one_sided.empty()) {
    out += "\n";
    for (const auto& one : c.one_sided) out += one_sided_note(one) + "\n";
  }
  out += "\nVerdict: " + verdict_sentence(c.verdict) + "\n";
  return out;
}

}  // namespace

Table compare_wall_table(const analysis::WallComparison& wall) {
  Table t;
  const std::string ci = fmt::format("{:.0f}% CI", wall.confidence * 100);
  t.columns = {{"Quantity", Align::kLeft},
               {"Unit", Align::kLeft},
               {"Base Runs"},
               {"New Runs"},
               {"Base Median"},
               {"New Median"},
               {"Base Mean", Align::kRight, nullptr, true},
               {"New Mean", Align::kRight, nullptr, true},
               {"Ratio"},
               {ci + " Low"},
               {ci + " High"},
               {"p"}};
  for (const auto& q : wall.quantities) {
    const int decimals = bench_decimals(q.unit);
    std::vector<Cell> row = {text_cell(q.name),
                             text_cell(q.unit),
                             number_cell(static_cast<double>(q.a.count), 0),
                             number_cell(static_cast<double>(q.b.count), 0),
                             number_cell(q.a.median, decimals),
                             number_cell(q.b.median, decimals),
                             number_cell(q.a.mean, decimals),
                             number_cell(q.b.mean, decimals)};
    row.push_back(q.ratio ? ratio_cell(*q.ratio) : text_cell("-"));
    if (q.test) {
      row.push_back(ratio_cell(q.test->ci_low));
      row.push_back(ratio_cell(q.test->ci_high));
      row.push_back(p_cell(q.test->p));
    } else {
      for (int i = 0; i < 3; ++i) row.push_back(text_cell("-"));
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

Table compare_section_table(const analysis::SectionDiff& section) {
  const SectionSpec spec = shown_spec(section);
  Table t;
  for (const auto& m : spec.measures) {
    if (!m.shown) continue;
    t.columns.push_back({prefixed(m, "Base") + " (" + m.unit + ")"});
    t.columns.push_back({prefixed(m, "New") + " (" + m.unit + ")"});
    t.columns.push_back({prefixed(m, "Δ") + " (" + m.unit + ")"});
    t.columns.push_back({prefixed(m, "Δ %")});
  }
  t.columns.push_back({"Base " + spec.count});
  t.columns.push_back({"New " + spec.count});
  t.columns.push_back({"Δ " + spec.count});
  t.columns.push_back({"Change", Align::kLeft});
  t.columns.push_back({spec.name_column, Align::kLeft});
  for (const auto& r : section.diff.rows) {
    std::vector<Cell> row;
    for (size_t i = 0; i < spec.measures.size(); ++i) {
      const MeasureSpec& m = spec.measures[i];
      if (!m.shown) continue;
      row.push_back(number_cell(r.a[i] / m.scale, m.decimals));
      row.push_back(number_cell(r.b[i] / m.scale, m.decimals));
      row.push_back(signed_cell((r.b[i] - r.a[i]) / m.scale, m.decimals));
      row.push_back(percent_cell(r.a[i], r.b[i]));
    }
    row.push_back(number_cell(static_cast<double>(r.count_a), 0));
    row.push_back(number_cell(static_cast<double>(r.count_b), 0));
    row.push_back(signed_cell(static_cast<double>(r.count_b - r.count_a), 0));
    row.push_back(text_cell(change_name(r.change)));
    row.push_back(text_cell(r.name));
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string verdict_sentence(const analysis::VerdictResult& v) {
  const std::string name(analysis::verdict_name(v.verdict));
  const auto& w = v.wall;
  if (v.verdict == analysis::Verdict::kUntested) {
    if (!w)
      return name + ": the wall time is not compared, and no verdict is drawn from the layers";
    return fmt::format(
        "{}: {} allows no significance test (B's wall time is {} A's); the layers' changes "
        "are listed, no verdict is drawn from them",
        name, w->untested, w->ratio ? ratio_text(*w->ratio) : std::string("-"));
  }
  const auto& test = *w->test;
  const std::string ci = fmt::format("{} % CI {}-{}", confidence_percent(test),
                                     ratio_text(test.ci_low), ratio_text(test.ci_high));
  const std::string ratio = ratio_text(*w->ratio);
  if (v.verdict == analysis::Verdict::kNoSignificantChange) {
    if (v.within_min_change) {
      return fmt::format(
          "{}: B's wall time is {} A's ({}, {}), a change smaller than the {:g} % --min-change",
          name, ratio, ci, p_text(test.p), v.min_change * 100);
    }
    return fmt::format("{}: B's wall time is {} A's ({}, {} >= {:g})", name, ratio, ci,
                       p_text(test.p), analysis::kSignificanceLevel);
  }
  return fmt::format(
      "{}: B's wall time is {} A's, {} ({}, {}; Welch's t-test on log times, {} and {} runs)", name,
      ratio, percent_text(1, *w->ratio), ci, p_text(test.p), w->a.count, w->b.count);
}

std::string gate_sentence(const analysis::VerdictResult& v, const analysis::GateResult& gate,
                          double percent) {
  const std::string flag = fmt::format("--gate {:g}", percent);
  if (!gate.checked) {
    if (!v.wall) return flag + ": not checked: the wall time is not compared";
    return flag + ": not checked: " + v.wall->untested + " allows no significance test";
  }
  const auto& test = *v.wall->test;
  const std::string numbers =
      fmt::format("B's wall time is {} A's, {} ({} % CI {}-{}, {})", ratio_text(*v.wall->ratio),
                  percent_text(1, *v.wall->ratio), confidence_percent(test),
                  ratio_text(test.ci_low), ratio_text(test.ci_high), p_text(test.p));
  if (gate.failed) {
    return flag + ": failed: " + numbers +
           fmt::format(": significantly more than {:g} % slower", percent);
  }
  if (test.p >= analysis::kSignificanceLevel) {
    return flag + ": passed: " + numbers +
           fmt::format(": not significant (p >= {:g})", analysis::kSignificanceLevel);
  }
  return flag + ": passed: " + numbers + fmt::format(": within {:g} %", percent);
}

RenderedComparison render_comparison(const analysis::CompareSide& a, const analysis::CompareSide& b,
                                     const analysis::Comparison& comparison, Format format) {
  switch (format) {
    case Format::kJson:
      return {render_json(a, b, comparison), {}};
    case Format::kCsv:
      return render_csv(a, b, comparison);
    case Format::kTable:
      break;
  }
  return {render_text(a, b, comparison), {}};
}

}  // namespace strata::report
