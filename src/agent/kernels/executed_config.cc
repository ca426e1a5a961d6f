#include "agent/kernels/executed_config.h"

#include <cupti.h>

#include <atomic>

#include "agent/log.h"

namespace strata::agent::kernels {

namespace {

// Records of launches nobody profiles pass through these and are dropped;
// four buffers so that CUPTI has one while the completion callback reads
// another. A request finding none free gets none (CUDA 13.0 allows a null
// buffer: those records are dropped, counted by CUPTI).
constexpr int kBuffers = 4;
constexpr size_t kBufferBytes = 256 * 1024;
alignas(8) uint8_t g_buffers[kBuffers][kBufferBytes];
std::atomic<bool> g_buffer_out[kBuffers];  // handed to CUPTI, not yet completed

// Set by expect(), matched by the completion callback, read by collect()
// after the flush: cuptiActivityFlushAll is a blocking call that hands every
// buffer to the completion callback before it returns (cupti_activity.h,
// CUDA 13.0). The kernel record's correlation id is the launch API call's
// (the same id CUpti_CallbackData::correlationId carries).
std::atomic<uint32_t> g_wanted{0};
std::atomic<bool> g_found{false};
std::atomic<uint32_t> g_smem_executed{0};
std::atomic<uint32_t> g_registers{0};
std::atomic<uint32_t> g_static_shared{0};
std::atomic<uint32_t> g_records{0};  // kernel records seen since expect()

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
  for (int i = 0; i < kBuffers; ++i) {
    if (!g_buffer_out[i].exchange(true)) {
      *buffer = g_buffers[i];
      *size = kBufferBytes;
      return;
    }
  }
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  CUpti_Activity* record = nullptr;
  const uint32_t wanted = g_wanted.load();
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    if (record->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) continue;
    g_records.fetch_add(1);
    // CUDA 13's layout: the agent refuses a CUPTI older than 13.0.
    const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
    if (wanted == 0 || kernel->correlationId != wanted) continue;
    g_smem_executed.store(kernel->sharedMemoryExecuted);
    g_registers.store(kernel->registersPerThread);
    g_static_shared.store(kernel->staticSharedMemory);
    g_found.store(true);
  }
  for (int i = 0; i < kBuffers; ++i) {
    if (buffer == g_buffers[i]) g_buffer_out[i].store(false);
  }
}

}  // namespace

bool ExecutedConfigProbe::start(Records records) {
  if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
    return false;
  }
  started_ = true;
  if (records == Records::kFromStart) {
    enabled_ = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
    started_ = enabled_;
  }
  return started_;
}

void ExecutedConfigProbe::expect(uint32_t correlation_id) {
  if (!started_) return;
  g_found.store(false);
  g_records.store(0);
  g_wanted.store(correlation_id);
}

void ExecutedConfigProbe::record_begin() {
  if (!started_ || enabled_) return;
  enabled_ = recording_ =
      cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
}

void ExecutedConfigProbe::record_end() {
  if (!recording_) return;
  recording_ = enabled_ = false;
  cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

ExecutedLaunch ExecutedConfigProbe::collect(bool debug) {
  ExecutedLaunch out;
  if (!started_) return out;
  // Forced: also a buffer that is not full. The recorded kernel has
  // finished (kernel replay ran every pass inside the launch's API call;
  // strata's relaunch was synchronized), so its record is complete.
  CUptiResult flushed = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  out.found = g_found.load();
  if (out.found) {
    out.smem_config_bytes = g_smem_executed.load();
    out.registers_per_thread = g_registers.load();
    out.static_shared_bytes = g_static_shared.load();
  }
  if (debug) {
    log_line("kernels: kernel records: flush %d, %u records, correlation %u %s",
             static_cast<int>(flushed), g_records.load(), g_wanted.load(),
             out.found ? "found" : "not found");
  }
  g_wanted.store(0);
  return out;
}

void ExecutedConfigProbe::stop() {
  if (!started_) return;
  started_ = false;
  recording_ = false;
  if (enabled_) {
    enabled_ = false;
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  }
}

}  // namespace strata::agent::kernels
