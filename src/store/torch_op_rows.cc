#include "store/torch_op_rows.h"

#include <fmt/format.h>

#include <functional>
#include <unordered_map>

#include "common/strings.h"
#include "store/kernel_names.h"
#include "store/sqlite_util.h"

namespace strata::store {
namespace {

Status insert_all(TraceWriter& writer, const char* sql, size_t count,
                  const std::function<void(sql::Statement&, size_t)>& bind) {
  if (count == 0) return Ok{};
  STRATA_ASSIGN_OR_RETURN(auto stmt,
                          sql::Statement::prepare(writer.handle(), sql, printable(writer.path())));
  for (size_t i = 0; i < count; ++i) {
    bind(stmt, i);
    if (stmt.step() != SQLITE_DONE) return sql::error(writer.handle(), printable(writer.path()));
    stmt.reset();
  }
  return Ok{};
}

// Runs `sql` over `table` of `db` (the file `path`) when the table exists,
// calling `row` per result row.
Status read_table(sqlite3* db, const std::string& path, const char* table, const std::string& sql,
                  const std::function<void(const sql::Statement&)>& row) {
  const std::string name = printable(path);
  STRATA_ASSIGN_OR_RETURN(bool exists, sql::table_exists(db, table, name));
  if (!exists) return Ok{};
  auto stmt = sql::Statement::prepare(db, sql, name);
  if (!stmt) return make_error(fmt::format("{}: {}: {}", name, table, stmt.error().message));
  int rc;
  while ((rc = stmt->step()) == SQLITE_ROW) row(*stmt);
  if (rc != SQLITE_DONE) return sql::error(db, fmt::format("{}: {}", name, table));
  return Ok{};
}

Status read_table(const TraceReader& reader, const char* table, const std::string& sql,
                  const std::function<void(const sql::Statement&)>& row) {
  return read_table(reader.handle(), reader.path(), table, sql, row);
}

// Kineto's names (libkineto's memcpyKindString / memoryKindString) by nsys's
// enum ids (ENUM_CUDA_MEMCPY_OPER, ENUM_CUDA_MEM_KIND).
const char* copy_kind_name(int64_t kind) {
  static const char* const kNames[] = {"Unknown", "HtoD", "DtoH", "HtoA", "AtoH", "AtoA",
                                       "AtoD",    "DtoA", "DtoD", "HtoH", "PtoP"};
  return kind >= 0 && kind < 11 ? kNames[kind] : "Unknown";
}
const char* mem_kind_name(int64_t kind) {
  static const char* const kNames[] = {"Pageable", "Pinned",        "Device",         "Array",
                                       "Managed",  "Device Static", "Managed Static", "Unknown"};
  return kind >= 0 && kind < 8 ? kNames[kind] : "Unknown";
}

}  // namespace

Result<ClockLinkRows> load_clock_link_rows(TraceWriter& writer) {
  ClockLinkRows out;
  sqlite3* db = writer.handle();
  STRATA_TRY(read_table(db, writer.path(), "strata_external_correlation",
                        "SELECT DISTINCT globalPid FROM strata_external_correlation",
                        [&](const sql::Statement& s) { out.pushed_pids.push_back(s.column_int(0)); }));
  STRATA_TRY(read_table(db, writer.path(), "strata_torch_ops",
                        "SELECT globalTid, start, end, depth, externalId, flags "
                        "FROM strata_torch_ops WHERE externalId != 0",
                        [&](const sql::Statement& s) {
                          out.ops.push_back({s.column_int(0), s.column_int(1), s.column_int(2),
                                             s.column_int(3), s.column_int(4), s.column_int(5)});
                        }));
  // Runtime and driver calls alike (nsys's table holds both, by eventClass).
  STRATA_TRY(read_table(db, writer.path(), "CUPTI_ACTIVITY_KIND_RUNTIME",
                        "SELECT globalTid, start, correlationId FROM CUPTI_ACTIVITY_KIND_RUNTIME "
                        "WHERE globalTid IS NOT NULL AND correlationId IS NOT NULL",
                        [&](const sql::Statement& s) {
                          out.calls.push_back({s.column_int(0), s.column_int(1), s.column_int(2)});
                        }));
  return out;
}

std::string torch_memcpy_name(int64_t copy_kind, int64_t src_kind, int64_t dst_kind) {
  return fmt::format("Memcpy {} ({} -> {})", copy_kind_name(copy_kind), mem_kind_name(src_kind),
                     mem_kind_name(dst_kind));
}

std::string torch_memset_name(int64_t mem_kind) {
  return fmt::format("Memset ({})", mem_kind_name(mem_kind));
}

Status write_torch_ops(TraceWriter& writer, std::span<const TorchOpRow> rows) {
  return insert_all(writer,
                    "INSERT INTO strata_torch_ops (start, end, globalTid, nameId, externalId, seq, "
                    "depth, scope, flags, shapesId, stackId) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                    rows.size(), [&](sql::Statement& s, size_t i) {
                      const TorchOpRow& r = rows[i];
                      s.bind(1, r.start);
                      s.bind(2, r.end);
                      s.bind(3, r.global_tid);
                      s.bind(4, r.name_id);
                      s.bind(5, r.external_id);
                      s.bind(6, r.seq);
                      s.bind(7, r.depth);
                      s.bind(8, r.scope);
                      s.bind(9, r.flags);
                      s.bind(10, r.shapes_id);
                      s.bind(11, r.stack_id);
                    });
}

Status write_torch_status(TraceWriter& writer, const TorchStatusRow& row) {
  return insert_all(writer,
                    "INSERT INTO strata_torch_status (globalPid, status, text) VALUES (?,?,?)", 1,
                    [&](sql::Statement& s, size_t) {
                      s.bind(1, row.global_pid);
                      s.bind(2, row.status);
                      s.bind(3, std::string_view(row.text));
                    });
}

Status write_external_correlations(TraceWriter& writer,
                                   std::span<const ExternalCorrelationRow> rows) {
  return insert_all(writer,
                    "INSERT INTO strata_external_correlation (globalPid, externalKind, externalId, "
                    "correlationId) VALUES (?,?,?,?)",
                    rows.size(), [&](sql::Statement& s, size_t i) {
                      s.bind(1, rows[i].global_pid);
                      s.bind(2, rows[i].external_kind);
                      s.bind(3, rows[i].external_id);
                      s.bind(4, rows[i].correlation_id);
                    });
}

Result<bool> torch_ops_present(const TraceReader& reader) {
  bool any = false;
  STRATA_TRY(read_table(reader, "strata_torch_ops", "SELECT 1 FROM strata_torch_ops LIMIT 1",
                        [&](const sql::Statement&) { any = true; }));
  return any;
}

Result<TorchOpRows> load_torch_op_rows(const TraceReader& reader) {
  TorchOpRows out;
  std::unordered_map<int64_t, std::string> strings;
  STRATA_TRY(read_table(
      reader, "StringIds", "SELECT id, value FROM StringIds",
      [&](const sql::Statement& s) { strings.emplace(s.column_int(0), s.column_text(1)); }));
  auto text = [&](int64_t id) -> std::string {
    auto it = strings.find(id);
    return it == strings.end() ? std::string("<unresolved name>") : it->second;
  };
  STRATA_TRY(read_table(
      reader, "strata_torch_ops",
      "SELECT start, end, globalTid, nameId, externalId, seq, scope, flags, shapesId, stackId "
      "FROM strata_torch_ops ORDER BY rowid",
      [&](const sql::Statement& s) {
        TorchOp op;
        op.start = s.column_int(0);
        op.end = s.column_int(1);
        op.global_tid = s.column_int(2);
        op.name = text(s.column_int(3));
        op.external_id = s.column_int(4);
        op.seq = s.column_int(5);
        op.scope = s.column_int(6);
        op.flags = s.column_int(7);
        if (!s.column_null(8)) op.shapes = text(s.column_int(8));
        if (!s.column_null(9)) op.stack = text(s.column_int(9));
        out.ops.push_back(std::move(op));
      }));
  STRATA_TRY(
      read_table(reader, "strata_torch_status",
                 "SELECT globalPid, status, text FROM strata_torch_status ORDER BY rowid",
                 [&](const sql::Statement& s) {
                   out.statuses.push_back({s.column_int(0), s.column_int(1), s.column_text(2)});
                 }));
  STRATA_TRY(read_table(
      reader, "strata_external_correlation",
      "SELECT globalPid, externalKind, externalId, correlationId FROM strata_external_correlation",
      [&](const sql::Statement& s) {
        out.correlations.push_back(
            {s.column_int(0), s.column_int(1), s.column_int(2), s.column_int(3)});
      }));
  // Runtime calls, and of the driver calls only kernel launches: what
  // Kineto records (torch 2.11's table on the H200 lists cuLaunchKernel for
  // the kernels cuBLASLt launches through the driver, and no other cu* call).
  STRATA_TRY(read_table(
      reader, "CUPTI_ACTIVITY_KIND_RUNTIME",
      "SELECT start, end, globalTid, correlationId, nameId, coalesce(eventClass, 0) "
      "FROM CUPTI_ACTIVITY_KIND_RUNTIME",
      [&](const sql::Statement& s) {
        TorchApiCall call{s.column_int(0), s.column_int(1), s.column_int(2), s.column_int(3), ""};
        call.name = text(s.column_int(4));
        // CUPTI's "_v7000"-style version suffixes go, as Kineto drops them;
        // short ones are part of the name (torch shows cudaGetDeviceProperties_v2).
        if (auto v = call.name.rfind("_v");
            v != std::string::npos && call.name.size() - v >= 6 &&
            call.name.find_first_not_of("0123456789", v + 2) == std::string::npos) {
          call.name.resize(v);
        }
        if (s.column_int(5) != 0 && call.name.rfind("cuLaunch", 0) != 0) return;
        out.runtime.push_back(std::move(call));
      }));
  STRATA_TRY(read_table(reader, "CUPTI_ACTIVITY_KIND_KERNEL",
                        "SELECT start, end, globalPid, correlationId, demangledName "
                        "FROM CUPTI_ACTIVITY_KIND_KERNEL",
                        [&](const sql::Statement& s) {
                          out.device.push_back({s.column_int(0), s.column_int(1), s.column_int(2),
                                                s.column_int(3), text(s.column_int(4))});
                        }));
  STRATA_TRY(
      read_table(reader, "CUPTI_ACTIVITY_KIND_MEMCPY",
                 "SELECT start, end, globalPid, correlationId, copyKind, srcKind, dstKind "
                 "FROM CUPTI_ACTIVITY_KIND_MEMCPY",
                 [&](const sql::Statement& s) {
                   out.device.push_back(
                       {s.column_int(0), s.column_int(1), s.column_int(2), s.column_int(3),
                        torch_memcpy_name(s.column_int(4), s.column_int(5), s.column_int(6))});
                 }));
  STRATA_TRY(read_table(reader, "CUPTI_ACTIVITY_KIND_MEMSET",
                        "SELECT start, end, globalPid, correlationId, memKind "
                        "FROM CUPTI_ACTIVITY_KIND_MEMSET",
                        [&](const sql::Statement& s) {
                          out.device.push_back({s.column_int(0), s.column_int(1), s.column_int(2),
                                                s.column_int(3),
                                                torch_memset_name(s.column_int(4))});
                        }));
  return out;
}

}  // namespace strata::store
