#include "store/cpu_profile_rows.h"

#include <fmt/format.h>

#include <cmath>
#include <map>

#include "common/global_id.h"
#include "common/strings.h"
#include "store/sqlite_util.h"

namespace strata::store {
namespace {

// The CPU profile's scalars live in strata_counters under these names; the
// rate is stored in mHz so it stays an integer.
constexpr const char* kRateMilliHz = "cpu.rate_mhz";
constexpr const char* kWallNs = "cpu.wall_ns";
constexpr const char* kCpuNs = "cpu.cpu_ns";
constexpr const char* kMinorFaults = "cpu.minor_faults";
constexpr const char* kLostSamples = "cpu.lost_samples";
constexpr const char* kThrottles = "cpu.throttles";
constexpr const char* kInstrumentOverheadPs = "instrument.overhead_ps_per_call";

Result<int64_t> optional_string(TraceWriter& writer, const std::string& text) {
  if (text.empty()) return int64_t{-1};
  return writer.intern(text);
}

}  // namespace

Status write_cpu_profile(TraceWriter& writer, const CpuProfileRows& rows) {
  sqlite3* db = writer.handle();
  STRATA_ASSIGN_OR_RETURN(
      sql::Statement mapping,
      sql::Statement::prepare(
          db,
          "INSERT INTO strata_cpu_mappings (id, global_pid, start, end, file_offset, path_id) "
          "VALUES (?, 0, 0, 0, 0, ?)",
          "strata_cpu_mappings"));
  STRATA_ASSIGN_OR_RETURN(
      sql::Statement frame,
      sql::Statement::prepare(
          db,
          "INSERT INTO strata_cpu_frames (id, mapping_id, address, kind, function_id, file_id, "
          "line, inlined, python_name_id, sample_line) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
          "strata_cpu_frames"));
  STRATA_ASSIGN_OR_RETURN(
      sql::Statement stack,
      sql::Statement::prepare(
          db, "INSERT INTO strata_cpu_stacks (id, depth, frame_id) VALUES (?, ?, ?)",
          "strata_cpu_stacks"));
  STRATA_ASSIGN_OR_RETURN(
      sql::Statement sample,
      sql::Statement::prepare(
          db,
          "INSERT INTO strata_cpu_samples (timestamp, global_tid, stack_id, weight, source, cut) "
          "VALUES (?, ?, ?, ?, ?, ?)",
          "strata_cpu_samples"));
  STRATA_ASSIGN_OR_RETURN(sql::Statement call,
                          sql::Statement::prepare(db,
                                                  "INSERT INTO strata_cpu_calls (global_tid, "
                                                  "timestamp, frame_id, kind) VALUES (?, ?, ?, ?)",
                                                  "strata_cpu_calls"));
  STRATA_ASSIGN_OR_RETURN(
      sql::Statement thread,
      sql::Statement::prepare(
          db, "INSERT INTO ThreadNames (nameId, priority, globalTid) VALUES (?, NULL, ?)",
          "ThreadNames"));
  STRATA_ASSIGN_OR_RETURN(
      sql::Statement process,
      sql::Statement::prepare(db, "INSERT INTO PROCESSES (globalPid, pid, name) VALUES (?, ?, ?)",
                              "PROCESSES"));

  auto step = [&](sql::Statement& st, const char* what) -> Status {
    int rc = st.step();
    st.reset();
    if (rc != SQLITE_DONE) return sql::error(db, what);
    return Ok{};
  };

  // One mapping row per module: frames name their module through it.
  std::map<std::string, int64_t> module_ids;
  for (const auto& f : rows.frames) {
    if (f.module.empty() || module_ids.count(f.module)) continue;
    STRATA_ASSIGN_OR_RETURN(int64_t path, writer.intern(f.module));
    int64_t id = static_cast<int64_t>(module_ids.size());
    module_ids[f.module] = id;
    mapping.bind(1, id);
    mapping.bind(2, path);
    STRATA_TRY(step(mapping, "strata_cpu_mappings"));
  }
  for (size_t i = 0; i < rows.frames.size(); ++i) {
    const auto& f = rows.frames[i];
    STRATA_ASSIGN_OR_RETURN(int64_t function, optional_string(writer, f.function));
    STRATA_ASSIGN_OR_RETURN(int64_t file, optional_string(writer, f.file));
    frame.bind(1, static_cast<int64_t>(i));
    if (f.module.empty()) {
      frame.bind_null(2);
    } else {
      frame.bind(2, module_ids[f.module]);
    }
    frame.bind(3, static_cast<int64_t>(f.module_offset));
    frame.bind(4, std::string_view(f.kind));
    if (function < 0)
      frame.bind_null(5);
    else
      frame.bind(5, function);
    if (file < 0)
      frame.bind_null(6);
    else
      frame.bind(6, file);
    frame.bind(7, int64_t{f.line});
    frame.bind(8, int64_t{f.inlined ? 1 : 0});
    STRATA_ASSIGN_OR_RETURN(int64_t python_name, optional_string(writer, f.python_name));
    if (python_name < 0)
      frame.bind_null(9);
    else
      frame.bind(9, python_name);
    frame.bind(10, int64_t{f.sample_line});
    STRATA_TRY(step(frame, "strata_cpu_frames"));
  }
  for (size_t i = 0; i < rows.stacks.size(); ++i) {
    for (size_t depth = 0; depth < rows.stacks[i].size(); ++depth) {
      stack.bind(1, static_cast<int64_t>(i));
      stack.bind(2, static_cast<int64_t>(depth));
      stack.bind(3, rows.stacks[i][depth]);
      STRATA_TRY(step(stack, "strata_cpu_stacks"));
    }
  }
  for (const auto& s : rows.samples) {
    sample.bind(1, s.time_ns);
    sample.bind(2, global_tid(s.pid, s.tid));
    if (s.stack < 0)
      sample.bind_null(3);
    else
      sample.bind(3, s.stack);
    sample.bind(4, s.weight_ns);
    sample.bind(5, std::string_view(rows.source));
    sample.bind(6, int64_t{s.cut ? 1 : 0});
    STRATA_TRY(step(sample, "strata_cpu_samples"));
  }
  for (const auto& c : rows.calls) {
    call.bind(1, global_tid(c.pid, c.tid));
    call.bind(2, c.time_ns);
    call.bind(3, c.frame);
    call.bind(4, int64_t{c.exit ? 1 : 0});
    STRATA_TRY(step(call, "strata_cpu_calls"));
  }
  // The mode of a profile without samples.
  if (rows.samples.empty() && !rows.calls.empty()) {
    STRATA_TRY(writer.add_counter("cpu.instrumented", 1));
  }
  for (const auto& t : rows.threads) {
    STRATA_ASSIGN_OR_RETURN(int64_t name, writer.intern(t.name));
    thread.bind(1, name);
    thread.bind(2, global_tid(t.pid, t.tid));
    STRATA_TRY(step(thread, "ThreadNames"));
  }
  for (const auto& [pid, command] : rows.processes) {
    process.bind(1, global_tid(pid, 0));
    process.bind(2, int64_t{pid});
    process.bind(3, std::string_view(command));
    STRATA_TRY(step(process, "PROCESSES"));
  }
  for (auto [name, value] : {std::pair{kRateMilliHz, static_cast<int64_t>(rows.rate_hz * 1000)},
                             std::pair{kWallNs, rows.wall_ns}, std::pair{kCpuNs, rows.cpu_ns},
                             std::pair{kLostSamples, static_cast<int64_t>(rows.lost_samples)},
                             std::pair{kThrottles, static_cast<int64_t>(rows.throttles)}}) {
    STRATA_TRY(writer.add_counter(name, value));
  }
  if (rows.minor_faults) {
    STRATA_TRY(writer.add_counter(kMinorFaults, *rows.minor_faults));
  }
  if (rows.instrument_overhead_ns_per_call > 0) {
    STRATA_TRY(writer.add_counter(
        kInstrumentOverheadPs,
        static_cast<int64_t>(std::llround(rows.instrument_overhead_ns_per_call * 1000))));
  }
  return Ok{};
}

Result<std::optional<CpuProfileRows>> read_cpu_profile(const TraceReader& reader) {
  sqlite3* db = reader.handle();
  const std::string name = printable(reader.path());
  const std::string where = name + ": ";
  // Only a missing table means "no CPU profile" (an nsys export, an older
  // strata file); a table that is there but cannot be read is an error.
  std::string count_sql;
  for (const char* table : {"strata_cpu_samples", "strata_cpu_calls"}) {
    STRATA_ASSIGN_OR_RETURN(bool exists, sql::table_exists(db, table, name));
    if (!exists) continue;
    count_sql += count_sql.empty() ? "SELECT " : " + ";
    count_sql += fmt::format("(SELECT count(*) FROM {})", table);
  }
  if (count_sql.empty()) return std::optional<CpuProfileRows>{};
  STRATA_ASSIGN_OR_RETURN(sql::Statement count,
                          sql::Statement::prepare(db, count_sql, where + "strata_cpu_samples"));
  int counted = count.step();
  if (counted != SQLITE_ROW) return sql::error(db, where + "reading strata_cpu_samples");
  if (count.column_int(0) == 0) return std::optional<CpuProfileRows>{};

  CpuProfileRows rows;
  // Schema v1 traces have none of strata_cpu_frames.python_name_id and
  // sample_line, strata_cpu_samples.cut (they came with v2); each is looked
  // for on its own.
  STRATA_ASSIGN_OR_RETURN(bool has_python_names,
                          sql::column_exists(db, "strata_cpu_frames", "python_name_id", name));
  STRATA_ASSIGN_OR_RETURN(bool has_sample_line,
                          sql::column_exists(db, "strata_cpu_frames", "sample_line", name));
  STRATA_ASSIGN_OR_RETURN(bool has_cut, sql::column_exists(db, "strata_cpu_samples", "cut", name));
  STRATA_ASSIGN_OR_RETURN(
      sql::Statement frames,
      sql::Statement::prepare(
          db,
          std::string("SELECT f.id, f.address, f.kind, fn.value, fl.value, f.line, f.inlined, "
                      "mp.value, ") +
              (has_python_names ? "pn.value, " : "NULL, ") +
              (has_sample_line ? "f.sample_line " : "0 ") +
              "FROM strata_cpu_frames f "
              "LEFT JOIN StringIds fn ON fn.id = f.function_id "
              "LEFT JOIN StringIds fl ON fl.id = f.file_id " +
              (has_python_names ? "LEFT JOIN StringIds pn ON pn.id = f.python_name_id " : "") +
              "LEFT JOIN strata_cpu_mappings m ON m.id = f.mapping_id "
              "LEFT JOIN StringIds mp ON mp.id = m.path_id ORDER BY f.id",
          where + "strata_cpu_frames"));
  int rc;
  while ((rc = frames.step()) == SQLITE_ROW) {
    int64_t id = frames.column_int(0);
    if (id != static_cast<int64_t>(rows.frames.size())) {
      return make_error(where + "strata_cpu_frames ids are not dense at id " + std::to_string(id));
    }
    CpuFrameRow f;
    f.module_offset = static_cast<uint64_t>(frames.column_int(1));
    f.kind = frames.column_text(2);
    f.function = frames.column_text(3);
    f.file = frames.column_text(4);
    f.line = static_cast<int>(frames.column_int(5));
    f.inlined = frames.column_int(6) != 0;
    f.module = frames.column_text(7);
    f.python_name = frames.column_text(8);
    f.sample_line = static_cast<int>(frames.column_int(9));
    rows.frames.push_back(std::move(f));
  }
  if (rc != SQLITE_DONE) return sql::error(db, where + "strata_cpu_frames");

  STRATA_ASSIGN_OR_RETURN(
      sql::Statement stacks,
      sql::Statement::prepare(
          db, "SELECT id, depth, frame_id FROM strata_cpu_stacks ORDER BY id, depth",
          where + "strata_cpu_stacks"));
  while ((rc = stacks.step()) == SQLITE_ROW) {
    int64_t id = stacks.column_int(0);
    int64_t frame = stacks.column_int(2);
    if (id < 0 || id > static_cast<int64_t>(rows.stacks.size()) || frame < 0 ||
        frame >= static_cast<int64_t>(rows.frames.size())) {
      return make_error(where + "strata_cpu_stacks row (" + std::to_string(id) + ", " +
                        std::to_string(frame) + ") names a missing stack or frame");
    }
    if (id == static_cast<int64_t>(rows.stacks.size())) rows.stacks.emplace_back();
    rows.stacks[id].push_back(frame);
  }
  if (rc != SQLITE_DONE) return sql::error(db, where + "strata_cpu_stacks");

  STRATA_ASSIGN_OR_RETURN(
      sql::Statement samples,
      sql::Statement::prepare(
          db,
          std::string("SELECT timestamp, global_tid, stack_id, weight, source, ") +
              (has_cut ? "cut" : "0") + " FROM strata_cpu_samples ORDER BY timestamp, id",
          where + "strata_cpu_samples"));
  while ((rc = samples.step()) == SQLITE_ROW) {
    CpuSampleRow s;
    s.time_ns = samples.column_int(0);
    int64_t gtid = samples.column_int(1);
    s.pid = static_cast<int32_t>(global_id::pid_of(gtid));
    s.tid = static_cast<int32_t>(global_id::tid_of(gtid));
    s.stack = samples.column_null(2) ? -1 : samples.column_int(2);
    if (s.stack >= static_cast<int64_t>(rows.stacks.size())) {
      return make_error(where + "strata_cpu_samples names missing stack " +
                        std::to_string(s.stack));
    }
    s.weight_ns = samples.column_int(3);
    rows.source = samples.column_text(4);
    s.cut = samples.column_int(5) != 0;
    rows.samples.push_back(s);
  }
  if (rc != SQLITE_DONE) return sql::error(db, where + "strata_cpu_samples");

  STRATA_ASSIGN_OR_RETURN(
      sql::Statement calls,
      sql::Statement::prepare(
          db, "SELECT global_tid, timestamp, frame_id, kind FROM strata_cpu_calls ORDER BY rowid",
          where + "strata_cpu_calls"));
  while ((rc = calls.step()) == SQLITE_ROW) {
    CpuCallRow c;
    int64_t gtid = calls.column_int(0);
    c.pid = static_cast<int32_t>(global_id::pid_of(gtid));
    c.tid = static_cast<int32_t>(global_id::tid_of(gtid));
    c.time_ns = calls.column_int(1);
    c.frame = calls.column_int(2);
    c.exit = calls.column_int(3) != 0;
    if (c.frame < 0 || c.frame >= static_cast<int64_t>(rows.frames.size())) {
      return make_error(where + "strata_cpu_calls names missing frame " + std::to_string(c.frame));
    }
    rows.calls.push_back(c);
  }
  if (rc != SQLITE_DONE) return sql::error(db, where + "strata_cpu_calls");
  if (rows.samples.empty() && !rows.calls.empty()) rows.source = "instrumented";

  STRATA_ASSIGN_OR_RETURN(
      sql::Statement threads,
      sql::Statement::prepare(
          db,
          "SELECT t.globalTid, s.value FROM ThreadNames t LEFT JOIN StringIds s ON s.id = t.nameId",
          where + "ThreadNames"));
  while ((rc = threads.step()) == SQLITE_ROW) {
    int64_t gtid = threads.column_int(0);
    rows.threads.push_back({static_cast<int32_t>(global_id::pid_of(gtid)),
                            static_cast<int32_t>(global_id::tid_of(gtid)), threads.column_text(1)});
  }
  if (rc != SQLITE_DONE) return sql::error(db, where + "ThreadNames");
  STRATA_ASSIGN_OR_RETURN(
      sql::Statement processes,
      sql::Statement::prepare(db, "SELECT pid, name FROM PROCESSES", where + "PROCESSES"));
  while ((rc = processes.step()) == SQLITE_ROW) {
    rows.processes.emplace_back(static_cast<int32_t>(processes.column_int(0)),
                                processes.column_text(1));
  }
  if (rc != SQLITE_DONE) return sql::error(db, where + "PROCESSES");

  STRATA_ASSIGN_OR_RETURN(auto counters, reader.counters());
  for (const auto& [name, value] : counters) {
    if (name == kRateMilliHz) rows.rate_hz = static_cast<double>(value) / 1000.0;
    if (name == kWallNs) rows.wall_ns = value;
    if (name == kCpuNs) rows.cpu_ns = value;
    if (name == kMinorFaults) rows.minor_faults = value;
    if (name == kLostSamples) rows.lost_samples = static_cast<uint64_t>(value);
    if (name == kThrottles) rows.throttles = static_cast<uint64_t>(value);
    if (name == kInstrumentOverheadPs && value > 0) {
      rows.instrument_overhead_ns_per_call = static_cast<double>(value) / 1000.0;
    }
  }
  return std::optional<CpuProfileRows>(std::move(rows));
}

}  // namespace strata::store
