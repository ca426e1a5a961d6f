// torch_spool_dump SPOOL: a torch-PID.bin spool as lines the Python checks
// (torch_check.py) read, through the import layer's chunk loop (the reader
// every consumer uses):
//   status <TorchStatus> <text>
//   op <tid> <start_ns> <end_ns> <depth> <seq> <scope> <flags> <external_id> <name>\t<shapes>\t<stack>
//   end clean | end signal <N> | end none
// Times are CLOCK_MONOTONIC ns (TSC stamps mapped by the chunk's pairs); a
// stack's lines are joined by " | ". Exit 1 when the spool cannot be read or
// names a string it never defined.
#include <cstdio>
#include <string>
#include <unordered_map>

#include "format/spool_reader.h"
#include "import/chunk_visitor.h"

namespace {

using namespace strata;

class Dump : public import::ChunkVisitor {
 public:
  bool wants(format::ChunkKind kind) const override {
    return kind == format::ChunkKind::kStrings || kind == format::ChunkKind::kTorchOps ||
           kind == format::ChunkKind::kTorchStatus;
  }
  Status on_strings(const std::vector<format::StringEntry>& entries) override {
    for (const auto& e : entries) strings_[e.id] = std::string(e.text);
    return Ok{};
  }
  Status on_torch_status(const format::TorchStatusLine& line) override {
    std::printf("status %u %s\n", static_cast<unsigned>(line.status), line.text.c_str());
    return Ok{};
  }
  Status on_torch_ops(const format::TorchOps& ops) override {
    for (const auto& op : ops.ops) {
      std::string name, shapes, stack;
      if (!lookup(op.name_id, &name) || (op.shapes_id && !lookup(op.shapes_id, &shapes)) ||
          (op.stack_id && !lookup(op.stack_id, &stack))) {
        return make_error("a record names a string not written before it");
      }
      for (size_t at; (at = stack.find('\n')) != std::string::npos;) stack.replace(at, 1, " | ");
      std::printf("op %u %lld %lld %u %lld %u %u %llu %s\t%s\t%s\n", ops.tid, ns(ops, op.start), ns(ops, op.end),
                  op.depth, static_cast<long long>(op.seq), op.scope, op.flags,
                  static_cast<unsigned long long>(op.external_id), name.c_str(), shapes.c_str(), stack.c_str());
    }
    return Ok{};
  }

 private:
  bool lookup(uint32_t id, std::string* out) {
    auto it = strings_.find(id);
    if (it == strings_.end()) return false;
    *out = it->second;
    return true;
  }
  static long long ns(const format::TorchOps& ops, uint64_t t) {
    if (ops.clock != format::InstrumentClock::kTsc) return static_cast<long long>(t);
    double scale = double(ops.now_ns - ops.ref_ns) / double(ops.now_ticks - ops.ref_ticks);
    return static_cast<long long>(ops.ref_ns + double(int64_t(t - ops.ref_ticks)) * scale);
  }
  std::unordered_map<uint64_t, std::string> strings_;
};

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: torch_spool_dump SPOOL\n");
    return 2;
  }
  auto reader = format::SpoolReader::open(argv[1]);
  if (!reader.ok()) {
    std::fprintf(stderr, "torch_spool_dump: %s\n", reader.error().message.c_str());
    return 1;
  }
  Dump dump;
  if (auto st = import::visit_chunks(reader.value(), dump); !st.ok()) {
    std::fprintf(stderr, "torch_spool_dump: %s\n", st.error().message.c_str());
    return 1;
  }
  const auto& stats = reader.value().stats();
  if (!stats.end_seen) {
    std::printf("end none\n");
  } else if (stats.end && stats.end->signal != 0) {
    std::printf("end signal %u\n", stats.end->signal);
  } else {
    std::printf("end clean\n");
  }
  return 0;
}
