// The smallest CUPTI client that records a given thing: what CUPTI itself
// costs per launch, below which no CUPTI-based tracer (strata's agent,
// nsys, Kineto) can go. bench/gpu_trace_overhead.py loads it through
// CUDA_INJECTION64_PATH, beside the real agent, to tell the agent's own cost
// from CUPTI's.
//
// CUPTI_FLOOR (comma list) picks what is enabled:
//   kernel     activity CONCURRENT_KERNEL
//   runtime    activity RUNTIME
//   driver     activity DRIVER
//   sync       activity SYNCHRONIZATION
//   memory     activity MEMCPY, MEMSET and MEMCPY2 (the agent's "memory" group)
//   marker     activity MARKER and MARKER_DATA (the agent's "nvtx" group)
//   meta       activity DEVICE, CONTEXT and NAME (the agent's "meta" group)
//   extcorr    activity EXTERNAL_CORRELATION (the agent's link to PyTorch ops;
//              nothing pushes an id here, so it measures the kind alone)
//   ts         timestamps through a CLOCK_MONOTONIC callback (as the agent)
//   perthread  CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER
//   rtcb       the runtime API through the callback API: an empty callback
//   rtcbrec    the same, writing a 32-byte record (two clock reads) per call
//              into a thread's own buffer, as a callback-based tracer would
//   quiet      leave out of the RUNTIME and DRIVER records the getters the
//              agent leaves out (src/agent/cuda/noisy_apis.h, the same list):
//              CUPTI's cost for exactly the records strata keeps
// Completed activity buffers are counted and reused, never written: the
// figure is CUPTI's collection cost, not I/O. At exit it prints one line to
// stderr with the records and buffers seen, so a run can be checked to have
// recorded what it claims.
#include <cupti.h>
#include <time.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/cuda/noisy_apis.h"

namespace {

constexpr size_t kBufferBytes = 8u << 20;
constexpr int kBuffers = 32;

alignas(8) unsigned char g_buffers[kBuffers][kBufferBytes];
std::atomic<int> g_free_top{0};
int g_free[kBuffers];
std::atomic<uint64_t> g_completed{0};
std::atomic<uint64_t> g_records{0};
std::atomic<uint64_t> g_callbacks{0};

bool has(const char* list, const char* word) {
  size_t n = std::strlen(word);
  for (const char* p = list; (p = std::strstr(p, word)) != nullptr; p += n) {
    bool starts = p == list || p[-1] == ',';
    bool ends = p[n] == '\0' || p[n] == ',';
    if (starts && ends) return true;
  }
  return false;
}

uint64_t CUPTIAPI monotonic() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000u + uint64_t(ts.tv_nsec);
}

// A lock-free stack of free buffer indices is overkill for a probe; a
// spin on one atomic is enough, since requests come a few per second.
std::atomic_flag g_lock = ATOMIC_FLAG_INIT;

void CUPTIAPI requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  while (g_lock.test_and_set(std::memory_order_acquire)) {
  }
  int top = g_free_top.load(std::memory_order_relaxed);
  *buffer = top > 0 ? g_buffers[g_free[top - 1]] : nullptr;
  if (top > 0) g_free_top.store(top - 1, std::memory_order_relaxed);
  g_lock.clear(std::memory_order_release);
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

void CUPTIAPI completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  if (buffer == nullptr) return;
  g_completed.fetch_add(1, std::memory_order_relaxed);
  CUpti_Activity* record = nullptr;
  uint64_t n = 0;
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) ++n;
  g_records.fetch_add(n, std::memory_order_relaxed);
  int index = static_cast<int>((buffer - g_buffers[0]) / kBufferBytes);
  while (g_lock.test_and_set(std::memory_order_acquire)) {
  }
  int top = g_free_top.load(std::memory_order_relaxed);
  g_free[top] = index;
  g_free_top.store(top + 1, std::memory_order_relaxed);
  g_lock.clear(std::memory_order_release);
}

struct Record {
  uint64_t start;
  uint64_t end;
  uint32_t cbid;
  uint32_t correlation;
  uint64_t spare;
};
constexpr size_t kThreadRecords = 1u << 18;  // 8 MiB per thread, wraps
thread_local Record* t_records = nullptr;
thread_local size_t t_next = 0;
thread_local uint64_t t_enter = 0;
bool g_record_calls = false;

void CUPTIAPI on_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId cbid, const void* data) {
  g_callbacks.fetch_add(1, std::memory_order_relaxed);
  if (!g_record_calls) return;
  auto* info = static_cast<const CUpti_CallbackData*>(data);
  if (info->callbackSite == CUPTI_API_ENTER) {
    t_enter = monotonic();
    return;
  }
  if (t_records == nullptr) {
    t_records = static_cast<Record*>(std::calloc(kThreadRecords, sizeof(Record)));
    if (t_records == nullptr) return;
  }
  Record& r = t_records[t_next++ & (kThreadRecords - 1)];
  r.start = t_enter;
  r.end = monotonic();
  r.cbid = cbid;
  r.correlation = info->correlationId;
}

void at_exit() {
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  std::fprintf(stderr, "cupti_floor: records %llu buffers %llu callbacks %llu\n",
               static_cast<unsigned long long>(g_records.load()),
               static_cast<unsigned long long>(g_completed.load()),
               static_cast<unsigned long long>(g_callbacks.load()));
}

}  // namespace

extern "C" __attribute__((visibility("default"))) int InitializeInjection(void) {
  const char* what = std::getenv("CUPTI_FLOOR");
  if (what == nullptr) what = "";
  for (int i = 0; i < kBuffers; ++i) g_free[i] = i;
  g_free_top.store(kBuffers);
  CUpti_SubscriberHandle subscriber = nullptr;
  if (cuptiSubscribe(&subscriber, on_callback, nullptr) != CUPTI_SUCCESS) {
    std::fprintf(stderr, "cupti_floor: cuptiSubscribe failed\n");
    return 1;
  }
  if (has(what, "ts")) cuptiActivityRegisterTimestampCallback(monotonic);
  if (has(what, "perthread")) {
    uint8_t on = 1;
    size_t size = sizeof(on);
    cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_PER_THREAD_ACTIVITY_BUFFER, &size, &on);
  }
  cuptiActivityRegisterCallbacks(requested, completed);
  if (has(what, "kernel")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (has(what, "runtime")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_RUNTIME);
  if (has(what, "driver")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DRIVER);
  if (has(what, "sync")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  if (has(what, "memory")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY2);
  }
  if (has(what, "marker")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_MARKER_DATA);
  }
  if (has(what, "meta")) {
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_DEVICE);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONTEXT);
    cuptiActivityEnable(CUPTI_ACTIVITY_KIND_NAME);
  }
  if (has(what, "extcorr")) cuptiActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
  if (has(what, "quiet")) {
    for (CUpti_CallbackId cbid : strata::agent::kNoisyRuntimeApis)
      cuptiActivityEnableRuntimeApi(cbid, 0);
    for (CUpti_CallbackId cbid : strata::agent::kNoisyDriverApis)
      cuptiActivityEnableDriverApi(cbid, 0);
  }
  g_record_calls = has(what, "rtcbrec");
  if (has(what, "rtcb") || g_record_calls) {
    cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API);
  }
  std::atexit(at_exit);
  return 1;
}
