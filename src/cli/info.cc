// `strata info FILE`: what a trace (or an Nsight Systems export) holds: its
// kind and schema, the run that made it, and each table with its row count.
#include <fmt/format.h>
#include <string.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <ctime>
#include <memory>
#include <string>
#include <vector>

#include "cli/verbs.h"
#include "common/strings.h"
#include "store/trace_db.h"

namespace strata::cli {
namespace {

// "2026-01-02 10:11:12.345 +0100" in the local time zone.
std::string local_time(int64_t ns) {
  time_t seconds = static_cast<time_t>(ns / 1'000'000'000);
  int millis = static_cast<int>((ns % 1'000'000'000) / 1'000'000);
  if (millis < 0) {
    seconds -= 1;
    millis += 1000;
  }
  tm local{};
  if (localtime_r(&seconds, &local) == nullptr) return fmt::format("{} ns", ns);
  char date[32], zone[8];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S", &local);
  strftime(zone, sizeof zone, "%z", &local);
  return fmt::format("{}.{:03d} {}", date, millis, zone);
}

std::string outcome(const store::RunInfo& run) {
  if (run.signal) {
    const char* abbrev = sigabbrev_np(*run.signal);
    if (abbrev != nullptr) return fmt::format("killed by signal {} (SIG{})", *run.signal, abbrev);
    return fmt::format("killed by signal {}", *run.signal);
  }
  if (run.exit_status) return fmt::format("exit status {}", *run.exit_status);
  return "unknown";
}

void print_run(const store::RunInfo& run) {
  fmt::print("verb:       {}\n", printable(run.verb));
  fmt::print("command:    {}\n", printable(join_command(run.command)));
  fmt::print("directory:  {}\n", printable(run.working_directory));
  fmt::print("started:    {}\n", local_time(run.start_ns));
  fmt::print("ended:      {} ({:.3f} s)\n", local_time(run.end_ns),
             static_cast<double>(run.end_ns - run.start_ns) / 1e9);
  fmt::print("outcome:    {}\n", outcome(run));
  fmt::print("host:       {}\n", printable(run.host));
  fmt::print("strata:     {}\n", printable(run.tool_version));
}

// Tables with rows, largest first, then the empty ones on one line: a
// strata file creates every table up front, so most are empty.
void print_tables(const std::vector<store::TableCount>& tables) {
  std::vector<store::TableCount> filled;
  std::vector<std::string> empty;
  size_t width = 0;
  for (const auto& table : tables) {
    if (table.rows > 0) {
      filled.push_back(table);
      width = std::max(width, table.name.size());
    } else {
      empty.push_back(printable(table.name));
    }
  }
  std::stable_sort(filled.begin(), filled.end(),
                   [](const auto& a, const auto& b) { return a.rows > b.rows; });
  fmt::print("tables:     {} ({} with rows)\n", tables.size(), filled.size());
  for (const auto& table : filled) {
    fmt::print("  {:<{}}  {:>12}\n", printable(table.name), width, table.rows);
  }
  if (empty.empty()) return;
  // Wrapped to the 100 columns of the rest of the output.
  std::string line = "  empty:";
  for (size_t i = 0; i < empty.size(); ++i) {
    std::string word = " " + empty[i] + (i + 1 < empty.size() ? "," : "");
    if (line.size() + word.size() > 100) {
      fmt::print("{}\n", line);
      line = "        ";
    }
    line += word;
  }
  fmt::print("{}\n", line);
}

// Counted bad input is part of what the trace says about itself.
void print_counters(const std::vector<std::pair<std::string, int64_t>>& counters) {
  if (counters.empty()) return;
  fmt::print("counters:\n");
  for (const auto& [name, value] : counters) {
    fmt::print("  {} = {}\n", printable(name), value);
  }
}

int run_info(const std::string& file) {
  auto reader = store::TraceReader::open(file);
  if (!reader) return print_usage_error(reader.error().message);
  // Counting rows reads every table, so corruption past the header shows up
  // here; the metadata and counters are read up front too: a read error is
  // the one line printed, never a shorter listing.
  auto tables = reader->tables();
  if (!tables) return print_usage_error(tables.error().message);
  auto meta = reader->export_metadata();
  if (!meta) return print_usage_error(meta.error().message);
  auto counters = reader->counters();
  if (!counters) return print_usage_error(counters.error().message);
  fmt::print("file:       {}\n", printable(file));
  if (reader->kind() == store::TraceKind::kStrata) {
    fmt::print("kind:       strata trace, schema version {}\n", reader->schema_version());
    if (auto run = reader->run()) {
      print_run(*run);
    } else {
      fmt::print("run:        not recorded\n");
    }
  } else {
    fmt::print("kind:       Nsight Systems export, export schema {}\n", reader->schema_version());
    std::string product, version;
    for (const auto& [name, value] : *meta) {
      if (name == "EXPORT_PRODUCT_NAME") product = value;
      if (name == "EXPORT_PRODUCT_VERSION") version = value;
    }
    if (!version.empty()) {
      fmt::print("exported:   {} {}\n", printable(product.empty() ? "nsys" : product),
                 printable(version));
    }
  }
  print_tables(*tables);
  print_counters(*counters);
  return kExitOk;
}

}  // namespace

VerbRunner add_info(CLI::App& app) {
  auto* sub = app.add_subcommand("info", "Show what a trace file holds: run, schema, tables");
  auto file = std::make_shared<std::string>();
  sub->add_option("FILE", *file, "a strata trace or an Nsight Systems SQLite export")->required();
  return [file] { return run_info(*file); };
}

}  // namespace strata::cli
