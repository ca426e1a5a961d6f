#include "cupti_walk.h"

#include <cupti_activity.h>

#include <cstring>

#include "format/payloads.h"
#include "format/spool_reader.h"
#include "import/chunk_visitor.h"
#include "import/cupti_records.h"
#include "import/spool_files.h"

namespace strata::agent_test {

namespace {

using import::walk_records;
using import::WalkStop;

template <class T>
T load(const std::byte* at) {
  return import::load_record<T>(at);
}

// String fields hold ids (the agent rewrote the pointers); 0 is NULL.
std::string resolve(Spool& spool, const void* field) {
  uint64_t id = 0;
  std::memcpy(&id, field, sizeof(id));
  if (id == 0) return {};
  auto it = spool.strings.find(id);
  if (it == spool.strings.end()) {
    ++spool.unresolved_strings;
    return "<unresolved>";
  }
  return it->second;
}

void walk(Spool& spool, const std::byte* data, size_t size) {
  WalkStop stop =
      walk_records(std::span<const std::byte>(data, size), [&](uint32_t kind, const std::byte* at) {
        switch (kind) {
          case CUPTI_ACTIVITY_KIND_RUNTIME:
          case CUPTI_ACTIVITY_KIND_DRIVER: {
            auto r = load<CUpti_ActivityAPI>(at);
            spool.apis.push_back({kind == CUPTI_ACTIVITY_KIND_RUNTIME, r.cbid, r.start, r.end,
                                  r.processId, r.threadId, r.correlationId});
            break;
          }
          case CUPTI_ACTIVITY_KIND_KERNEL:
          case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
            auto r = load<CUpti_ActivityKernel10>(at);
            Kernel k;
            k.name = resolve(spool, at + offsetof(CUpti_ActivityKernel10, name));
            k.start = r.start;
            k.end = r.end;
            k.device = r.deviceId;
            k.stream = r.streamId;
            k.correlation = r.correlationId;
            k.graph_id = r.graphId;
            k.grid[0] = r.gridX, k.grid[1] = r.gridY, k.grid[2] = r.gridZ;
            k.block[0] = r.blockX, k.block[1] = r.blockY, k.block[2] = r.blockZ;
            spool.kernels.push_back(k);
            break;
          }
          case CUPTI_ACTIVITY_KIND_MEMCPY: {
            auto r = load<CUpti_ActivityMemcpy6>(at);
            spool.memcpys.push_back({r.copyKind, r.srcKind, r.dstKind, false, r.bytes, r.start,
                                     r.end, r.correlationId, r.streamId});
            break;
          }
          case CUPTI_ACTIVITY_KIND_MEMCPY2: {
            auto r = load<CUpti_ActivityMemcpyPtoP4>(at);
            spool.memcpys.push_back({r.copyKind, r.srcKind, r.dstKind, true, r.bytes, r.start,
                                     r.end, r.correlationId, r.streamId});
            break;
          }
          case CUPTI_ACTIVITY_KIND_MEMSET: {
            auto r = load<CUpti_ActivityMemset4>(at);
            spool.memsets.push_back({r.bytes, r.start, r.end, r.value, r.correlationId});
            break;
          }
          case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
            auto r = load<CUpti_ActivitySynchronization2>(at);
            spool.syncs.push_back({static_cast<uint32_t>(r.type), r.start, r.end, r.correlationId});
            break;
          }
          case CUPTI_ACTIVITY_KIND_MARKER: {
            auto r = load<CUpti_ActivityMarker2>(at);
            Marker m;
            m.flags = static_cast<uint32_t>(r.flags);
            m.timestamp = r.timestamp;
            m.id = r.id;
            m.name = resolve(spool, at + offsetof(CUpti_ActivityMarker2, name));
            m.domain = resolve(spool, at + offsetof(CUpti_ActivityMarker2, domain));
            spool.markers.push_back(m);
            break;
          }
          case CUPTI_ACTIVITY_KIND_DEVICE: {
            auto r = load<CUpti_ActivityDevice5>(at);
            Device d;
            d.id = r.id;
            d.name = resolve(spool, at + offsetof(CUpti_ActivityDevice5, name));
            d.sm_count = r.numMultiprocessors;
            d.cc_major = r.computeCapabilityMajor;
            d.cc_minor = r.computeCapabilityMinor;
            d.core_clock_khz = r.coreClockRate;
            d.global_memory = r.globalMemorySize;
            spool.devices.push_back(d);
            break;
          }
          default:
            break;
        }
      });
  if (!stop.complete) ++spool.unknown_records;
}

// Walks each buffer as it comes, so a name whose strings chunk comes later
// reads "<unresolved>": what the agent's own ordering must avoid.
class WalkVisitor final : public import::ChunkVisitor {
 public:
  explicit WalkVisitor(Spool& spool) : spool_(spool) {}
  bool wants(format::ChunkKind kind) const override {
    using format::ChunkKind;
    return kind == ChunkKind::kCuptiBuffer || kind == ChunkKind::kStrings ||
           kind == ChunkKind::kDropCounters || kind == ChunkKind::kThreadName ||
           kind == ChunkKind::kProcessInfo;
  }
  Status on_cupti_buffer(const format::Chunk&, const format::CuptiBuffer& buffer) override {
    ++spool_.buffers;
    walk(spool_, buffer.records.data(), buffer.records.size());
    return Ok{};
  }
  Status on_strings(const std::vector<format::StringEntry>& strings) override {
    for (const auto& s : strings) spool_.strings[s.id] = std::string(s.text);
    return Ok{};
  }
  Status on_drop_counters(const std::vector<format::DropCounter>& counters) override {
    for (const auto& c : counters) spool_.drop_counters[c.kind] = c.total;
    return Ok{};
  }
  Status on_thread_name(const format::ThreadName& name) override {
    spool_.thread_names[name.tid] = std::string(name.name);
    return Ok{};
  }
  Status on_process_info(const format::ProcessInfo& info) override {
    spool_.ppid = info.ppid;
    for (auto arg : info.args) spool_.args.emplace_back(arg);
    return Ok{};
  }

 private:
  Spool& spool_;
};

}  // namespace

std::optional<Spool> read_spool(const std::string& path, std::string* error) {
  auto reader = format::SpoolReader::open(path);
  if (!reader) {
    *error = reader.error().message;
    return std::nullopt;
  }
  Spool spool;
  spool.path = path;
  spool.pid = reader->header().pid;
  spool.start_clock_ns = reader->header().start_clock_ns;
  WalkVisitor visitor(spool);
  (void)import::visit_chunks(*reader, visitor);  // the handlers never fail
  spool.end_seen = reader->stats().end_seen;
  spool.clean_end = reader->stats().clean_end;
  if (reader->stats().end) spool.end_signal = reader->stats().end->signal;
  return spool;
}

std::vector<std::string> spool_files(const std::string& dir) {
  return import::list_spools(dir, import::kAgentSpoolPrefix);
}

}  // namespace strata::agent_test
