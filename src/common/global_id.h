// Nsight Systems' serialized GlobalId, the thread and process key of every
// table in the trace database (globalTid, globalPid): the tid in bits 0..23,
// the pid in bits 24..47, hardware and VM ids above (reference/
// nsys-sqlite-schema.sql). strata writes pid and tid only; nsys exports may
// carry the high bits too, so code that compares processes keeps them all.
#pragma once

#include <cstdint>

namespace strata::global_id {

inline constexpr int64_t kFieldMask = 0xFFFFFF;  // each of the pid and tid fields: 24 bits
inline constexpr int kPidShift = 24;

// The globalTid strata writes for a thread (and, with tid 0, the globalPid of
// its process).
inline constexpr int64_t make_tid(int64_t pid, int64_t tid) {
  return ((pid & kFieldMask) << kPidShift) | (tid & kFieldMask);
}
inline constexpr int64_t make_pid(int64_t pid) {
  return make_tid(pid, 0);
}

inline constexpr int64_t pid_of(int64_t global_id) {
  return (global_id >> kPidShift) & kFieldMask;
}
inline constexpr int64_t tid_of(int64_t global_tid) {
  return global_tid & kFieldMask;
}
// Everything but the tid: the globalPid a globalTid belongs to, high bits
// included, as nsys joins threads to processes.
inline constexpr int64_t process_of(int64_t global_tid) {
  return global_tid & ~kFieldMask;
}

}  // namespace strata::global_id
