#include "cli/chrome_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/global_id.h"
#include "common/strings.h"
#include "store/gpu_tables.h"
#include "store/sqlite_util.h"

namespace strata::cli {
namespace {

// Read here, not through store::load_gpu_tables: that loader keeps only the
// columns the nsys summaries group by, while a timeline needs every row's
// stream, thread, launch configuration and resolved name. Like it, it reads
// nsys's export schema from strata traces and Nsight Systems exports alike,
// treats absent tables (nsys creates them lazily) as empty and absent
// optional columns as NULL, and reads every value as an integer whatever its
// stored type, so a hostile file gives odd numbers, never a crash.

struct Column {
  const char* name;
  bool required = false;
};

class TimelineLoader {
 public:
  TimelineLoader(sqlite3* db, const std::string& file) : db_(db), file_(printable(file)) {}

  Result<exporter::GpuTimeline> load() {
    for (const char* table :
         {"StringIds", "CUPTI_ACTIVITY_KIND_RUNTIME", "CUPTI_ACTIVITY_KIND_KERNEL",
          "CUPTI_ACTIVITY_KIND_MEMCPY", "ENUM_CUDA_MEMCPY_OPER", "CUPTI_ACTIVITY_KIND_MEMSET",
          "NVTX_EVENTS", "ThreadNames", "PROCESSES"}) {
      auto has = has_table(table);
      if (!has) return has.error();
      if (*has) tables_.insert(table);
    }
    using Step = Status (TimelineLoader::*)();
    for (Step step : {&TimelineLoader::load_strings, &TimelineLoader::load_runtime,
                      &TimelineLoader::load_kernels, &TimelineLoader::load_memcpy_labels,
                      &TimelineLoader::load_memcpys, &TimelineLoader::load_memsets,
                      &TimelineLoader::load_nvtx, &TimelineLoader::load_names}) {
      if (auto st = (this->*step)(); !st) return st.error();
    }
    return std::move(out_);
  }

 private:
  Result<bool> has_table(const char* table) { return store::sql::table_exists(db_, table, file_); }

  Result<store::sql::Statement> prepare(const std::string& text, std::string_view table) {
    return store::sql::Statement::prepare(db_, text, fmt::format("{}: {}", file_, table));
  }

  Error fail(std::string_view table) const {
    return store::sql::error(db_, fmt::format("{}: reading {}", file_, table));
  }

  // SELECT of `columns` from `table`; a missing optional column reads as NULL.
  Result<store::sql::Statement> select(const char* table, std::initializer_list<Column> columns,
                                       const std::string& tail = "") {
    auto info =
        prepare(fmt::format("PRAGMA table_info({})", store::sql::quote_identifier(table)), table);
    if (!info) return info.error();
    std::set<std::string> have;
    int rc;
    while ((rc = info->step()) == SQLITE_ROW) have.insert(info->column_text(1));
    if (rc != SQLITE_DONE) return fail(table);
    std::string list;
    for (const Column& c : columns) {
      if (!list.empty()) list += ", ";
      if (have.count(c.name)) {
        list += store::sql::quote_identifier(c.name);
      } else if (c.required) {
        return make_error(fmt::format("{}: table {} has no column {}", file_, table, c.name));
      } else {
        list += "NULL";
      }
    }
    return prepare(fmt::format("SELECT {} FROM {} {}", list, table, tail), table);
  }

  // Steps through the rows of `stmt`, calling `row` on each.
  template <class Row>
  Status each_row(store::sql::Statement& stmt, const char* table, Row&& row) {
    int rc;
    while ((rc = stmt.step()) == SQLITE_ROW) row(stmt);
    if (rc != SQLITE_DONE) return fail(table);
    return Ok{};
  }

  // The StringIds value of an id column; "" where NULL or not in StringIds.
  std::string string_at(const store::sql::Statement& s, int index) const {
    if (s.column_null(index)) return {};
    auto it = strings_.find(s.column_int(index));
    return it == strings_.end() ? std::string() : it->second;
  }

  Status load_strings() {
    if (!tables_.count("StringIds")) return Ok{};
    auto s = select("StringIds", {{"id", true}, {"value", true}});
    if (!s) return s.error();
    return each_row(*s, "StringIds", [&](const store::sql::Statement& r) {
      strings_.emplace(r.column_int(0), r.column_text(1));
    });
  }

  Status load_runtime() {
    static constexpr const char* kTable = "CUPTI_ACTIVITY_KIND_RUNTIME";
    if (!tables_.count(kTable)) return Ok{};
    auto s = select(kTable, {{"start", true},
                             {"end", true},
                             {"globalTid"},
                             {"correlationId"},
                             {"nameId", true},
                             {"eventClass"}});
    if (!s) return s.error();
    return each_row(*s, kTable, [&](const store::sql::Statement& r) {
      exporter::TimelineApiCall c;
      c.start = r.column_int(0);
      c.end = r.column_int(1);
      c.global_tid = r.column_int(2);
      c.correlation_id = r.column_int(3);
      c.name = string_at(r, 4);
      c.driver = r.column_int(5) == 1;  // ENUM_NSYS_EVENT_CLASS: 0 runtime, 1 driver
      out_.api_calls.push_back(std::move(c));
    });
  }

  // The columns every GPU activity table shares, in this order.
  static constexpr Column kGpuColumns[] = {{"start", true}, {"end", true}, {"globalPid"},
                                           {"deviceId"},    {"streamId"},  {"correlationId"}};

  static void read_gpu_columns(const store::sql::Statement& r, exporter::TimelineGpuOp& op) {
    op.start = r.column_int(0);
    op.end = r.column_int(1);
    op.global_pid = r.column_int(2);
    op.device_id = r.column_int(3);
    op.stream_id = r.column_int(4);
    op.correlation_id = r.column_int(5);
  }

  Status load_kernels() {
    static constexpr const char* kTable = "CUPTI_ACTIVITY_KIND_KERNEL";
    if (!tables_.count(kTable)) return Ok{};
    const auto& g = kGpuColumns;
    auto s = select(kTable, {g[0],
                             g[1],
                             g[2],
                             g[3],
                             g[4],
                             g[5],
                             {"demangledName", true},
                             {"gridX"},
                             {"gridY"},
                             {"gridZ"},
                             {"blockX"},
                             {"blockY"},
                             {"blockZ"},
                             {"registersPerThread"},
                             {"staticSharedMemory"},
                             {"dynamicSharedMemory"}});
    if (!s) return s.error();
    return each_row(*s, kTable, [&](const store::sql::Statement& r) {
      exporter::TimelineGpuOp k;
      read_gpu_columns(r, k);
      k.kind = exporter::GpuOpKind::kKernel;
      k.name = string_at(r, 6);  // demangled, as cuda_gpu_kern_sum names kernels
      for (int i = 0; i < 3; ++i) {
        k.grid[i] = r.column_int(7 + i);
        k.block[i] = r.column_int(10 + i);
      }
      k.registers_per_thread = r.column_int(13);
      k.static_shared_memory = r.column_int(14);
      k.dynamic_shared_memory = r.column_int(15);
      out_.gpu_ops.push_back(std::move(k));
    });
  }

  Status load_memcpy_labels() {
    static constexpr const char* kTable = "ENUM_CUDA_MEMCPY_OPER";
    if (!tables_.count(kTable)) return Ok{};
    auto s = select(kTable, {{"id", true}, {"label", true}});
    if (!s) return s.error();
    return each_row(*s, kTable, [&](const store::sql::Statement& r) {
      if (!r.column_null(1)) copy_labels_[r.column_int(0)] = r.column_text(1);
    });
  }

  Status load_memcpys() {
    static constexpr const char* kTable = "CUPTI_ACTIVITY_KIND_MEMCPY";
    if (!tables_.count(kTable)) return Ok{};
    const auto& g = kGpuColumns;
    auto s = select(kTable, {g[0], g[1], g[2], g[3], g[4], g[5], {"bytes"}, {"copyKind"}});
    if (!s) return s.error();
    return each_row(*s, kTable, [&](const store::sql::Statement& r) {
      exporter::TimelineGpuOp c;
      read_gpu_columns(r, c);
      c.kind = exporter::GpuOpKind::kMemcpy;
      c.bytes = r.column_int(6);
      // nsys's names ("[CUDA memcpy Host-to-Device]"); a kind the enum lacks
      // still shows, unlabelled, rather than vanishing from the timeline.
      auto label = copy_labels_.find(r.column_int(7));
      if (label != copy_labels_.end()) c.copy_kind = label->second;
      c.name = c.copy_kind.empty() ? "[CUDA memcpy]" : "[CUDA memcpy " + c.copy_kind + "]";
      out_.gpu_ops.push_back(std::move(c));
    });
  }

  Status load_memsets() {
    static constexpr const char* kTable = "CUPTI_ACTIVITY_KIND_MEMSET";
    if (!tables_.count(kTable)) return Ok{};
    const auto& g = kGpuColumns;
    auto s = select(kTable, {g[0], g[1], g[2], g[3], g[4], g[5], {"bytes"}});
    if (!s) return s.error();
    return each_row(*s, kTable, [&](const store::sql::Statement& r) {
      exporter::TimelineGpuOp m;
      read_gpu_columns(r, m);
      m.kind = exporter::GpuOpKind::kMemset;
      m.bytes = r.column_int(6);
      m.name = "[CUDA memset]";
      out_.gpu_ops.push_back(std::move(m));
    });
  }

  // Ranges as nvtx_sum sees them (docs/reports.md): the text is StringIds'
  // value of textId, else the text column; the domain is the text of the
  // earliest domain-creation event with its id in the same process; a range
  // never closed lasts until the table's last timestamp.
  Status load_nvtx() {
    static constexpr const char* kTable = "NVTX_EVENTS";
    if (!tables_.count(kTable)) return Ok{};
    // All rows, marks included: the last timestamp of any of them closes
    // ranges left open, as in nsys.
    auto s = select(kTable,
                    {{"start", true},
                     {"end"},
                     {"eventType", true},
                     {"globalTid"},
                     {"textId"},
                     {"text"},
                     {"domainId"}},
                    "ORDER BY start");
    if (!s) return s.error();
    std::map<std::pair<int64_t, int64_t>, std::string> domains;           // (globalPid, domainId)
    std::vector<std::pair<exporter::TimelineNvtxRange, int64_t>> ranges;  // with domainId
    int64_t last = INT64_MIN;
    auto st = each_row(*s, kTable, [&](const store::sql::Statement& r) {
      exporter::TimelineNvtxRange n;
      n.start = r.column_int(0);
      n.end = r.column_null(1) ? INT64_MIN : r.column_int(1);
      last = std::max({last, n.start, n.end});
      int64_t type = r.column_int(2);
      bool push_pop = type == store::kNvtxPushPopRange || type == store::kNvtxtPushPopRange;
      bool start_end = type == store::kNvtxStartEndRange || type == store::kNvtxtStartEndRange;
      if (!push_pop && !start_end && type != store::kNvtxDomainCreate) return;
      n.global_tid = r.column_int(3);
      n.name = r.column_null(4) ? r.column_text(5) : string_at(r, 4);
      int64_t domain = r.column_int(6);
      if (type == store::kNvtxDomainCreate) {
        // Rows come by start: the earliest creation names the domain.
        domains.try_emplace({global_id::process_of(n.global_tid), domain}, n.name);
        return;
      }
      n.push_pop = push_pop;
      ranges.emplace_back(std::move(n), domain);
    });
    if (!st) return st;
    for (auto& [n, domain] : ranges) {
      if (n.end == INT64_MIN) {
        n.end = std::max(n.start, last);
        n.unterminated = true;
      }
      if (domain != 0) {
        auto it = domains.find({global_id::process_of(n.global_tid), domain});
        n.domain = it != domains.end() ? it->second : fmt::format("domain {}", domain);
      }
      out_.nvtx_ranges.push_back(std::move(n));
    }
    return Ok{};
  }

  Status load_names() {
    if (tables_.count("ThreadNames")) {
      // A renamed thread has several rows; the highest priority, then the
      // last row, wins.
      auto s = select("ThreadNames", {{"nameId", true}, {"globalTid", true}, {"priority"}},
                      "ORDER BY coalesce(priority, 0), rowid");
      if (!s) return s.error();
      auto st = each_row(*s, "ThreadNames", [&](const store::sql::Statement& r) {
        out_.thread_names[r.column_int(1)] = string_at(r, 0);
      });
      if (!st) return st;
    }
    if (tables_.count("PROCESSES")) {
      auto s = select("PROCESSES", {{"globalPid", true}, {"name"}});
      if (!s) return s.error();
      auto st = each_row(*s, "PROCESSES", [&](const store::sql::Statement& r) {
        out_.process_names[r.column_int(0)] = r.column_text(1);
      });
      if (!st) return st;
    }
    return Ok{};
  }

  sqlite3* db_;
  std::string file_;
  std::set<std::string> tables_;
  std::unordered_map<int64_t, std::string> strings_;
  std::unordered_map<int64_t, std::string> copy_labels_;
  exporter::GpuTimeline out_;
};

}  // namespace

Result<exporter::GpuTimeline> load_gpu_timeline(sqlite3* db, const std::string& file) {
  return TimelineLoader(db, file).load();
}

}  // namespace strata::cli
