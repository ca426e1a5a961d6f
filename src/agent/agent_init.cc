#include "agent/agent_init.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>

#include "agent/config.h"
#include "agent/cuda/tracer.h"
#include "agent/kernels/kernel_profiler.h"
#include "agent/log.h"
#include "agent/signal_chain.h"

namespace strata::agent {

namespace {

std::atomic<Origin> g_origin{Origin::kCudaInjection};
std::atomic<bool> g_traced{false};
std::atomic<bool> g_kernels_mode{false};
pthread_once_t g_once = PTHREAD_ONCE_INIT;

constexpr int kFlushSignals[] = {SIGSEGV, SIGABRT, SIGBUS, SIGTERM, SIGINT};

const char* env_lookup(const char* name) {
  return std::getenv(name);
}

// Called by the driver from cuInit, InitializeInjection finds libcuda
// loaded. Called any other way (a test that dlopens the agent, a program
// that calls it by hand), it checks for a device itself, so that a machine
// without one gets a clear line instead of CUPTI errors. cuInit is never
// called on the NVTX path: initializing CUDA early would change a program
// that forks before its first CUDA call.
bool driver_usable() {
  if (void* loaded = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD); loaded != nullptr) {
    dlclose(loaded);
    return true;
  }
  // Kept open on success: unloading the driver under CUPTI is unsafe.
  void* driver = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (driver == nullptr) {
    const char* why = dlerror();
    log_line("no CUDA device (cannot load the CUDA driver: %s); not tracing",
             why != nullptr ? why : "libcuda.so.1");
    return false;
  }
  using CuInit = int (*)(unsigned int);
  using CuDeviceGetCount = int (*)(int*);
  auto cu_init = reinterpret_cast<CuInit>(dlsym(driver, "cuInit"));
  auto cu_count = reinterpret_cast<CuDeviceGetCount>(dlsym(driver, "cuDeviceGetCount"));
  int count = 0;
  if (cu_init == nullptr || cu_count == nullptr) {
    log_line("no CUDA device (libcuda.so.1 lacks cuInit); not tracing");
    return false;
  }
  if (int rc = cu_init(0); rc != 0) {
    log_line("no CUDA device (cuInit failed with CUresult %d); not tracing", rc);
    return false;
  }
  if (int rc = cu_count(&count); rc != 0 || count == 0) {
    log_line("no CUDA device (cuDeviceGetCount: CUresult %d, %d devices); not tracing", rc, count);
    return false;
  }
  return true;
}

// Two different CUPTI libraries in one process (PyTorch's wheel ships
// libcupti.so.13 under nvidia/cuda_cupti/lib) each keep their own state. Two
// copies with the same soname cannot happen: the loader resolves the
// agent's DT_NEEDED libcupti.so.13 to the one already loaded, whichever
// directory it came from. A different soname (libcupti.so.12 from an older
// wheel) can, and then two profilers drive one driver.
struct CuptiScan {
  int count = 0;
  char first[512] = {};
  char second[512] = {};
};

int collect_cupti(dl_phdr_info* info, size_t, void* data) {
  auto* scan = static_cast<CuptiScan*>(data);
  const char* name = info->dlpi_name;
  if (name == nullptr || name[0] == '\0') return 0;
  const char* base = std::strrchr(name, '/');
  base = base != nullptr ? base + 1 : name;
  if (std::strncmp(base, "libcupti.so", 11) != 0) return 0;
  char* slot = scan->count == 0 ? scan->first : scan->count == 1 ? scan->second : nullptr;
  if (slot != nullptr) {
    std::strncpy(slot, name, sizeof(scan->first) - 1);
  }
  ++scan->count;
  return 0;
}

void warn_if_two_cuptis() {
  CuptiScan scan;
  dl_iterate_phdr(collect_cupti, &scan);
  if (scan.count > 1) {
    log_line(
        "%d CUPTI libraries are loaded (%s, %s, ...); the agent uses the first its "
        "libcupti.so.13 resolved to, and a profiler on the other one conflicts with it",
        scan.count, scan.first, scan.second);
  }
}

void at_exit() {
  Tracer::instance().stop_at_exit();
}
void at_fork_child() {
  Tracer::instance().on_fork_child();
}
void on_signal(int sig, bool terminating) {
  Tracer::instance().on_signal(sig, terminating);
}

// Kernels mode (STRATA_AGENT_MODE=kernels): the kernel profiler instead of
// the tracer, with the same exit, fork and signal hooks.
void kernels_at_exit() {
  kernels::KernelProfiler::instance().stop_at_exit();
}
void kernels_at_fork_child() {
  kernels::KernelProfiler::instance().on_fork_child();
}
void kernels_on_signal(int sig, bool terminating) {
  kernels::KernelProfiler::instance().on_signal(sig, terminating);
}

// The hooks shared by both modes, registered once the session has started.
void install_hooks(void (*exit_hook)(), void (*fork_hook)(), SignalHook signal_hook) {
  // Registered at cuInit, after the CUDA runtime's own exit handler, so it
  // runs first, while CUDA can still flush.
  std::atexit(exit_hook);
  pthread_atfork(nullptr, nullptr, fork_hook);
  if (!SignalChain::install(kFlushSignals, static_cast<int>(std::size(kFlushSignals)),
                            signal_hook)) {
    log_line("cannot install the fatal-signal handlers; a crash loses the last buffers");
  }
}

// PyTorch ops under STRATA_AGENT_CLOCK=cupti (external correlation on):
// hands libstrata_torch.so, if the process loaded it already, the
// external-correlation push and pop. When it loads later it calls
// strata_agent_attach_torch itself: whichever comes second connects them. On
// CLOCK_MONOTONIC (the default) nothing is pushed: the import links each API
// call to the op open around it on its thread (import/torch_op_links.h).
void attach_torch() {
  if (!Tracer::instance().tracing() || !Tracer::instance().external_correlation()) return;
  const char* path = std::getenv("STRATA_TORCH_LIB");
  void* lib = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_NOLOAD) : nullptr;
  if (lib == nullptr) return;
  using Attach = void (*)(int (*)(uint64_t), int (*)());
  if (auto attach = reinterpret_cast<Attach>(dlsym(lib, "strata_torch_attach_cuda"))) {
    attach(&Tracer::push_external_id, &Tracer::pop_external_id);
  }
  dlclose(lib);  // the NOLOAD handle's reference; the library stays (-z nodelete)
}

void start_once() {
  Config config = parse_config(env_lookup);
  if (!config.has_run_dir) {
    log_line("STRATA_RUN_DIR not set; not tracing");
    return;
  }
  if (config.warning[0] != '\0') log_line("%s", config.warning);
  if (g_origin.load() == Origin::kCudaInjection && !driver_usable()) return;
  warn_if_two_cuptis();
  if (config.mode == AgentMode::kKernels) {
    g_kernels_mode.store(true, std::memory_order_release);
    if (!kernels::KernelProfiler::instance().start(config)) return;
    install_hooks(kernels_at_exit, kernels_at_fork_child, kernels_on_signal);
    g_traced.store(true, std::memory_order_release);
    return;
  }
  Tracer& tracer = Tracer::instance();
  if (!tracer.start(config)) return;
  install_hooks(at_exit, at_fork_child, on_signal);
  g_traced.store(true, std::memory_order_release);
  attach_torch();
}

}  // namespace

bool ensure_started(Origin origin) {
  g_origin.store(origin);
  pthread_once(&g_once, start_once);
  // Kernels mode records no NVTX ranges: NVTX's entry gets false and stays
  // a no-op rather than handing its table to CUPTI.
  if (origin == Origin::kNvtxInjection && g_kernels_mode.load(std::memory_order_acquire)) {
    return false;
  }
  return g_traced.load(std::memory_order_acquire);
}

}  // namespace strata::agent

// Called by libstrata_torch.so when it registers after the agent started.
extern "C" __attribute__((visibility("default"))) void strata_agent_attach_torch() {
  strata::agent::attach_torch();
}

// For benchmarks that time the CUDA layer inside one process
// (bench/torch_callback_cost.py --under-strata): 0 turns CUPTI's activity
// records off, as a profiler between its sessions; 1 on again. Nothing
// launched while off is in the trace. A no-op unless the agent is tracing.
extern "C" __attribute__((visibility("default"))) void strata_agent_bench_record(int on) {
  strata::agent::Tracer::instance().set_recording(on != 0);
}
