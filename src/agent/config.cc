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
  return config;
}

bool spool_path(const Config& config, int pid, char* out, size_t out_size) {
  if (!config.has_run_dir) return false;
  int n = std::snprintf(out, out_size, "%s/spool-%d.bin", config.run_dir, pid);
  return n > 0 && static_cast<size_t>(n) < out_size;
}

}  // namespace strata::agent
