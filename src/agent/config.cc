#include "agent/config.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace strata::agent {

namespace {

// Parses a decimal in [low, high] into *out; otherwise leaves *out and notes
// the variable in the warning (the first bad one wins).
void parse_number(EnvLookup lookup, const char* name, uint32_t low, uint32_t high, uint32_t* out,
                  Config* config) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') return;
  char* end = nullptr;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || value < low || value > high || text[0] == '-') {
    if (config->warning[0] == '\0') {
      std::snprintf(config->warning, sizeof(config->warning),
                    "%s=%s is not a number in %u..%u; using %u", name, text, low, high, *out);
    }
    return;
  }
  *out = static_cast<uint32_t>(value);
}

void note_warning(Config* config, const char* name, const char* text, const char* expected) {
  if (config->warning[0] != '\0') return;
  std::snprintf(config->warning, sizeof(config->warning), "%s=%s: %s", name, text, expected);
}

// "kernel,runtime,...": the groups named, or all of them when a name is
// unknown (with a warning: tracing less than asked would go unnoticed).
void parse_record_groups(EnvLookup lookup, Config* config) {
  static constexpr struct {
    const char* name;
    uint32_t bit;
  } kGroups[] = {{"kernel", kRecordKernel}, {"runtime", kRecordRuntime}, {"driver", kRecordDriver},
                 {"memory", kRecordMemory}, {"sync", kRecordSync},       {"nvtx", kRecordNvtx},
                 {"meta", kRecordMeta}};
  const char* text = lookup("STRATA_AGENT_RECORD");
  if (text == nullptr || *text == '\0') return;
  uint32_t groups = 0;
  for (const char* p = text; *p != '\0';) {
    const char* comma = std::strchr(p, ',');
    size_t len = comma ? static_cast<size_t>(comma - p) : std::strlen(p);
    bool known = false;
    for (const auto& g : kGroups) {
      if (std::strlen(g.name) == len && std::strncmp(g.name, p, len) == 0) {
        groups |= g.bit;
        known = true;
      }
    }
    if (!known && len > 0) {
      note_warning(config, "STRATA_AGENT_RECORD", text,
                   "unknown group (kernel, runtime, driver, memory, sync, nvtx, meta); "
                   "recording all");
      return;
    }
    p += len + (comma ? 1 : 0);
  }
  config->record_groups = groups;
}

}  // namespace

Config parse_config(EnvLookup lookup) {
  Config config;
  const char* run_dir = lookup("STRATA_RUN_DIR");
  if (run_dir != nullptr && run_dir[0] != '\0' && std::strlen(run_dir) < Config::kMaxPath) {
    std::memcpy(config.run_dir, run_dir, std::strlen(run_dir) + 1);
    config.has_run_dir = true;
  }
  parse_number(lookup, "STRATA_AGENT_BUFFER_MB", 1, 64, &config.buffer_mb, &config);
  parse_number(lookup, "STRATA_AGENT_BUFFER_COUNT", 2, 1024, &config.buffer_count, &config);
  parse_number(lookup, "STRATA_AGENT_FLUSH_MS", 10, 500, &config.flush_ms, &config);
  const char* all_apis = lookup("STRATA_AGENT_ALL_APIS");
  config.all_apis = all_apis != nullptr && std::strcmp(all_apis, "1") == 0;
  parse_record_groups(lookup, &config);
  const char* clock = lookup("STRATA_AGENT_CLOCK");
  if (clock != nullptr && std::strcmp(clock, "cupti") == 0) {
    config.cupti_clock = true;
  } else if (clock != nullptr && *clock != '\0' && std::strcmp(clock, "monotonic") != 0) {
    note_warning(&config, "STRATA_AGENT_CLOCK", clock, "use monotonic or cupti; using monotonic");
  }
  return config;
}

bool spool_path(const Config& config, int pid, char* out, size_t out_size) {
  if (!config.has_run_dir) return false;
  int n = std::snprintf(out, out_size, "%s/spool-%d.bin", config.run_dir, pid);
  return n > 0 && static_cast<size_t>(n) < out_size;
}

}  // namespace strata::agent
