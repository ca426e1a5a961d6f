#include "agent/config.h"

#include <cctype>
#include <cerrno>
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

// "kernel,runtime,...": the groups named, or the default ones when a name is
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
                   "recording the default groups (all but sync)");
      return;
    }
    p += len + (comma ? 1 : 0);
  }
  config->record_groups = groups;
}

// A decimal uint64 (the kernel skip and count); same rules as parse_number.
void parse_count(EnvLookup lookup, const char* name, uint64_t* out, Config* config) {
  const char* text = lookup(name);
  if (text == nullptr || *text == '\0') return;
  char* end = nullptr;
  errno = 0;
  unsigned long long value = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-' || errno == ERANGE) {
    note_warning(config, name, text, "not a non-negative number; using the default");
    return;
  }
  *out = value;
}

// STRATA_KERNEL_METRICS: "name,name,...", each name of letters, digits, '_'
// and '.' (CUPTI's metric names; CUPTI itself says whether one exists). Any
// bad name drops them all, so that a typo is not half applied.
void parse_kernel_metrics(const char* list, Config* config) {
  if (list == nullptr || *list == '\0') return;
  const size_t length = std::strlen(list);
  bool ok = length < Config::kMaxKernelMetricsText;
  uint32_t count = 0;
  for (size_t begin = 0; ok && begin <= length;) {
    size_t end = begin;
    while (end < length && list[end] != ',') {
      const char c = list[end];
      ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.');
      ++end;
    }
    ok = ok && end > begin && ++count <= Config::kMaxKernelMetrics;
    begin = end + 1;
  }
  if (!ok) {
    note_warning(config, "STRATA_KERNEL_METRICS", list,
                 "names of letters, digits, _ and ., at most 16, comma-separated; none collected");
    return;
  }
  std::memcpy(config->kernel_metrics, list, length + 1);
  for (size_t i = 0; i < length; ++i) {
    if (config->kernel_metrics[i] == ',') config->kernel_metrics[i] = '\0';
  }
  config->kernel_metric_count = count;
}

// STRATA_AGENT_MODE and the STRATA_KERNEL_* variables of kernels mode.
void parse_kernels_mode(EnvLookup lookup, Config* config) {
  const char* mode = lookup("STRATA_AGENT_MODE");
  if (mode != nullptr && std::strcmp(mode, "kernels") == 0) {
    config->mode = AgentMode::kKernels;
  } else if (mode != nullptr && *mode != '\0' && std::strcmp(mode, "trace") != 0) {
    note_warning(config, "STRATA_AGENT_MODE", mode, "use trace or kernels; tracing");
  }
  const char* name = lookup("STRATA_KERNEL_NAME");
  if (name != nullptr) {
    if (std::strlen(name) < Config::kMaxKernelName) {
      std::memcpy(config->kernel_name, name, std::strlen(name) + 1);
    } else {
      // Profiling every kernel instead of the one asked for would be a
      // surprise; a filter that matches nothing says so in the report.
      note_warning(config, "STRATA_KERNEL_NAME", "(too long)",
                   "longer than 1023 bytes; no kernel matches");
      std::memcpy(config->kernel_name, "regex:$^", 9);
    }
  }
  parse_count(lookup, "STRATA_KERNEL_SKIP", &config->kernel_skip, config);
  parse_count(lookup, "STRATA_KERNEL_COUNT", &config->kernel_count, config);

  static constexpr struct {
    const char* name;
    uint32_t bit;
  } kSections[] = {{"sol", kSectionSol},
                   {"workload", kSectionWorkload},
                   {"launch", kSectionLaunch},
                   {"occupancy", kSectionOccupancy}};
  const char* sections = lookup("STRATA_KERNEL_SECTIONS");
  if (sections != nullptr && *sections != '\0') {
    uint32_t bits = 0;
    bool unknown = false;
    for (const char* p = sections; *p != '\0';) {
      const char* comma = std::strchr(p, ',');
      size_t len = comma ? static_cast<size_t>(comma - p) : std::strlen(p);
      bool known = false;
      for (const auto& section : kSections) {
        if (std::strlen(section.name) == len && std::strncmp(section.name, p, len) == 0) {
          bits |= section.bit;
          known = true;
        }
      }
      if (!known && len > 0) unknown = true;
      p += len + (comma ? 1 : 0);
    }
    if (unknown || bits == 0) {
      note_warning(config, "STRATA_KERNEL_SECTIONS", sections,
                   "unknown section (sol, workload, launch, occupancy); collecting all");
    } else {
      config->kernel_sections = bits;
    }
  }
  parse_kernel_metrics(lookup("STRATA_KERNEL_METRICS"), config);
  const char* cache = lookup("STRATA_KERNEL_CACHE_CONTROL");
  if (cache != nullptr && std::strcmp(cache, "none") == 0) {
    config->kernel_cache_flush = false;
  } else if (cache != nullptr && *cache != '\0' && std::strcmp(cache, "all") != 0) {
    note_warning(config, "STRATA_KERNEL_CACHE_CONTROL", cache,
                 "only all and none are known; flushing caches (all)");
  }
  const char* fail = lookup("STRATA_AGENT_KERNELS_FAIL");
  if (fail != nullptr && std::strcmp(fail, "privileges") == 0) {
    config->simulated_failure = SimulatedFailure::kPrivileges;
  } else if (fail != nullptr && std::strcmp(fail, "unsupported-device") == 0) {
    config->simulated_failure = SimulatedFailure::kUnsupportedDevice;
  } else if (fail != nullptr && *fail != '\0') {
    note_warning(config, "STRATA_AGENT_KERNELS_FAIL", fail,
                 "only privileges and unsupported-device are known; ignored");
  }
  const char* probe = lookup("STRATA_AGENT_KERNELS_SMEM_PROBE");
  config->smem_config_probe = probe == nullptr || std::strcmp(probe, "0") != 0;
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
  const char* debug = lookup("STRATA_AGENT_DEBUG");
  config.debug = debug != nullptr && std::strcmp(debug, "1") == 0;
  parse_kernels_mode(lookup, &config);
  return config;
}

bool spool_path(const Config& config, int pid, char* out, size_t out_size) {
  if (!config.has_run_dir) return false;
  int n = std::snprintf(out, out_size, "%s/spool-%d.bin", config.run_dir, pid);
  return n > 0 && static_cast<size_t>(n) < out_size;
}

}  // namespace strata::agent
