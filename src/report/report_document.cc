#include "report/report_document.h"

#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace strata::report {

void ReportDocument::add(std::string name, std::string title, std::string text) {
  if (format_ == Format::kTable && text.empty()) return;
  for (auto& s : sections_) {
    if (s.name == name) {
      s.title = std::move(title);
      s.text = std::move(text);
      return;
    }
  }
  sections_.push_back({std::move(name), std::move(title), std::move(text)});
}

namespace {

// The section's value: its JSON text parsed (the renderers write valid JSON;
// anything else would be kept as a string rather than lost).
nlohmann::ordered_json json_value(const DocumentSection& s) {
  auto value = nlohmann::ordered_json::parse(s.text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return s.text;
  if (value.is_object() && value.size() == 1 && value.contains(s.name)) return value[s.name];
  return value;
}

std::string with_newline(std::string text) {
  if (!text.empty() && text.back() != '\n') text += '\n';
  return text;
}

}  // namespace

std::string ReportDocument::render() const {
  if (format_ == Format::kJson) {
    nlohmann::ordered_json doc = nlohmann::ordered_json::object();
    for (const auto& s : sections_) doc[s.name] = json_value(s);
    // As every strata JSON output: DEL escaped, invalid UTF-8 replaced.
    return escape_json_del(
               doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace)) +
           "\n";
  }
  std::string out;
  const bool titled = format_ == Format::kCsv && sections_.size() > 1;
  for (const auto& s : sections_) {
    if (!out.empty()) out += '\n';
    if (titled) out += printable(s.title) + "\n\n";
    out += with_newline(s.text);
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> ReportDocument::csv_files(
    const std::string& base) const {
  std::vector<std::pair<std::string, std::string>> files;
  for (const auto& s : sections_) files.emplace_back(base + "_" + s.name + ".csv", s.text);
  return files;
}

std::string section_title(const std::string& title, const std::string& name) {
  return " ** " + title + " (" + name + "):";
}

std::string report_file_base(const std::string& trace_path) {
  std::string name = trace_path;
  if (auto slash = name.find_last_of('/'); slash != std::string::npos) name.erase(0, slash + 1);
  if (auto dot = name.find_last_of('.'); dot != std::string::npos && dot > 0) name.erase(dot);
  return name.empty() ? "report" : name;
}

}  // namespace strata::report
