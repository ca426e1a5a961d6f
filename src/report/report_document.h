// Several reports that one command prints (strata report, strata trace
// --stats), as one document: a JSON parser reads one value, a CSV reader one
// table per file or one titled section each (docs/reports.md, "One document").
//
//   table  the sections one after another, a blank line between them;
//   json   one object keyed by report name ({"cuda_api_sum": [...],
//          "op_sum": [...], "kernels": [...], "bench": {...}, "cpu": {...}}),
//          every section present even when its report has no rows;
//   csv    one section alone as it is; several each after a title line (nsys's
//          " ** CUDA API Summary (cuda_api_sum):") and a blank line; or, with
//          `-o DIR`, one file per report named as `nsys stats` names them:
//          DIR/BASE_REPORTNAME.csv (csv_files).
//
// Contract: a value type; sections keep the order they were first added in;
// adding a name again replaces that section's text.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "report/table.h"

namespace strata::report {

struct DocumentSection {
  std::string name;   // the report's name: the JSON key, the CSV file's suffix
  std::string title;  // the CSV title line, nsys's " ** Title (name):"
  std::string text;   // the report rendered in the document's format
};

class ReportDocument {
 public:
  explicit ReportDocument(Format format) : format_(format) {}

  Format format() const { return format_; }
  bool empty() const { return sections_.empty(); }
  const std::vector<DocumentSection>& sections() const { return sections_; }

  // `text` is the report rendered in format(): for JSON one value (a JSON
  // object whose only member is `name`, as {"kernels": [...]}, gives that
  // member). A table-format section with no text (nothing to say) is left out.
  void add(std::string name, std::string title, std::string text);

  // The whole document for stdout.
  std::string render() const;

  // CSV with -o DIR: (file name, contents) per section, the file named
  // BASE_NAME.csv as nsys stats names its outputs.
  std::vector<std::pair<std::string, std::string>> csv_files(const std::string& base) const;

 private:
  Format format_;
  std::vector<DocumentSection> sections_;
};

// The title line a section gets when its report has none of its own:
// " ** Title (name):", nsys's form.
std::string section_title(const std::string& title, const std::string& name);

// The base of `nsys stats`' output names for a trace file: its file name
// without directory and without its last extension ("run/trace.sqlite" ->
// "trace").
std::string report_file_base(const std::string& trace_path);

}  // namespace strata::report
