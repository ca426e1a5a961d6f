// A stand-in for a CUDA program, for the no-GPU load tests: dlopens
// libstrata_agent.so and calls its entry points as the driver and NVTX
// would, optionally forking without exec afterwards. An alarm turns a hang
// into a SIGALRM death the test can see.
//   agent_host AGENT init|nvtx|fork
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: agent_host AGENT init|nvtx|fork\n");
    return 2;
  }
  alarm(30);
  void* agent = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (agent == nullptr) {
    std::fprintf(stderr, "dlopen: %s\n", dlerror());
    return 3;
  }
  auto init = reinterpret_cast<int (*)()>(dlsym(agent, "InitializeInjection"));
  auto nvtx = reinterpret_cast<int (*)(void*)>(dlsym(agent, "InitializeInjectionNvtx2"));
  if (init == nullptr || nvtx == nullptr) {
    std::fprintf(stderr, "entry points missing\n");
    return 4;
  }
  const char* mode = argv[2];
  if (std::strcmp(mode, "nvtx") == 0) {
    std::printf("nvtx=%d\n", nvtx(nullptr));
  } else {
    int first = init();
    int second = init();
    std::printf("init=%d,%d\n", first, second);
  }
  if (std::strcmp(mode, "fork") == 0) {
    std::fflush(stdout);
    pid_t child = fork();
    if (child == 0) {
      std::printf("child running\n");
      std::exit(0);  // runs atexit handlers, the agent's included
    }
    int status = 0;
    waitpid(child, &status, 0);
    std::printf("child status=%d\n",
                WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  }
  std::fflush(stdout);
  return 0;
}
