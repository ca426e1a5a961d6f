#include "agent/kernels/executed_config.h"

#include <cupti.h>

namespace strata::agent::kernels {

namespace {

// One launch's records (a kernel replay may add one per pass) fit easily;
// two buffers so that CUPTI can ask for a second while the first is out.
constexpr size_t kBufferBytes = 64 * 1024;
alignas(8) uint8_t g_buffers[2][kBufferBytes];
std::atomic<bool> g_buffer_out[2];  // handed to CUPTI, not yet completed

// Written by the completion callback, read by collect() on the launch's
// thread after the flush: cuptiActivityFlushAll is a blocking call that
// hands every buffer to the completion callback before it returns
// (cupti_activity.h, CUDA 13.0).
std::atomic<uint32_t> g_wanted_correlation{0};
std::atomic<uint32_t> g_matched_bytes{0};
std::atomic<uint32_t> g_last_bytes{0};
std::atomic<uint32_t> g_distinct_launches{0};
std::atomic<uint32_t> g_last_correlation{0};

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;  // both out: CUPTI drops the records (CUDA 13.0 allows a null buffer)
  *size = 0;
  *max_records = 0;
  for (int i = 0; i < 2; ++i) {
    if (!g_buffer_out[i].exchange(true)) {
      *buffer = g_buffers[i];
      *size = kBufferBytes;
      return;
    }
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    // CUDA 13's layout: the agent refuses a CUPTI older than 13.0.
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    if (kernel->correlationId == g_wanted_correlation.load(std::memory_order_relaxed)) {
      g_matched_bytes.store(kernel->sharedMemoryExecuted, std::memory_order_relaxed);
    }
    if (kernel->correlationId != g_last_correlation.exchange(kernel->correlationId)) {
      g_distinct_launches.fetch_add(1, std::memory_order_relaxed);
    }
    g_last_bytes.store(kernel->sharedMemoryExecuted, std::memory_order_relaxed);
  }
  for (int i = 0; i < 2; ++i) {
    if (buffer == g_buffers[i]) g_buffer_out[i].store(false);
  }
}

}  // namespace

bool ExecutedConfigProbe::init() {
  ready_ = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) == CUPTI_SUCCESS;
  return ready_;
}

void ExecutedConfigProbe::arm(uint32_t correlation_id) {
  if (!ready_) return;
  g_wanted_correlation.store(correlation_id);
  g_matched_bytes.store(0);
  g_last_bytes.store(0);
  g_distinct_launches.store(0);
  g_last_correlation.store(0);
  armed_ = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
}

uint32_t ExecutedConfigProbe::collect() {
  if (!armed_) return 0;
  armed_ = false;
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  // Forced: the launch has finished (kernel replay ran every pass inside
  // it), so its record is complete; forced also returns a buffer that is
  // not full.
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (uint32_t matched = g_matched_bytes.load(); matched != 0) return matched;
  // The kernel record may carry the driver call's correlation id where the
  // launch came through the runtime; while armed only this launch ran
  // (other threads' launches wait for the profiler's lock).
  return g_distinct_launches.load() == 1 ? g_last_bytes.load() : 0;
}

}  // namespace strata::agent::kernels
