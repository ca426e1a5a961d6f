#include "cli/new_trace.h"

#include <cstdio>
#include <filesystem>

#include "common/build_info.h"
#include "common/clock.h"
#include "common/process.h"

namespace strata::cli {

std::optional<NewTrace> start_trace(const std::optional<std::string>& output, bool force,
                                    const std::string& stem, const std::string& verb,
                                    const std::vector<std::string>& command) {
  auto path = store::choose_output_path(output, force, stem);
  if (!path) {
    std::fprintf(stderr, "strata: %s\n", path.error().message.c_str());
    return std::nullopt;
  }
  auto writer = store::TraceWriter::create(*path, force);
  if (!writer) {
    std::fprintf(stderr, "strata: %s\n", writer.error().message.c_str());
    return std::nullopt;
  }
  store::RunInfo info;
  info.verb = verb;
  info.command = command;
  info.working_directory = std::filesystem::current_path().string();
  info.host = host_name();
  info.tool_version = build::kVersion;
  info.start_ns = realtime_ns();
  return NewTrace{std::move(path).value(), std::move(writer).value(), std::move(info)};
}

}  // namespace strata::cli
