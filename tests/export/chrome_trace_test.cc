// chrome_trace and assign_slice_lanes on hand-built timelines: structure
// (required fields, nesting per track, flows), tracks and names, args,
// escaping of hostile names, empty input.
#include "export/chrome_trace.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <tuple>

#include "export/slice_lanes.h"

namespace strata::exporter {
namespace {

using Json = nlohmann::json;

constexpr int64_t kPid = 100;
constexpr int64_t kGlobalPid = kPid << 24;
int64_t global_tid(int64_t tid) {
  return kGlobalPid | tid;
}

TimelineApiCall call(int64_t start, int64_t end, int64_t correlation, std::string name = "call",
                     int64_t tid = kPid) {
  TimelineApiCall c;
  c.start = start;
  c.end = end;
  c.global_tid = global_tid(tid);
  c.correlation_id = correlation;
  c.name = std::move(name);
  return c;
}

TimelineGpuOp kernel(int64_t start, int64_t end, int64_t correlation, int64_t stream = 7,
                     std::string name = "kern") {
  TimelineGpuOp k;
  k.start = start;
  k.end = end;
  k.global_pid = kGlobalPid;
  k.stream_id = stream;
  k.correlation_id = correlation;
  k.name = std::move(name);
  return k;
}

TimelineNvtxRange range(int64_t start, int64_t end, std::string name, int64_t tid = kPid) {
  TimelineNvtxRange r;
  r.start = start;
  r.end = end;
  r.global_tid = global_tid(tid);
  r.name = std::move(name);
  return r;
}

// Checks what every event needs, and returns the document.
Json parse_checked(const std::string& text) {
  Json doc = Json::parse(text);  // throws on invalid JSON
  EXPECT_TRUE(doc["traceEvents"].is_array());
  for (const auto& e : doc["traceEvents"]) {
    EXPECT_TRUE(e["name"].is_string()) << e;
    EXPECT_TRUE(e["ph"].is_string()) << e;
    EXPECT_TRUE(e["pid"].is_number_integer()) << e;
    std::string ph = e["ph"];
    if (ph == "M") continue;
    EXPECT_TRUE(e["tid"].is_number_integer()) << e;
    EXPECT_TRUE(e["ts"].is_number()) << e;
    if (ph == "X") {
      EXPECT_TRUE(e["dur"].is_number()) << e;
      EXPECT_GE(e["dur"].get<double>(), 0.0) << e;
      EXPECT_TRUE(e["cat"].is_string()) << e;
    }
  }
  return doc;
}

std::vector<Json> events(const Json& doc, const std::string& ph) {
  std::vector<Json> out;
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == ph) out.push_back(e);
  }
  return out;
}

// thread_name metadata: tid -> name.
std::map<int64_t, std::string> thread_names(const Json& doc) {
  std::map<int64_t, std::string> out;
  for (const auto& e : events(doc, "M")) {
    if (e["name"] == "thread_name") out[e["tid"]] = e["args"]["name"];
  }
  return out;
}

std::map<int64_t, int64_t> sort_indices(const Json& doc) {
  std::map<int64_t, int64_t> out;
  for (const auto& e : events(doc, "M")) {
    if (e["name"] == "thread_sort_index") out[e["tid"]] = e["args"]["sort_index"];
  }
  return out;
}

// In integer ns, as a viewer that rounds us to ns sees them.
int64_t ns(const Json& us) {
  return std::llround(us.get<double>() * 1000.0);
}

// On every (pid, tid), any two X events are disjoint or nested.
void expect_nested_per_track(const Json& doc) {
  std::map<std::pair<int64_t, int64_t>, std::vector<std::pair<int64_t, int64_t>>> tracks;
  for (const auto& e : events(doc, "X")) {
    int64_t start = ns(e["ts"]);
    tracks[{e["pid"], e["tid"]}].push_back({start, start + ns(e["dur"])});
  }
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end(), [](auto a, auto b) {
      return a.first != b.first ? a.first < b.first : a.second > b.second;
    });
    std::vector<int64_t> open;
    for (auto [start, end] : slices) {
      while (!open.empty() && open.back() <= start) open.pop_back();
      EXPECT_TRUE(open.empty() || end <= open.back())
          << "partial overlap on tid " << track.second << " at " << start;
      open.push_back(end);
    }
  }
}

const Json* find_slice(const Json& doc, const std::string& name) {
  for (const auto& e : doc["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == name) return &e;
  }
  return nullptr;
}

TEST(SliceLanes, NestedSlicesShareLaneZero) {
  auto lanes = assign_slice_lanes({{0, 100}, {10, 20}, {20, 30}, {100, 150}, {12, 18}});
  EXPECT_EQ(lanes.lanes, 1u);
  EXPECT_EQ(lanes.order, (std::vector<size_t>{0, 1, 4, 2, 3}));
}

TEST(SliceLanes, PartialOverlapGoesToNextLane) {
  // [0,10) and [5,15) overlap partially; [20,30) is free again in lane 0.
  auto lanes = assign_slice_lanes({{0, 10}, {5, 15}, {20, 30}, {6, 8}});
  EXPECT_EQ(lanes.lanes, 2u);
  EXPECT_EQ(lanes.lane, (std::vector<uint32_t>{0, 1, 0, 0}));  // [6,8) nests in [0,10)
}

TEST(SliceLanes, EmptyInput) {
  auto lanes = assign_slice_lanes({});
  EXPECT_EQ(lanes.lanes, 0u);
  EXPECT_TRUE(lanes.order.empty());
}

TEST(ChromeTrace, EmptyTimelineIsValidJson) {
  auto trace = chrome_trace({}, {"run.sqlite", "strata 9"});
  Json doc = parse_checked(trace.json);
  EXPECT_TRUE(doc["traceEvents"].empty());
  EXPECT_EQ(doc["otherData"]["source"], "run.sqlite");
  EXPECT_EQ(doc["otherData"]["exporter"], "strata 9");
  EXPECT_EQ(trace.stats.slices, 0u);
}

TEST(ChromeTrace, ThreadsNvtxAndStreamsGetNamedSortedTracks) {
  GpuTimeline t;
  t.process_names[kGlobalPid] = "/opt/app/bin/gpu_matmul";
  t.thread_names[global_tid(kPid)] = "main";
  t.thread_names[global_tid(101)] = "worker";
  t.api_calls = {call(1000, 2000, 1, "cudaLaunchKernel_v7000"),
                 call(1500, 1600, 0, "cudaFree", 101)};
  t.nvtx_ranges = {range(900, 2100, "step")};
  t.gpu_ops = {kernel(3000, 4000, 1, 7), kernel(3000, 3500, 0, 13)};
  Json doc = parse_checked(chrome_trace(t).json);

  auto names = thread_names(doc);
  int64_t nvtx_tid = -1;
  for (const auto& [tid, name] : names) {
    if (name == "NVTX (main 100)") nvtx_tid = tid;
  }
  EXPECT_EQ(names[100], "main");  // API calls on the real tid
  EXPECT_EQ(names[101], "worker");
  ASSERT_GE(nvtx_tid, int64_t{1} << 24);
  EXPECT_EQ(names.size(), 5u);

  auto sort = sort_indices(doc);
  int64_t last_cpu = -1;
  int64_t first_gpu = 1 << 30;
  for (const auto& [tid, name] : names) {
    bool gpu = name.rfind("GPU ", 0) == 0;
    if (gpu) {
      first_gpu = std::min(first_gpu, sort[tid]);
    } else {
      last_cpu = std::max(last_cpu, sort[tid]);
    }
  }
  EXPECT_LT(last_cpu, first_gpu);
  EXPECT_LT(sort[nvtx_tid], sort[100]);  // NVTX above the calls, as nsys draws it

  bool found_7 = false;
  bool found_13 = false;
  for (const auto& [tid, name] : names) {
    found_7 |= name == "GPU 0 stream 7";
    found_13 |= name == "GPU 0 stream 13";
  }
  EXPECT_TRUE(found_7 && found_13);

  auto processes = events(doc, "M");
  bool named = false;
  for (const auto& e : processes) {
    if (e["name"] == "process_name") {
      EXPECT_EQ(e["pid"], kPid);
      EXPECT_EQ(e["args"]["name"], "gpu_matmul");  // the executable's file name
      named = true;
    }
  }
  EXPECT_TRUE(named);
  expect_nested_per_track(doc);
}

TEST(ChromeTrace, UnnamedThreadsAndProcessesGetIds) {
  GpuTimeline t;
  t.api_calls = {call(0, 10, 0, "cuInit", 55)};
  Json doc = parse_checked(chrome_trace(t).json);
  EXPECT_EQ(thread_names(doc)[55], "thread 55");
  for (const auto& e : events(doc, "M")) {
    if (e["name"] == "process_name") {
      EXPECT_EQ(e["args"]["name"], "process 100");
    }
  }
}

TEST(ChromeTrace, TimestampsAreMicrosecondsWithNanosecondDecimals) {
  GpuTimeline t;
  t.api_calls = {call(197206924210, 197206929331, 0, "a"), call(5, 5, 0, "zero"),
                 call(3000, 4000, 0, "round")};
  auto trace = chrome_trace(t);
  EXPECT_NE(trace.json.find(R"("ts":197206924.21,"dur":5.121,)"), std::string::npos) << trace.json;
  EXPECT_NE(trace.json.find(R"("ts":0.005,"dur":0,)"), std::string::npos);
  EXPECT_NE(trace.json.find(R"("ts":3,"dur":1,)"), std::string::npos);
  Json doc = parse_checked(trace.json);
  EXPECT_EQ(ns((*find_slice(doc, "a"))["ts"]), 197206924210);
}

TEST(ChromeTrace, NvtxRangeOverlappingACallPartiallyStaysNested) {
  GpuTimeline t;
  // The range ends 3 ns before the call it encloses in program order.
  t.api_calls = {call(100, 200, 0, "cudaMemcpy")};
  t.nvtx_ranges = {range(50, 197, "copy")};
  Json doc = parse_checked(chrome_trace(t).json);
  const Json* api = find_slice(doc, "cudaMemcpy");
  const Json* nvtx = find_slice(doc, "copy");
  ASSERT_TRUE(api && nvtx);
  EXPECT_NE((*api)["tid"], (*nvtx)["tid"]);
  EXPECT_EQ((*nvtx)["cat"], "nvtx");
  EXPECT_EQ((*nvtx)["args"]["style"], "PushPop");
  expect_nested_per_track(doc);
}

TEST(ChromeTrace, PartiallyOverlappingCallsGoToAnOverlapTrack) {
  GpuTimeline t;
  t.thread_names[global_tid(kPid)] = "main";
  t.api_calls = {call(0, 100, 0, "a"), call(50, 150, 0, "b"), call(60, 70, 0, "c"),
                 call(200, 300, 0, "d")};
  auto trace = chrome_trace(t);
  Json doc = parse_checked(trace.json);
  EXPECT_EQ(trace.stats.overlap_slices, 1u);
  EXPECT_EQ(doc["otherData"]["overlap_slices"], 1);
  const Json* b = find_slice(doc, "b");
  ASSERT_TRUE(b);
  EXPECT_EQ(thread_names(doc)[(*b)["tid"]], "main (overlap 1)");
  EXPECT_EQ((*find_slice(doc, "c"))["tid"], kPid);  // nests in a
  EXPECT_EQ((*find_slice(doc, "d"))["tid"], kPid);
  expect_nested_per_track(doc);
}

TEST(ChromeTrace, StartEndRangesShareAProcessTrack) {
  GpuTimeline t;
  auto a = range(0, 100, "load");
  a.push_pop = false;
  auto b = range(50, 150, "decode", 101);
  b.push_pop = false;
  b.unterminated = true;
  b.domain = "codec";
  t.nvtx_ranges = {a, b};
  Json doc = parse_checked(chrome_trace(t).json);
  const Json* load = find_slice(doc, "load");
  const Json* decode = find_slice(doc, "decode");
  ASSERT_TRUE(load && decode);
  EXPECT_EQ(thread_names(doc)[(*load)["tid"]], "NVTX start/end ranges");
  EXPECT_EQ(thread_names(doc)[(*decode)["tid"]], "NVTX start/end ranges (overlap 1)");
  EXPECT_EQ((*decode)["args"]["style"], "StartEnd");
  EXPECT_EQ((*decode)["args"]["thread"], 101);
  EXPECT_EQ((*decode)["args"]["domain"], "codec");
  EXPECT_EQ((*decode)["args"]["unterminated"], true);
  expect_nested_per_track(doc);
}

TEST(ChromeTrace, FlowFromEachLaunchToItsGpuOps) {
  GpuTimeline t;
  t.api_calls = {call(100, 200, 11, "cudaLaunchKernel"), call(300, 400, 12, "cudaGraphLaunch"),
                 call(500, 600, 13, "cudaMemcpy")};
  t.gpu_ops = {kernel(1000, 1100, 11), kernel(1200, 1300, 12), kernel(1300, 1400, 12),
               kernel(1500, 1600, 99)};  // no call with 99
  TimelineGpuOp copy;
  copy.kind = GpuOpKind::kMemcpy;
  copy.start = 2000;
  copy.end = 3000;
  copy.global_pid = kGlobalPid;
  copy.stream_id = 7;
  copy.correlation_id = 13;
  copy.bytes = 8388608;
  copy.name = "[CUDA memcpy Host-to-Device]";
  copy.copy_kind = "Host-to-Device";
  t.gpu_ops.push_back(copy);
  auto trace = chrome_trace(t);
  Json doc = parse_checked(trace.json);
  EXPECT_EQ(trace.stats.flows, 4u);
  EXPECT_EQ(trace.stats.unmatched_gpu_ops, 1u);

  auto starts = events(doc, "s");
  auto ends = events(doc, "f");
  ASSERT_EQ(starts.size(), 4u);
  ASSERT_EQ(ends.size(), 4u);
  std::map<int64_t, Json> start_by_id;
  for (const auto& s : starts) {
    EXPECT_EQ(s["cat"], "cuda_launch");
    EXPECT_TRUE(start_by_id.emplace(s["id"], s).second) << "duplicate flow id";
  }
  // Each flow starts inside its call and ends inside its op, both bound by
  // the enclosing slice on the same (pid, tid).
  auto enclosing = [&](const Json& flow) -> std::optional<Json> {
    for (const auto& e : events(doc, "X")) {
      if (e["pid"] == flow["pid"] && e["tid"] == flow["tid"] && ns(e["ts"]) <= ns(flow["ts"]) &&
          ns(flow["ts"]) <= ns(e["ts"]) + ns(e["dur"])) {
        return e;
      }
    }
    return std::nullopt;
  };
  std::multiset<std::pair<int64_t, int64_t>> links;  // (call correlation, op correlation)
  for (const auto& f : ends) {
    EXPECT_EQ(f["bp"], "e");
    ASSERT_TRUE(start_by_id.count(f["id"])) << "flow end without start";
    auto op = enclosing(f);
    ASSERT_TRUE(op);
    int64_t op_corr = (*op)["args"]["correlation_id"];
    auto launch = enclosing(start_by_id[f["id"]]);
    ASSERT_TRUE(launch);
    links.insert({(*launch)["args"]["correlation_id"].get<int64_t>(), op_corr});
  }
  EXPECT_EQ(links,
            (std::multiset<std::pair<int64_t, int64_t>>{{11, 11}, {12, 12}, {12, 12}, {13, 13}}));
}

TEST(ChromeTrace, KernelAndCopyArgs) {
  GpuTimeline t;
  auto k = kernel(0, 5120, 1460);
  k.device_id = 1;
  k.grid = {4, 4, 1};
  k.block = {64, 1, 1};
  k.registers_per_thread = 80;
  k.static_shared_memory = 1024;
  k.dynamic_shared_memory = 6528;
  TimelineGpuOp copy;
  copy.kind = GpuOpKind::kMemcpy;
  copy.start = 10000;
  copy.end = 10000 + 936539;
  copy.global_pid = kGlobalPid;
  copy.stream_id = 7;
  copy.bytes = 8388608;
  copy.name = "[CUDA memcpy Host-to-Device]";
  copy.copy_kind = "Host-to-Device";
  TimelineGpuOp set = copy;
  set.kind = GpuOpKind::kMemset;
  set.start = set.end = 2000000;  // zero duration: no bandwidth
  set.name = "[CUDA memset]";
  set.copy_kind.clear();
  t.gpu_ops = {k, copy, set};
  Json doc = parse_checked(chrome_trace(t).json);

  const Json& ka = (*find_slice(doc, "kern"))["args"];
  EXPECT_EQ(ka["grid"], "(4, 4, 1)");
  EXPECT_EQ(ka["block"], "(64, 1, 1)");
  EXPECT_EQ(ka["registers_per_thread"], 80);
  EXPECT_EQ(ka["static_shared_memory_bytes"], 1024);
  EXPECT_EQ(ka["dynamic_shared_memory_bytes"], 6528);
  EXPECT_EQ(ka["device"], 1);
  EXPECT_EQ(ka["stream"], 7);
  EXPECT_EQ(ka["correlation_id"], 1460);
  EXPECT_EQ((*find_slice(doc, "kern"))["cat"], "cuda_kernel");

  const Json& ca = (*find_slice(doc, "[CUDA memcpy Host-to-Device]"))["args"];
  EXPECT_EQ(ca["bytes"], 8388608);
  EXPECT_EQ(ca["copy_kind"], "Host-to-Device");
  EXPECT_DOUBLE_EQ(ca["bandwidth_GBps"].get<double>(), 8.957);  // 8388608 B / 936539 ns
  const Json* memset = find_slice(doc, "[CUDA memset]");
  ASSERT_TRUE(memset);
  EXPECT_EQ((*memset)["cat"], "cuda_memset");
  EXPECT_FALSE((*memset)["args"].contains("bandwidth_GBps"));
  EXPECT_FALSE((*memset)["args"].contains("copy_kind"));
}

TEST(ChromeTrace, HostileNamesStayValidJson) {
  std::string huge(10000, 'x');
  huge[5000] = '"';
  std::string control = std::string("a\0b\x01\x1f\n\r\t\\\"", 10) + "</script><b>&amp;";
  std::string bad_utf8 = "k\xff\xfe\xc3(\xe2\x82";  // stray and truncated sequences
  GpuTimeline t;
  t.api_calls = {call(0, 10, 0, huge), call(20, 30, 0, control)};
  t.gpu_ops = {kernel(40, 50, 0, 7, bad_utf8)};
  t.nvtx_ranges = {range(0, 100, "nvtx\x7f\u00e9\u4e2d")};
  t.thread_names[global_tid(kPid)] = "thr\x02\xff";
  t.process_names[kGlobalPid] = "/bin/\"p\"\n";
  Json doc = parse_checked(chrome_trace(t).json);
  ASSERT_TRUE(find_slice(doc, huge));
  EXPECT_EQ((*find_slice(doc, huge))["name"].get<std::string>().size(), 10000u);
  EXPECT_TRUE(find_slice(doc, control));  // control bytes escaped, kept
  EXPECT_TRUE(find_slice(doc, "k\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd"));  // U+FFFD
  EXPECT_TRUE(find_slice(doc, "nvtx\x7f\u00e9\u4e2d"));  // valid UTF-8 kept as is
  EXPECT_EQ(thread_names(doc)[kPid], "thr\x02\xef\xbf\xbd");
}

TEST(ChromeTrace, NegativeDurationsAreClampedAndCounted) {
  GpuTimeline t;
  t.api_calls = {call(100, 50, 0, "backwards")};
  auto trace = chrome_trace(t);
  Json doc = parse_checked(trace.json);
  EXPECT_EQ(trace.stats.negative_durations, 1u);
  EXPECT_EQ((*find_slice(doc, "backwards"))["dur"], 0);
}

TEST(ChromeTrace, ProcessesAreSeparate) {
  GpuTimeline t;
  auto other = call(0, 10, 5, "cuInit");
  other.global_tid = (int64_t{200} << 24) | 201;
  auto k = kernel(20, 30, 5);  // pid 100: not launched by pid 200's call
  t.api_calls = {call(0, 10, 0, "cuInit"), other};
  t.gpu_ops = {k};
  auto trace = chrome_trace(t);
  Json doc = parse_checked(trace.json);
  EXPECT_EQ(trace.stats.flows, 0u);
  std::set<int64_t> pids;
  for (const auto& e : events(doc, "M")) {
    if (e["name"] == "process_name") pids.insert(e["pid"].get<int64_t>());
  }
  EXPECT_EQ(pids, (std::set<int64_t>{100, 200}));
}

TEST(ChromeTrace, Deterministic) {
  GpuTimeline t;
  t.api_calls = {call(0, 10, 1), call(0, 10, 2), call(5, 7, 3)};
  t.gpu_ops = {kernel(20, 30, 1), kernel(20, 30, 2)};
  EXPECT_EQ(chrome_trace(t).json, chrome_trace(t).json);
}

TimelineTorchOp torch_op(int64_t start, int64_t end, std::string name, int64_t external_id,
                         int64_t tid = kPid) {
  TimelineTorchOp op;
  op.start = start;
  op.end = end;
  op.global_tid = global_tid(tid);
  op.external_id = external_id;
  op.name = std::move(name);
  op.scope = "function";
  return op;
}

// Ops nest on a track of their own above the thread's API track, and each
// kernel gets an arrow from the op whose external id its launch carried:
// here the inner aten::mm, not aten::linear around it, even though the
// kernel's launch call sits inside both, and no arrow for a kernel whose
// launch has no external id.
TEST(ChromeTrace, TorchOpsNestOnTheirThreadWithArrowsToTheirKernels) {
  GpuTimeline t;
  t.torch_ops = {torch_op(100, 1000, "aten::linear", 1), torch_op(200, 900, "aten::mm", 2),
                 torch_op(300, 400, "aten::empty", 3), torch_op(2000, 2500, "backward", 4, 101)};
  t.torch_ops[3].scope = "backward_function";
  t.torch_ops[3].seq = 7;
  t.api_calls = {call(500, 600, 21, "cudaLaunchKernel"), call(700, 800, 22, "cudaLaunchKernel")};
  t.gpu_ops = {kernel(1000, 1100, 21, 7, "gemm"), kernel(1200, 1300, 22, 7, "other")};
  t.external_links = {{kGlobalPid, 21, 2}, {kGlobalPid, 99, 1}};  // 22 has no op
  auto trace = chrome_trace(t);
  Json doc = parse_checked(trace.json);
  expect_nested_per_track(doc);
  EXPECT_EQ(trace.stats.op_flows, 1u);
  EXPECT_EQ(trace.stats.flows, 2u);
  EXPECT_EQ(doc["otherData"]["op_flows"], 1);

  const Json* linear = find_slice(doc, "aten::linear");
  const Json* mm = find_slice(doc, "aten::mm");
  const Json* launch = find_slice(doc, "cudaLaunchKernel");
  const Json* backward = find_slice(doc, "backward");
  ASSERT_TRUE(linear && mm && launch && backward);
  EXPECT_EQ((*linear)["cat"], "torch_op");
  EXPECT_EQ((*mm)["tid"], (*linear)["tid"]);  // one nested track
  EXPECT_NE((*mm)["tid"], (*launch)["tid"]);
  EXPECT_EQ(thread_names(doc)[(*mm)["tid"]], "PyTorch ops (thread 100 100)");
  EXPECT_NE((*backward)["tid"], (*mm)["tid"]);
  EXPECT_EQ((*backward)["args"]["scope"], "backward_function");
  EXPECT_EQ((*backward)["args"]["sequence_number"], 7);
  EXPECT_EQ((*mm)["args"]["external_id"], 2);

  std::optional<Json> op_start, op_end;
  for (const auto& e : events(doc, "s")) {
    if (e["cat"] == "torch_op_launch") op_start = e;
  }
  for (const auto& e : events(doc, "f")) {
    if (e["cat"] == "torch_op_launch") op_end = e;
  }
  ASSERT_TRUE(op_start && op_end);
  EXPECT_EQ((*op_start)["id"], (*op_end)["id"]);
  EXPECT_EQ((*op_start)["tid"], (*mm)["tid"]);
  // At the launch call's midpoint (0.55 us): inside aten::mm, after aten::empty ended.
  EXPECT_DOUBLE_EQ((*op_start)["ts"].get<double>(), 0.55);
  EXPECT_EQ((*op_end)["tid"], (*find_slice(doc, "gemm"))["tid"]);
}

// A trace without ops writes no op_flows key (older exports stay byte-equal).
TEST(ChromeTrace, NoTorchOpsNoOpFlowKey) {
  GpuTimeline t;
  t.api_calls = {call(0, 10, 1)};
  Json doc = parse_checked(chrome_trace(t).json);
  EXPECT_FALSE(doc["otherData"].contains("op_flows"));
}

}  // namespace
}  // namespace strata::exporter
