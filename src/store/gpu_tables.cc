// load_gpu_tables (store/gpu_tables.h): column reads of nsys-schema tables.
//
// Reads go through sqlite3_step/sqlite3_column_int64 on one prepared
// statement per table and nothing else per row: at 1M kernel rows the step
// loop is the whole cost, so no per-row allocation, string or map lookup.
// Every value is read as an integer whatever its stored type, so a damaged
// or hostile file gives odd numbers, never a crash.
#include "store/gpu_tables.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>
#include <set>
#include <span>
#include <unordered_set>

#include "common/strings.h"
#include "store/sqlite_util.h"

namespace strata::store {

const std::string* GpuTables::string(int64_t id) const {
  auto it = strings.find(id);
  return it == strings.end() ? nullptr : &it->second;
}

namespace {

// Per-id lookups through StringIds' primary key beat a full scan until this
// many distinct ids are wanted.
constexpr size_t kStringLookupLimit = 4096;

class Loader {
 public:
  Loader(sqlite3* db, const std::string& name) : db_(db), name_(printable(name)) {}

  Result<bool> has_table(const char* table) { return sql::table_exists(db_, table, name_); }

  Result<std::set<std::string>> columns(const char* table) {
    STRATA_ASSIGN_OR_RETURN(
        auto stmt,
        prepare(fmt::format("PRAGMA table_info({})", sql::quote_identifier(table)), table));
    std::set<std::string> out;
    int rc;
    while ((rc = stmt.step()) == SQLITE_ROW) out.insert(stmt.column_text(1));
    if (rc != SQLITE_DONE) return fail(table);
    return out;
  }

  Result<sql::Statement> prepare(const std::string& text, std::string_view table) {
    return sql::Statement::prepare(db_, text, fmt::format("{}: {}", name_, table));
  }

  Error fail(std::string_view table) const {
    return sql::error(db_, fmt::format("{}: reading {}", name_, table));
  }

  const std::string& name() const { return name_; }

 private:
  sqlite3* db_;
  std::string name_;
};

// The select list for `wanted` columns of a table whose columns are `have`:
// a missing optional column reads as NULL, a missing required one is an error.
struct Wanted {
  const char* column;
  bool required;
};

Result<std::string> select_list(const std::set<std::string>& have, std::span<const Wanted> wanted,
                                const std::string& file, const char* table) {
  std::string out;
  for (const auto& w : wanted) {
    if (!out.empty()) out += ", ";
    if (have.count(w.column)) {
      out += sql::quote_identifier(w.column);
    } else if (w.required) {
      return make_error(fmt::format("{}: table {} has no column {}", file, table, w.column));
    } else {
      out += "NULL";
    }
  }
  return out;
}

int64_t int_or(sqlite3_stmt* stmt, int index, int64_t if_null) {
  return sqlite3_column_type(stmt, index) == SQLITE_NULL ? if_null
                                                         : sqlite3_column_int64(stmt, index);
}

Status load_runtime(Loader& loader, GpuTables& out, const GpuLoadOptions& options) {
  static constexpr const char* kTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
  STRATA_ASSIGN_OR_RETURN(auto have, loader.columns(kTable));
  static constexpr Wanted kWanted[] = {{"start", true},      {"end", true},
                                       {"globalTid", false}, {"correlationId", false},
                                       {"nameId", true},     {"eventClass", false}};
  std::span<const Wanted> wanted(kWanted);
  if (!options.timeline) wanted = wanted.first(5);
  STRATA_ASSIGN_OR_RETURN(auto list, select_list(have, wanted, loader.name(), kTable));
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          loader.prepare(fmt::format("SELECT {} FROM {}", list, kTable), kTable));
  auto& c = out.runtime;
  sqlite3_stmt* s = stmt.get();
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    c.start.push_back(sqlite3_column_int64(s, 0));
    c.end.push_back(sqlite3_column_int64(s, 1));
    c.global_tid.push_back(sqlite3_column_int64(s, 2));
    c.correlation_id.push_back(sqlite3_column_int64(s, 3));
    c.name_id.push_back(int_or(s, 4, kNoString));
    if (options.timeline) c.event_class.push_back(sqlite3_column_int64(s, 5));
  }
  if (rc != SQLITE_DONE) return loader.fail(kTable);
  return Ok{};
}

Status load_kernels(Loader& loader, GpuTables& out, const GpuLoadOptions& options) {
  static constexpr const char* kTable = "CUPTI_ACTIVITY_KIND_KERNEL";
  STRATA_ASSIGN_OR_RETURN(auto have, loader.columns(kTable));
  if (!have.count("demangledName")) {
    return make_error(
        fmt::format("{}: table {} has no column demangledName", loader.name(), kTable));
  }
  // nsys falls back to the demangled name where the mangled one is missing,
  // per row and for exports older than the mangledName column.
  std::string name = "demangledName";
  if (options.kernel_names == KernelNameKind::kBase && have.count("shortName")) {
    name = "shortName";
  }
  if (options.kernel_names == KernelNameKind::kMangled && have.count("mangledName")) {
    name = "coalesce(mangledName, demangledName)";
  }
  static constexpr Wanted kTimes[] = {{"start", true}, {"end", true}};
  static constexpr Wanted kLinks[] = {
      {"deviceId", false}, {"correlationId", false}, {"globalPid", false}};
  static constexpr Wanted kLaunch[] = {{"streamId", false},
                                       {"gridX", false},
                                       {"gridY", false},
                                       {"gridZ", false},
                                       {"blockX", false},
                                       {"blockY", false},
                                       {"blockZ", false},
                                       {"registersPerThread", false},
                                       {"staticSharedMemory", false},
                                       {"dynamicSharedMemory", false}};
  const bool links = options.kernel_links || options.timeline;
  STRATA_ASSIGN_OR_RETURN(auto list, select_list(have, kTimes, loader.name(), kTable));
  list += ", " + name;
  if (links) {
    STRATA_ASSIGN_OR_RETURN(auto more, select_list(have, kLinks, loader.name(), kTable));
    list += ", " + more;
  }
  if (options.timeline) {
    STRATA_ASSIGN_OR_RETURN(auto more, select_list(have, kLaunch, loader.name(), kTable));
    list += ", " + more;
  }
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          loader.prepare(fmt::format("SELECT {} FROM {}", list, kTable), kTable));
  auto& c = out.kernels;
  auto& l = c.launch;
  sqlite3_stmt* s = stmt.get();
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    c.start.push_back(sqlite3_column_int64(s, 0));
    c.end.push_back(sqlite3_column_int64(s, 1));
    c.name_id.push_back(int_or(s, 2, kNoString));
    if (links) {
      c.device_id.push_back(sqlite3_column_int64(s, 3));
      c.correlation_id.push_back(sqlite3_column_int64(s, 4));
      c.global_pid.push_back(sqlite3_column_int64(s, 5));
    }
    if (options.timeline) {
      l.stream_id.push_back(sqlite3_column_int64(s, 6));
      auto& grid = l.grid.emplace_back();
      auto& block = l.block.emplace_back();
      for (int i = 0; i < 3; ++i) {
        grid[static_cast<size_t>(i)] = sqlite3_column_int64(s, 7 + i);
        block[static_cast<size_t>(i)] = sqlite3_column_int64(s, 10 + i);
      }
      l.registers_per_thread.push_back(sqlite3_column_int64(s, 13));
      l.static_shared_memory.push_back(sqlite3_column_int64(s, 14));
      l.dynamic_shared_memory.push_back(sqlite3_column_int64(s, 15));
    }
  }
  if (rc != SQLITE_DONE) return loader.fail(kTable);
  return Ok{};
}

Status load_mem_ops(Loader& loader, const char* table, bool memcpy, bool timeline,
                    MemOpColumns& c) {
  STRATA_ASSIGN_OR_RETURN(auto have, loader.columns(table));
  // The summaries cannot do without bytes and copyKind; a timeline draws the
  // row without them.
  std::vector<Wanted> wanted = {{"start", true}, {"end", true}, {"bytes", !timeline}};
  if (memcpy) wanted.push_back({"copyKind", !timeline});
  const int links = static_cast<int>(wanted.size());
  if (timeline) {
    for (const char* column : {"globalPid", "deviceId", "streamId", "correlationId"}) {
      wanted.push_back({column, false});
    }
    if (memcpy) {
      wanted.push_back({"srcKind", false});
      wanted.push_back({"dstKind", false});
    }
  }
  STRATA_ASSIGN_OR_RETURN(auto list, select_list(have, wanted, loader.name(), table));
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          loader.prepare(fmt::format("SELECT {} FROM {}", list, table), table));
  sqlite3_stmt* s = stmt.get();
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    c.start.push_back(sqlite3_column_int64(s, 0));
    c.end.push_back(sqlite3_column_int64(s, 1));
    c.bytes.push_back(sqlite3_column_int64(s, 2));
    if (memcpy) c.copy_kind.push_back(sqlite3_column_int64(s, 3));
    if (timeline) {
      c.global_pid.push_back(sqlite3_column_int64(s, links));
      c.device_id.push_back(sqlite3_column_int64(s, links + 1));
      c.stream_id.push_back(sqlite3_column_int64(s, links + 2));
      c.correlation_id.push_back(sqlite3_column_int64(s, links + 3));
      if (memcpy) {
        c.src_kind.push_back(int_or(s, links + 4, -1));
        c.dst_kind.push_back(int_or(s, links + 5, -1));
      }
    }
  }
  if (rc != SQLITE_DONE) return loader.fail(table);
  return Ok{};
}

Status load_memcpy_labels(Loader& loader, GpuTables& out) {
  static constexpr const char* kTable = "ENUM_CUDA_MEMCPY_OPER";
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          loader.prepare(fmt::format("SELECT id, label FROM {}", kTable), kTable));
  int rc;
  while ((rc = stmt.step()) == SQLITE_ROW) {
    // A NULL label makes nsys's '[CUDA memcpy ' || label || ']' NULL; such
    // kinds are left out like kinds missing from the enum.
    if (stmt.column_null(1)) continue;
    out.memcpy_labels[stmt.column_int(0)] = stmt.column_text(1);
  }
  if (rc != SQLITE_DONE) return loader.fail(kTable);
  return Ok{};
}

Status load_nvtx(Loader& loader, GpuTables& out) {
  static constexpr const char* kTable = "NVTX_EVENTS";
  STRATA_ASSIGN_OR_RETURN(auto have, loader.columns(kTable));
  static constexpr Wanted kWanted[] = {
      {"start", true},     {"end", false},    {"eventType", true}, {"globalTid", false},
      {"domainId", false}, {"textId", false}, {"text", false}};
  STRATA_ASSIGN_OR_RETURN(auto list, select_list(have, kWanted, loader.name(), kTable));
  STRATA_ASSIGN_OR_RETURN(
      auto stmt,
      loader.prepare(fmt::format("SELECT {} FROM {} WHERE eventType IN ({}, {}, {}, {}, {})", list,
                                 kTable, kNvtxPushPopRange, kNvtxStartEndRange, kNvtxtPushPopRange,
                                 kNvtxtStartEndRange, kNvtxDomainCreate),
                     kTable));
  auto& c = out.nvtx;
  sqlite3_stmt* s = stmt.get();
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    c.start.push_back(sqlite3_column_int64(s, 0));
    c.end.push_back(int_or(s, 1, NvtxColumns::kNoEnd));
    c.event_type.push_back(static_cast<int32_t>(sqlite3_column_int64(s, 2)));
    c.global_tid.push_back(sqlite3_column_int64(s, 3));
    c.domain_id.push_back(sqlite3_column_int64(s, 4));
    c.text_id.push_back(int_or(s, 5, kNoString));
    if (sqlite3_column_type(s, 6) == SQLITE_NULL) {
      c.text_index.push_back(-1);
    } else {
      const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 6));
      int bytes = sqlite3_column_bytes(s, 6);
      c.text_index.push_back(static_cast<int32_t>(c.texts.size()));
      c.texts.emplace_back(text == nullptr ? "" : std::string(text, static_cast<size_t>(bytes)));
    }
  }
  if (rc != SQLITE_DONE) return loader.fail(kTable);

  // nsys closes a range without an end at the last timestamp of the table,
  // all event types included.
  std::string ends = have.count("end") ? "max(\"end\")" : "NULL";
  STRATA_ASSIGN_OR_RETURN(
      auto bounds,
      loader.prepare(fmt::format("SELECT max(start), {} FROM {}", ends, kTable), kTable));
  rc = bounds.step();
  if (rc != SQLITE_ROW) return loader.fail(kTable);
  c.max_timestamp = std::max(bounds.column_int(0), bounds.column_int(1));
  for (int i = 0; i < 2; ++i) {
    if (!bounds.column_null(i)) c.last_timestamp = std::max(c.last_timestamp, bounds.column_int(i));
  }
  return Ok{};
}

Status load_thread_names(Loader& loader, GpuTables& out) {
  static constexpr const char* kTable = "ThreadNames";
  STRATA_ASSIGN_OR_RETURN(auto have, loader.columns(kTable));
  static constexpr Wanted kWanted[] = {{"nameId", true}, {"globalTid", true}, {"priority", false}};
  STRATA_ASSIGN_OR_RETURN(auto list, select_list(have, kWanted, loader.name(), kTable));
  // A renamed thread has several rows; the highest priority, then the last
  // row, wins.
  STRATA_ASSIGN_OR_RETURN(
      auto stmt,
      loader.prepare(
          fmt::format("SELECT {} FROM {} ORDER BY coalesce(priority, 0), rowid", list, kTable),
          kTable));
  int rc;
  while ((rc = stmt.step()) == SQLITE_ROW) {
    out.thread_name_ids[stmt.column_int(1)] = stmt.column_null(0) ? kNoString : stmt.column_int(0);
  }
  if (rc != SQLITE_DONE) return loader.fail(kTable);
  return Ok{};
}

Status load_process_names(Loader& loader, GpuTables& out) {
  static constexpr const char* kTable = "PROCESSES";
  STRATA_ASSIGN_OR_RETURN(auto have, loader.columns(kTable));
  static constexpr Wanted kWanted[] = {{"globalPid", true}, {"name", false}};
  STRATA_ASSIGN_OR_RETURN(auto list, select_list(have, kWanted, loader.name(), kTable));
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          loader.prepare(fmt::format("SELECT {} FROM {}", list, kTable), kTable));
  int rc;
  while ((rc = stmt.step()) == SQLITE_ROW) {
    out.process_names[stmt.column_int(0)] = stmt.column_text(1);
  }
  if (rc != SQLITE_DONE) return loader.fail(kTable);
  return Ok{};
}

Status load_sm_counts(Loader& loader, GpuTables& out) {
  static constexpr const char* kTable = "TARGET_INFO_GPU";
  STRATA_ASSIGN_OR_RETURN(auto have, loader.columns(kTable));
  static constexpr Wanted kWanted[] = {{"id", true}, {"smCount", false}};
  STRATA_ASSIGN_OR_RETURN(auto list, select_list(have, kWanted, loader.name(), kTable));
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          loader.prepare(fmt::format("SELECT {} FROM {}", list, kTable), kTable));
  int rc;
  while ((rc = stmt.step()) == SQLITE_ROW) {
    if (!stmt.column_null(1) && stmt.column_int(1) > 0) {
      out.sm_counts[stmt.column_int(0)] = stmt.column_int(1);
    }
  }
  if (rc != SQLITE_DONE) return loader.fail(kTable);
  return Ok{};
}

Status load_strings(Loader& loader, GpuTables& out) {
  std::unordered_set<int64_t> wanted;
  for (const auto* ids : {&out.runtime.name_id, &out.kernels.name_id, &out.nvtx.text_id}) {
    for (int64_t id : *ids) {
      if (id != kNoString) wanted.insert(id);
    }
  }
  for (const auto& [tid, id] : out.thread_name_ids) {
    if (id != kNoString) wanted.insert(id);
  }
  if (wanted.empty() || !out.has_string_ids) return Ok{};
  static constexpr const char* kTable = "StringIds";
  auto keep = [&](sqlite3_stmt* s) {
    if (sqlite3_column_type(s, 1) == SQLITE_NULL) return;
    const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(s, 1));
    int bytes = sqlite3_column_bytes(s, 1);
    out.strings.emplace(sqlite3_column_int64(s, 0),
                        text == nullptr ? "" : std::string(text, static_cast<size_t>(bytes)));
  };
  if (wanted.size() <= kStringLookupLimit) {
    STRATA_ASSIGN_OR_RETURN(auto stmt,
                            loader.prepare("SELECT id, value FROM StringIds WHERE id = ?", kTable));
    for (int64_t id : wanted) {
      stmt.bind(1, id);
      int rc;
      while ((rc = stmt.step()) == SQLITE_ROW) {
        if (!out.strings.count(id)) keep(stmt.get());
      }
      if (rc != SQLITE_DONE) return loader.fail(kTable);
      stmt.reset();
    }
  } else {
    STRATA_ASSIGN_OR_RETURN(auto stmt, loader.prepare("SELECT id, value FROM StringIds", kTable));
    sqlite3_stmt* s = stmt.get();
    int rc;
    while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
      int64_t id = sqlite3_column_int64(s, 0);
      if (wanted.count(id) && !out.strings.count(id)) keep(s);
    }
    if (rc != SQLITE_DONE) return loader.fail(kTable);
  }
  return Ok{};
}

}  // namespace

// Plain reads through SQLite's page cache, not PRAGMA mmap_size: a mapped trace
// counts in strata's resident memory page by page (202 against 122 MB for the
// reports on 1M launches, dev 2026-12-01) and the 1M-kernel load took the same
// time either way (build/bin/gpu_reports_speed: 0.22-0.30 s both).
Result<GpuTables> load_gpu_tables(sqlite3* db, const std::string& name,
                                  const GpuLoadOptions& options) {
  Loader loader(db, name);
  GpuTables out;
  out.source = loader.name();
  out.kernel_names = options.kernel_names;

  struct Presence {
    const char* table;
    bool* flag;
  };
  const Presence presence[] = {{"StringIds", &out.has_string_ids},
                               {"CUPTI_ACTIVITY_KIND_RUNTIME", &out.has_runtime},
                               {"CUPTI_ACTIVITY_KIND_KERNEL", &out.has_kernels},
                               {"CUPTI_ACTIVITY_KIND_MEMCPY", &out.has_memcpy},
                               {"ENUM_CUDA_MEMCPY_OPER", &out.has_memcpy_enum},
                               {"CUPTI_ACTIVITY_KIND_MEMSET", &out.has_memset},
                               {"NVTX_EVENTS", &out.has_nvtx},
                               {"ThreadNames", &out.has_thread_names},
                               {"PROCESSES", &out.has_processes},
                               {"TARGET_INFO_GPU", &out.has_gpu_info}};
  for (const auto& p : presence) {
    STRATA_ASSIGN_OR_RETURN(*p.flag, loader.has_table(p.table));
  }

  const unsigned t = options.tables;
  if ((t & kRuntimeTable) && out.has_runtime) STRATA_TRY(load_runtime(loader, out, options));
  if ((t & kKernelTable) && out.has_kernels) STRATA_TRY(load_kernels(loader, out, options));
  if ((t & kMemcpyTable) && out.has_memcpy) {
    STRATA_TRY(
        load_mem_ops(loader, "CUPTI_ACTIVITY_KIND_MEMCPY", true, options.timeline, out.memcpy));
    if (out.has_memcpy_enum) STRATA_TRY(load_memcpy_labels(loader, out));
  }
  if ((t & kMemsetTable) && out.has_memset) {
    STRATA_TRY(
        load_mem_ops(loader, "CUPTI_ACTIVITY_KIND_MEMSET", false, options.timeline, out.memset));
  }
  if ((t & kNvtxTable) && out.has_nvtx) STRATA_TRY(load_nvtx(loader, out));
  if (options.timeline) {
    if (out.has_thread_names) STRATA_TRY(load_thread_names(loader, out));
    if (out.has_processes) STRATA_TRY(load_process_names(loader, out));
    if (out.has_gpu_info) STRATA_TRY(load_sm_counts(loader, out));
  }
  STRATA_TRY(load_strings(loader, out));
  return out;
}

Result<bool> cuda_data_present(const TraceReader& reader) {
  const std::string name = printable(reader.path());
  for (const char* table : {"CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL"}) {
    STRATA_ASSIGN_OR_RETURN(bool exists, sql::table_exists(reader.handle(), table, name));
    if (!exists) continue;
    STRATA_ASSIGN_OR_RETURN(
        auto stmt,
        sql::Statement::prepare(reader.handle(), fmt::format("SELECT 1 FROM {} LIMIT 1", table),
                                fmt::format("{}: {}", name, table)));
    int rc = stmt.step();
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE)
      return sql::error(reader.handle(), fmt::format("{}: reading {}", name, table));
  }
  return false;
}

std::unordered_map<std::string, std::string> mangled_kernel_names(const GpuTables& by_demangled,
                                                                  const GpuTables& by_mangled) {
  std::unordered_map<std::string, std::string> out;
  const KernelColumns& d = by_demangled.kernels;
  const KernelColumns& m = by_mangled.kernels;
  if (d.start.size() != m.start.size()) return out;
  std::unordered_set<std::string> conflicting;
  for (size_t i = 0; i < d.start.size(); ++i) {
    const std::string* demangled = by_demangled.string(d.name_id[i]);
    const std::string* mangled = by_mangled.string(m.name_id[i]);
    if (demangled == nullptr || mangled == nullptr || d.start[i] != m.start[i]) continue;
    auto [at, added] = out.emplace(*demangled, *mangled);
    if (!added && at->second != *mangled) conflicting.insert(*demangled);
  }
  for (const std::string& name : conflicting) out.erase(name);
  return out;
}

}  // namespace strata::store
