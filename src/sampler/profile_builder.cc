#include "sampler/profile_builder.h"

#include <linux/perf_event.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "common/clock.h"
#include "common/process.h"
#include "common/strings.h"

namespace strata::sampler {

PythonProcessReader::PythonProcessReader(pid_t pid, const PythonLayout& layout,
                                         const PythonRuntime& runtime, uint64_t since)
    : memory(pid),
      reader(layout, runtime.address, pthread_tid_offset()),
      runtime(runtime),
      since(since) {}

void ProfileBuilder::on_sample(const SampleRecord& r) {
  note_process(r.where.pid);
  Sample s;
  s.ip = r.ip;
  s.time = r.where.time;
  s.period = r.period;
  s.pid = r.where.pid;
  s.tid = r.where.tid;
  s.cpu = r.where.cpu;
  if (r.regs_abi != 0 && r.regs.size() == p_.regs_per_sample && p_.regs_per_sample > 0) {
    s.regs_abi = static_cast<uint32_t>(r.regs_abi);
    s.regs_index = p_.regs.size() / p_.regs_per_sample;
    p_.regs.insert(p_.regs.end(), r.regs.begin(), r.regs.end());
  }
  s.stack_offset = p_.stacks.size();
  s.stack_size = static_cast<uint32_t>(r.stack.size());
  p_.stacks.insert(p_.stacks.end(), r.stack.begin(), r.stack.end());
  s.callchain_offset = p_.callchains.size();
  for (uint64_t ip : r.callchain) {
    // Context markers (PERF_CONTEXT_USER, ...) are not addresses.
    if (ip >= static_cast<uint64_t>(PERF_CONTEXT_MAX)) continue;
    p_.callchains.push_back(ip);
  }
  s.callchain_size = static_cast<uint32_t>(p_.callchains.size() - s.callchain_offset);
  look_for_python_after_loss(s);
  read_python_stack(s);
  p_.samples.push_back(s);
}

void ProfileBuilder::on_mmap(const MmapRecord& r) {
  Mapping m;
  static_cast<MmapFields&>(m) = r;
  m.time = r.where.time;
  if (r.has_build_id && r.build_id) std::memcpy(m.build_id.data(), r.build_id, m.build_id.size());
  m.filename = std::string(r.filename);
  look_for_python(m);
  p_.mmaps[r.pid].push_back(std::move(m));
}

void ProfileBuilder::on_comm(const CommRecord& r) {
  note_process(r.pid);
  if (r.exec) {
    // A new program: its own mappings say again whether it runs Python. A
    // reader started by a mapping made after this exec (drained first from
    // another CPU's ring) is the new program's and stays.
    uint64_t& last = last_exec_[r.pid];
    last = std::max(last, r.where.time);
    auto reader = python_.find(r.pid);
    if (reader != python_.end() && reader->second->since < r.where.time) python_.erase(reader);
  }
  p_.comms.push_back(Comm{r.where.time, r.pid, r.tid, r.exec, std::string(r.comm)});
}

void ProfileBuilder::on_task(const TaskRecord& r) {
  if (r.fork) note_process(r.pid);
  // A forked process (not a thread) has its parent's interpreter at the
  // same addresses and gets no MMAP records for it; unless the child has
  // exec'd since (its exec drained first) or the parent's interpreter came
  // after the fork.
  if (r.fork && r.pid != r.ppid && !python_.count(r.pid) && !before_last_exec(r.pid, r.time)) {
    auto parent = python_.find(r.ppid);
    if (parent != python_.end() && parent->second->since <= r.time) {
      start_python(r.pid, parent->second->runtime, r.time);
    }
  }
  p_.tasks.push_back(TaskEvent{r.fork, r.time, r.pid, r.ppid, r.tid, r.ptid});
}

void ProfileBuilder::on_lost(const LostRecord& r) {
  if (!r.samples_only) p_.counters.lost_events++;
  p_.counters.lost_samples += r.lost;
}

void ProfileBuilder::on_throttle(const ThrottleRecord& r) {
  (r.throttle ? p_.counters.throttle_events : p_.counters.unthrottle_events)++;
  p_.throttles.push_back(ThrottleEvent{r.throttle, r.time, r.where.cpu});
}

// One /proc read per process, the first time it is heard of.
void ProfileBuilder::note_process(uint32_t pid) {
  if (pid == 0 || pid == last_pid_) return;
  last_pid_ = pid;
  if (!seen_.insert(pid).second) return;
  if (auto uid = process_fs_uid(static_cast<int>(pid))) p_.uids.emplace(pid, *uid);
}

bool ProfileBuilder::before_last_exec(uint32_t pid, uint64_t time) const {
  auto last = last_exec_.find(pid);
  return last != last_exec_.end() && time < last->second;
}

void ProfileBuilder::look_for_python(const Mapping& m) {
  if (!options_.find_python_runtime || python_.count(m.pid)) return;
  // A mapping of the program the process ran before its latest exec.
  if (before_last_exec(m.pid, m.time)) return;
  auto runtime = options_.find_python_runtime(m);
  if (!runtime) return;
  start_python(m.pid, *runtime, m.time);
}

void ProfileBuilder::look_for_python_after_loss(const Sample& s) {
  // A process reads /proc/PID/maps again no sooner than this after its last
  // read (sample time), however many losses follow: a busy non-Python
  // process on an overflowing ring would read it per loss otherwise.
  constexpr uint64_t kMapsRereadNs = 50'000'000;
  if (!options_.find_python_runtime_of_process || p_.counters.lost_events == 0) return;
  if (s.pid == 0 || python_.count(s.pid) || before_last_exec(s.pid, s.time)) return;
  MapsRead& last = maps_read_[s.pid];
  if (last.lost_events == p_.counters.lost_events) return;
  if (last.time != 0 && s.time < last.time + kMapsRereadNs) return;
  last = MapsRead{p_.counters.lost_events, s.time};
  if (auto runtime = options_.find_python_runtime_of_process(s.pid)) {
    start_python(s.pid, *runtime, s.time);
  }
}

void ProfileBuilder::start_python(uint32_t pid, const PythonRuntime& runtime, uint64_t since) {
  auto& status = p_.python_processes[pid];
  status.major = runtime.major;
  status.minor = runtime.minor;
  status.problem = runtime.problem;
  const PythonLayout* layout = python_layout(runtime.major, runtime.minor);
  if (!runtime.problem.empty() || runtime.address == 0) return;
  if (layout == nullptr) {
    status.problem = std::string("reading the frames of CPython ") + std::to_string(runtime.major) +
                     "." + std::to_string(runtime.minor) +
                     " from memory is not supported (strata reads " + python_layouts_known() + ")";
    return;
  }
  if (layout->tstate_native_thread_id == 0 && !pthread_tid_offset()) {
    status.problem = "the thread id inside glibc's struct pthread was not found";
    return;
  }
  python_[pid] =
      std::make_unique<PythonProcessReader>(static_cast<pid_t>(pid), *layout, runtime, since);
}

void ProfileBuilder::read_python_stack(Sample& s) {
  if (python_.empty()) return;
  auto it = python_.find(s.pid);
  if (it == python_.end() || it->second->refused) return;
  PythonProcessReader& proc = *it->second;
  // Taken before the interpreter was mapped (drained late from another
  // CPU's ring): the stack in memory now is not the one it caught.
  if (s.time < proc.since) return;
  const int64_t start = monotonic_ns();
  proc.memory.new_snapshot();
  const PythonReadResult result = proc.reader.read(proc.memory, s.tid, &scratch_);
  const int64_t end = monotonic_ns();
  p_.counters.python_read_ns += static_cast<uint64_t>(end - start);
  if (start > static_cast<int64_t>(s.time)) {
    p_.counters.python_read_delay_ns += static_cast<uint64_t>(start) - s.time;
  }
  if (result == PythonReadResult::kNoThread) {
    ++p_.counters.python_no_thread;
  } else if (result == PythonReadResult::kReadFailed) {
    ++p_.counters.python_read_failures;
    const int err = proc.memory.last_errno();
    if (err == EPERM || err == EACCES) {
      proc.refused = true;
      p_.python_processes[s.pid].problem =
          "reading its memory was refused (process_vm_readv: " + errno_text(err) +
          "): it needs ptrace access to the target (same user, kernel.yama.ptrace_scope <= 1, "
          "or CAP_SYS_PTRACE)";
    }
    return;
  }
  if (result != PythonReadResult::kOk) return;
  ++p_.counters.python_reads;
  const auto& codes = proc.reader.codes();
  while (proc.global_code.size() < codes.size()) {
    proc.global_code.push_back(static_cast<uint32_t>(p_.python_codes.size()));
    p_.python_codes.push_back(codes[proc.global_code.size() - 1]);
  }
  s.python_read = true;
  s.python_offset = p_.python_frames.size();
  s.python_size = static_cast<uint32_t>(scratch_.size());
  for (PythonFrameRead f : scratch_) {
    f.code = proc.global_code[f.code];
    p_.python_frames.push_back(f);
  }
}

}  // namespace strata::sampler
