#include "import/torch_ops_ingest.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <unordered_map>
#include <utility>

#include "common/global_id.h"
#include "format/spool_reader.h"
#include "format/torch_payloads.h"
#include "import/chunk_visitor.h"
#include "import/spool_files.h"
#include "store/torch_op_rows.h"

namespace strata::import {
namespace {

// Ops handed to store::write_torch_ops at a time.
constexpr size_t kOpFlush = 8192;

// The TSC-to-ns line of one spool: its reference pair and the chunk pair
// farthest from it (the least relative error in the rate).
struct Calibration {
  int64_t ref_ns = 0;
  uint64_t ref_ticks = 0;
  int64_t now_ns = 0;
  uint64_t now_ticks = 0;
  bool valid = false;

  void offer(const format::TorchOps& chunk) {
    bool ok = chunk.now_ticks > chunk.ref_ticks && chunk.now_ns >= chunk.ref_ns;
    if (ok && (!valid || chunk.now_ticks - chunk.ref_ticks > now_ticks - ref_ticks)) {
      *this = {chunk.ref_ns, chunk.ref_ticks, chunk.now_ns, chunk.now_ticks, true};
    } else if (!valid && ref_ticks == 0) {
      ref_ns = chunk.ref_ns;
      ref_ticks = chunk.ref_ticks;
    }
  }
  int64_t to_ns(uint64_t ticks) const {
    if (!valid) return ref_ns;
    double rate = static_cast<double>(now_ns - ref_ns) / static_cast<double>(now_ticks - ref_ticks);
    double delta = ticks >= ref_ticks ? static_cast<double>(ticks - ref_ticks)
                                      : -static_cast<double>(ref_ticks - ticks);
    return ref_ns + static_cast<int64_t>(delta * rate);
  }
};

// One thread's chunk of ops, kept until the spool's calibration is known.
struct OpsChunk {
  uint32_t tid = 0;
  format::InstrumentClock clock = format::InstrumentClock::kMonotonic;
  std::vector<format::TorchOpRecord> ops;
};

class TorchSpoolVisitor final : public ChunkVisitor {
 public:
  bool wants(format::ChunkKind kind) const override {
    return kind == format::ChunkKind::kStrings || kind == format::ChunkKind::kTorchOps ||
           kind == format::ChunkKind::kTorchStatus;
  }
  Status on_strings(const std::vector<format::StringEntry>& strings) override {
    for (const auto& s : strings) strings_.emplace(s.id, std::string(s.text));
    return Ok{};
  }
  Status on_torch_ops(const format::TorchOps& ops) override {
    if (ops.clock == format::InstrumentClock::kTsc) calibration_.offer(ops);
    chunks_.push_back({ops.tid, ops.clock, ops.ops});
    return Ok{};
  }
  Status on_torch_status(const format::TorchStatusLine& line) override {
    statuses_.push_back({static_cast<uint32_t>(line.status), line.text});
    return Ok{};
  }
  void on_malformed(const format::Chunk&, const Error&) override { ++malformed_; }

  std::unordered_map<uint64_t, std::string> strings_;
  std::vector<OpsChunk> chunks_;
  std::vector<TorchStatusText> statuses_;
  Calibration calibration_;
  uint64_t malformed_ = 0;
};

class TorchIngester {
 public:
  explicit TorchIngester(store::TraceWriter& writer) : writer_(writer) {}

  Status ingest(const std::string& path);
  Status finish(TorchIngestSummary& summary);

 private:
  // The trace's StringIds id of a spool string; 0 when `id` is 0 (not
  // recorded) or no strings chunk defined it (counted).
  Result<std::optional<int64_t>> string_id(const TorchSpoolVisitor& spool, uint32_t id);
  Status counter(const std::string& name, uint64_t value) {
    if (value == 0) return Ok{};
    return writer_.add_counter(name, static_cast<int64_t>(value));
  }

  store::TraceWriter& writer_;
  std::unordered_map<std::string, int64_t> interned_;
  std::vector<store::TorchOpRow> rows_;
  std::vector<TorchStatusText> statuses_;
  std::set<int64_t> threads_, processes_;
  uint64_t ops_ = 0, spools_ = 0, damaged_ = 0;
  uint64_t unresolved_ = 0, unfinished_ = 0, malformed_ = 0, unreadable_ = 0;
};

Result<std::optional<int64_t>> TorchIngester::string_id(const TorchSpoolVisitor& spool,
                                                        uint32_t id) {
  if (id == 0) return std::optional<int64_t>{};
  auto it = spool.strings_.find(id);
  if (it == spool.strings_.end()) {
    ++unresolved_;
    return std::optional<int64_t>{};
  }
  if (auto cached = interned_.find(it->second); cached != interned_.end()) {
    return std::optional<int64_t>{cached->second};
  }
  STRATA_ASSIGN_OR_RETURN(int64_t sid, writer_.intern(it->second));
  interned_.emplace(it->second, sid);
  return std::optional<int64_t>{sid};
}

Status TorchIngester::ingest(const std::string& path) {
  auto reader = format::SpoolReader::open(path);
  if (!reader) {
    ++unreadable_;
    return Ok{};
  }
  ++spools_;
  const int64_t pid = reader->header().pid;
  TorchSpoolVisitor spool;
  STRATA_TRY(visit_chunks(*reader, spool));
  malformed_ += spool.malformed_;
  const format::SpoolStats& st = reader->stats();
  damaged_ += st.crc_failures + st.resyncs + st.truncated_bytes + spool.malformed_;
  STRATA_TRY(counter("spool.crc_failures", st.crc_failures));
  STRATA_TRY(counter("spool.resyncs", st.resyncs));
  STRATA_TRY(counter("spool.skipped_bytes", st.skipped_bytes));
  STRATA_TRY(counter("spool.truncated_bytes", st.truncated_bytes));
  STRATA_TRY(counter("spool.unknown_chunk_kinds", st.unknown_kinds));

  std::optional<int64_t> unresolved_name;
  for (const OpsChunk& chunk : spool.chunks_) {
    const int64_t gtid = global_id::make_tid(pid, chunk.tid);
    const bool tsc = chunk.clock == format::InstrumentClock::kTsc;
    for (const format::TorchOpRecord& r : chunk.ops) {
      store::TorchOpRow row;
      row.start = tsc ? spool.calibration_.to_ns(r.start) : static_cast<int64_t>(r.start);
      row.end = tsc ? spool.calibration_.to_ns(r.end) : static_cast<int64_t>(r.end);
      row.global_tid = gtid;
      STRATA_ASSIGN_OR_RETURN(auto name, string_id(spool, r.name_id));
      if (!name) {
        if (!unresolved_name) {
          STRATA_ASSIGN_OR_RETURN(int64_t id, writer_.intern("<unresolved op name>"));
          unresolved_name = id;
        }
        name = unresolved_name;
      }
      row.name_id = *name;
      row.external_id = static_cast<int64_t>(r.external_id);
      row.seq = r.seq;
      row.depth = r.depth;
      row.scope = r.scope;
      row.flags = r.flags;
      if (r.flags & format::kTorchOpUnfinished) ++unfinished_;
      STRATA_ASSIGN_OR_RETURN(row.shapes_id, string_id(spool, r.shapes_id));
      STRATA_ASSIGN_OR_RETURN(row.stack_id, string_id(spool, r.stack_id));
      rows_.push_back(row);
      threads_.insert(gtid);
      processes_.insert(pid);
      ++ops_;
      if (rows_.size() >= kOpFlush) {
        STRATA_TRY(store::write_torch_ops(writer_, rows_));
        rows_.clear();
      }
    }
  }
  for (const auto& s : spool.statuses_) {
    STRATA_TRY(store::write_torch_status(
        writer_, {global_id::make_pid(pid), static_cast<int64_t>(s.status), s.text}));
    statuses_.push_back(s);
  }
  return Ok{};
}

Status TorchIngester::finish(TorchIngestSummary& summary) {
  STRATA_TRY(store::write_torch_ops(writer_, rows_));
  rows_.clear();
  std::pair<const char*, uint64_t> counters[] = {
      {"torch.unreadable_spools", unreadable_},
      {"torch.bad_payloads", malformed_},
      {"torch.unresolved_strings", unresolved_},
      {"torch.unfinished_ops", unfinished_},
  };
  for (const auto& [name, value] : counters) STRATA_TRY(counter(name, value));
  summary.spools = spools_;
  summary.ops = ops_;
  summary.threads = threads_.size();
  summary.processes = processes_.size();
  summary.damaged = damaged_ + unreadable_;
  summary.lines = torch_summary_lines(statuses_, summary);
  return Ok{};
}

uint64_t count_markers(const std::string& dir) {
  uint64_t count = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.size() > kNoTorchMarkerPrefix.size() && name.starts_with(kNoTorchMarkerPrefix) &&
        std::filesystem::is_regular_file(entry.symlink_status(ec))) {
      ++count;
    }
  }
  return count;
}

std::string plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

std::vector<std::string> torch_summary_lines(const std::vector<TorchStatusText>& statuses,
                                             const TorchIngestSummary& counts) {
  std::vector<std::string> lines;
  const std::string tally = fmt::format("{} on {} in {}", plural(counts.ops, "op", "ops"),
                                        plural(counts.threads, "thread", "threads"),
                                        plural(counts.processes, "process", "processes"));
  std::set<std::pair<uint32_t, std::string>> seen;
  bool recording = false;
  for (const auto& s : statuses) {
    if (!seen.insert({s.status, s.text}).second) continue;
    if (s.status == static_cast<uint32_t>(format::TorchStatus::kRecording)) {
      if (recording) continue;  // one tally; other processes' texts add nothing new
      recording = true;
      lines.push_back(s.text + " \u2014 " + tally);
    } else {
      lines.push_back(s.text);
    }
  }
  if (!recording && counts.ops > 0) lines.insert(lines.begin(), tally);
  if (counts.spools == 0 && statuses.empty() && counts.notorch_markers > 0) {
    lines.push_back("none (the program never imported torch)");
  }
  return lines;
}

Result<TorchIngestSummary> ingest_torch_spools(const std::string& run_dir,
                                               store::TraceWriter& writer) {
  TorchIngestSummary summary;
  TorchIngester ingester(writer);
  summary.notorch_markers = count_markers(run_dir);
  for (const auto& path : list_spools(run_dir, kTorchSpoolPrefix)) {
    STRATA_TRY(ingester.ingest(path));
  }
  STRATA_TRY(ingester.finish(summary));
  return summary;
}

}  // namespace strata::import
