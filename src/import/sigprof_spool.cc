#include "import/sigprof_spool.h"

#include <linux/perf_event.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <set>
#include <tuple>

#include "common/strings.h"
#include "format/payloads.h"
#include "format/sampler_payloads.h"
#include "import/chunk_visitor.h"
#include "import/spool_files.h"
#include "sampler/inprocess/sigprof_env.h"
#include "symbolize/proc_maps.h"

namespace strata::import {

std::vector<sampler::Mapping> executable_mappings(std::string_view text, uint32_t pid,
                                                  uint64_t time, uint64_t* bad_lines) {
  std::vector<sampler::Mapping> out;
  for (symbolize::MapsLine& line : symbolize::parse_proc_maps(text, bad_lines)) {
    // perf sends MMAP2 for executable mappings only (no mmap_data): the same
    // input for the unwinder.
    if (!line.executable()) continue;
    sampler::Mapping m;
    m.addr = line.start;
    m.len = line.end - line.start;
    m.pgoff = line.pgoff;
    m.maj = line.dev_major;
    m.min = line.dev_minor;
    m.ino = line.inode;
    m.prot = (line.readable() ? PROT_READ : 0) | (line.writable() ? PROT_WRITE : 0) | PROT_EXEC;
    m.flags = line.shared() ? MAP_SHARED : MAP_PRIVATE;
    m.filename = std::move(line.path);
    m.pid = pid;
    m.tid = pid;
    m.time = time;
    out.push_back(std::move(m));
  }
  return out;
}

namespace {

using sampler::Mapping;
using sampler::RawProfile;

// One spool into *profile, as the one chunk loop hands its chunks out.
class SigprofVisitor final : public ChunkVisitor {
 public:
  SigprofVisitor(SpoolSummary& summary, RawProfile* profile)
      : summary_(summary),
        profile_(profile),
        pid_(summary.pid),
        maps_(profile->mmaps[summary.pid]),
        latest_time_(static_cast<uint64_t>(summary.start_ns)) {
    for (const Mapping& m : maps_) seen_.emplace(m.addr, m.len, m.pgoff, m.filename);
  }

  bool wants(format::ChunkKind kind) const override {
    using format::ChunkKind;
    return kind == ChunkKind::kThreadName || kind == ChunkKind::kProcessInfo ||
           kind == ChunkKind::kSamplerSamples || kind == ChunkKind::kMemoryMap ||
           kind == ChunkKind::kSamplerCounters;
  }
  Status on_thread_name(const format::ThreadName& name) override {
    sampler::Comm c;
    c.time = latest_time_;
    c.pid = pid_;
    c.tid = name.tid;
    c.name = std::string(name.name);
    // The first name of the main thread stands for the image's exec, as
    // perf's COMM|exec record does.
    c.exec = !main_named_ && name.tid == pid_;
    if (c.exec) main_named_ = true;
    profile_->comms.push_back(std::move(c));
    return Ok{};
  }
  Status on_process_info(const format::ProcessInfo& info) override {
    summary_.has_process_info = true;
    summary_.ppid = info.ppid;
    return Ok{};
  }
  Status on_sampler_samples(const format::SamplerSamples& record) override {
    for (const format::SampleView& v : record.samples) {
      sampler::Sample s;
      s.ip = v.regs[format::kSamplerIpRegister];
      s.time = v.time;
      s.period = profile_->period_ns * (uint64_t{v.overruns} + 1);
      s.pid = pid_;
      s.tid = record.tid;
      s.regs_abi = PERF_SAMPLE_REGS_ABI_64;
      s.regs_index = profile_->regs.size() / format::kSamplerRegsPerSample;
      profile_->regs.insert(profile_->regs.end(), v.regs.begin(), v.regs.end());
      s.stack_offset = profile_->stacks.size();
      s.stack_size = static_cast<uint32_t>(v.stack.size());
      const auto* bytes = reinterpret_cast<const uint8_t*>(v.stack.data());
      profile_->stacks.insert(profile_->stacks.end(), bytes, bytes + v.stack.size());
      profile_->samples.push_back(s);
      if (v.time > latest_time_) latest_time_ = v.time;
      ++summary_.samples;
    }
    return Ok{};
  }
  Status on_memory_map(const format::MemoryMap& record) override {
    const auto time = static_cast<uint64_t>(record.time_ns);
    if (time > latest_time_) latest_time_ = time;
    for (Mapping& m : executable_mappings(record.text, pid_, time, &summary_.bad_map_lines)) {
      if (seen_.emplace(m.addr, m.len, m.pgoff, m.filename).second) maps_.push_back(std::move(m));
    }
    return Ok{};
  }
  Status on_sampler_counters(const format::SamplerCounters& counters) override {
    summary_.have_counters = true;
    summary_.counters = counters;
    return Ok{};
  }
  void on_malformed(const format::Chunk&, const Error&) override { ++summary_.bad_records; }

 private:
  SpoolSummary& summary_;
  RawProfile* profile_;
  const uint32_t pid_;
  std::vector<Mapping>& maps_;
  std::set<std::tuple<uint64_t, uint64_t, uint64_t, std::string>> seen_;
  uint64_t latest_time_;
  bool main_named_ = false;
};

}  // namespace

SpoolSummary add_sigprof_spool(format::SpoolReader& reader, RawProfile* profile) {
  SpoolSummary summary;
  summary.pid = reader.header().pid;
  summary.start_ns = reader.header().start_clock_ns;
  SigprofVisitor visitor(summary, profile);
  (void)visit_chunks(reader, visitor);  // the handlers never fail
  if (profile->mmaps[summary.pid].empty()) profile->mmaps.erase(summary.pid);
  summary.stats = reader.stats();
  return summary;
}

RawProfile read_sigprof_dir(const std::string& dir, const sampler::SamplerOptions& options) {
  RawProfile profile;
  profile.mode = sampler::StackMode::kDwarf;
  profile.frequency_hz = options.frequency_hz ? options.frequency_hz : sampler::sigprof::kDefaultHz;
  profile.period_ns = 1'000'000'000ull / profile.frequency_hz;
  profile.stack_bytes = std::min(options.stack_bytes, format::kSamplerMaxStackBytes) & ~7u;
  profile.regs_mask = sampler::kDwarfRegsMask;
  profile.regs_per_sample = format::kSamplerRegsPerSample;
  profile.layout.sample_regs_user = sampler::kDwarfRegsMask;

  // Open all first so that images are merged oldest first: after an exec
  // under the same pid, the new image's mappings come later and win.
  std::vector<format::SpoolReader> readers;
  for (const std::string& path : list_spools(dir, kSigprofSpoolPrefix)) {
    auto reader = format::SpoolReader::open(path);
    if (!reader) {
      ++profile.counters.bad_records;
      profile.notes.push_back(reader.error().message + "; skipped");
      continue;
    }
    readers.push_back(std::move(reader).value());
  }
  std::stable_sort(readers.begin(), readers.end(), [](const auto& a, const auto& b) {
    return a.header().start_clock_ns < b.header().start_clock_ns;
  });

  std::vector<SpoolSummary> summaries;
  for (auto& reader : readers) {
    SpoolSummary s = add_sigprof_spool(reader, &profile);
    const std::string& name = reader.name();
    const format::SpoolStats& st = s.stats;
    profile.counters.records += st.chunks_ok;
    profile.counters.bad_records += st.crc_failures + s.bad_records;
    profile.counters.bad_bytes += st.skipped_bytes + st.truncated_bytes;
    profile.counters.unknown_records += st.unknown_kinds;
    if (st.crc_failures + s.bad_records > 0) {
      profile.notes.push_back(
          name + ": " + plural(st.crc_failures + s.bad_records, "damaged chunk", "damaged chunks") +
          " skipped");
    }
    if (st.truncated_bytes > 0) {
      profile.notes.push_back(name + ": ends mid-chunk (the process died while writing); " +
                              std::to_string(st.truncated_bytes) + " bytes dropped");
    }
    if (s.have_counters) {
      const auto& t = s.counters.totals;
      profile.counters.lost_samples += t[format::kSamplesDropped];
      if (t[format::kSamplesDropped] > 0) {
        profile.notes.push_back("pid " + std::to_string(s.pid) + ": " +
                                plural(t[format::kSamplesDropped], "sample", "samples") +
                                " dropped (a timer signal found its thread's buffer busy)");
      }
      if (t[format::kThreadsUnsampled] > 0) {
        profile.notes.push_back("pid " + std::to_string(s.pid) + ": " +
                                plural(t[format::kThreadsUnsampled], "thread was", "threads were") +
                                " not sampled (no timer could be started)");
      }
      if (t[format::kHandlerReplaced] != 0) {
        profile.notes.push_back("pid " + std::to_string(s.pid) +
                                ": the program installed its own SIGPROF handler; samples stop "
                                "where it did");
      }
      if (t[format::kFlushFailures] > 0) {
        profile.notes.push_back(
            "pid " + std::to_string(s.pid) + ": " +
            plural(t[format::kFlushFailures], "sample buffer", "sample buffers") +
            " could not be written (disk full?)");
      }
    }
    summaries.push_back(std::move(s));
  }

  // Processes the target forked: FORK events so that a child starts from
  // its parent's mappings, as perf's inherit gives.
  std::set<uint32_t> pids;
  for (const auto& s : summaries) pids.insert(s.pid);
  std::set<uint32_t> forked;
  for (const auto& s : summaries) {
    if (!s.has_process_info || s.ppid == s.pid || !pids.count(s.ppid)) continue;
    if (!forked.insert(s.pid).second) continue;
    sampler::TaskEvent t;
    t.fork = true;
    t.time = static_cast<uint64_t>(s.start_ns);
    t.pid = s.pid;
    t.ppid = s.ppid;
    t.tid = s.pid;
    t.ptid = s.ppid;
    profile.tasks.push_back(t);
  }

  std::stable_sort(
      profile.samples.begin(), profile.samples.end(),
      [](const sampler::Sample& a, const sampler::Sample& b) { return a.time < b.time; });

  // CPU-time timers expire on the scheduler tick (CONFIG_HZ), so a rate
  // above it yields fewer signals, each carrying its overruns in its period.
  uint64_t periods = 0;
  for (const sampler::Sample& s : profile.samples) periods += s.period / profile.period_ns;
  if (profile.samples.size() >= 20 && periods >= 2 * profile.samples.size()) {
    const double per_signal = static_cast<double>(periods) / profile.samples.size();
    char text[200];
    std::snprintf(text, sizeof text,
                  "the kernel delivered thread CPU-time timers at about %.0f Hz (its tick), not "
                  "%u Hz: each sample stands for %.1f periods",
                  profile.frequency_hz / per_signal, profile.frequency_hz, per_signal);
    profile.notes.push_back(text);
  }
  return profile;
}

}  // namespace strata::import
