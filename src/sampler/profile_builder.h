// ProfileBuilder: turns the records drained from the sampler's rings into a
// RawProfile, and reads each sample's Python stack from the target's memory
// while the sample is fresh (sampler/python_stack.h).
//
// The rings are per CPU and drained one after another, so one process's
// records arrive out of time order whenever it moved between CPUs: the MMAP
// of a program's libpython (written on one CPU) can be handed over before the
// COMM of the exec that started that program (written on another). Which
// program a process runs is therefore decided by the records' times, never by
// the order they arrive in. A full ring drops records of any kind: after a
// loss, a process's interpreter is looked up in its /proc/PID/maps too.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <vector>

#include "sampler/perf_records.h"
#include "sampler/python_stack.h"
#include "sampler/sampler.h"

namespace strata::sampler {

// One process's Python stack reader and where its code indexes go in the
// profile's shared table.
struct PythonProcessReader {
  PythonProcessReader(pid_t pid, const PythonLayout& layout, const PythonRuntime& runtime,
                      uint64_t since);
  ProcessMemory memory;
  PythonStackReader reader;
  PythonRuntime runtime;
  uint64_t since = 0;                 // time of the record that showed the interpreter
  std::vector<uint32_t> global_code;  // reader's code index -> RawProfile::python_codes
  bool refused = false;               // a read failed with EPERM/EACCES: not tried again
};

// Appends parsed records to a RawProfile, copying only the valid part of each
// stack (dyn_size bytes), reads the Python stack of each sample of a process
// that runs a CPython whose frames it can read, and records the uid of each
// process it hears of while that process is alive. Threading: used by one
// thread.
class ProfileBuilder : public RecordSink {
 public:
  ProfileBuilder(RawProfile& profile, const SamplerOptions& options)
      : p_(profile), options_(options) {}

  bool reads_python() const { return !python_.empty(); }
  bool reads_python_of(uint32_t pid) const { return python_.count(pid) != 0; }

  void on_sample(const SampleRecord& r) override;
  void on_mmap(const MmapRecord& r) override;
  void on_comm(const CommRecord& r) override;
  void on_task(const TaskRecord& r) override;
  void on_lost(const LostRecord& r) override;
  void on_throttle(const ThrottleRecord& r) override;

 private:
  void note_process(uint32_t pid);
  // Whether a record of `pid` at `time` is older than the program the
  // process runs now (an exec at a later time has been seen).
  bool before_last_exec(uint32_t pid, uint64_t time) const;
  void look_for_python(const Mapping& m);
  // After records were lost: the process's /proc/PID/maps, at most once per
  // loss and per kMapsRereadNs of its samples' time.
  void look_for_python_after_loss(const Sample& s);
  void start_python(uint32_t pid, const PythonRuntime& runtime, uint64_t since);
  void read_python_stack(Sample& s);

  RawProfile& p_;
  const SamplerOptions& options_;
  uint32_t last_pid_ = 0;
  std::set<uint32_t> seen_;
  std::map<uint32_t, uint64_t> last_exec_;  // pid -> time of its latest exec seen
  struct MapsRead {
    uint64_t lost_events = 0;  // the loss count it followed
    uint64_t time = 0;         // the sample time it was read at
  };
  std::map<uint32_t, MapsRead> maps_read_;
  std::map<uint32_t, std::unique_ptr<PythonProcessReader>> python_;
  std::vector<PythonFrameRead> scratch_;
};

}  // namespace strata::sampler
