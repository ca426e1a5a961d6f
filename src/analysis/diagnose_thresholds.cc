#include "analysis/diagnose_thresholds.h"

#include <charconv>
#include <cmath>
#include <cstdio>

#include "common/strings.h"

namespace strata::analysis {
namespace {

std::string known_names() {
  std::string out;
  for (const auto& n : threshold_table()) out += (out.empty() ? "" : ", ") + std::string(n.name);
  return out;
}

std::string number_text(double value) {
  char text[40];
  std::snprintf(text, sizeof text, "%g", value);
  return text;
}

}  // namespace

std::span<const ThresholdName> threshold_names() { return threshold_table(); }

Status set_threshold(DiagnosisThresholds& thresholds, std::string_view name,
                     std::string_view value) {
  const ThresholdName* found = nullptr;
  for (const auto& n : threshold_table()) {
    if (name == n.name) found = &n;
  }
  const std::string quoted = "'" + printable(std::string(name)) + "=" + printable(std::string(value)) + "'";
  if (found == nullptr) {
    return make_error(quoted + ": unknown threshold (known: " + known_names() + ")");
  }
  double parsed = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() ||
      !std::isfinite(parsed)) {
    return make_error(quoted + ": the value is not a number");
  }
  if (parsed < found->lowest || parsed > found->highest) {
    return make_error(quoted + ": " + found->name + " must be between " +
                      number_text(found->lowest) + " and " + number_text(found->highest));
  }
  thresholds.*(found->field) = parsed;
  return Ok{};
}

Status set_threshold(DiagnosisThresholds& thresholds, std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos) {
    return make_error("'" + printable(std::string(assignment)) + "': use NAME=VALUE (names: " +
                      known_names() + ")");
  }
  return set_threshold(thresholds, assignment.substr(0, eq), assignment.substr(eq + 1));
}

std::string threshold_text(const DiagnosisThresholds& thresholds, const ThresholdName& name) {
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", thresholds.*(name.field));
  return text;
}

}  // namespace strata::analysis
