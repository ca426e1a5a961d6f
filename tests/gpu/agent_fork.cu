// GPU test program (d): a traced parent launches kernels, forks a child
// that exits without exec (must not hang, must not touch the parent's
// spool's end), then fork+execs itself as a child that launches its own
// kernels into its own spool.
//   agent_fork          parent: 10 parent_kernel, prints "child_pid P"
//   agent_fork --child  child: 7 child_kernel
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "common.h"

__global__ void parent_kernel() {}
__global__ void child_kernel() {}

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--child") == 0) {
    for (int i = 0; i < 7; ++i) child_kernel<<<1, 32>>>();
    CHECK_CUDA(cudaDeviceSynchronize());
    return 0;
  }
  for (int i = 0; i < 10; ++i) parent_kernel<<<1, 32>>>();
  CHECK_CUDA(cudaDeviceSynchronize());

  pid_t plain = fork();
  if (plain == 0) std::exit(0);  // atexit handlers run; no CUDA in the child
  int status = 0;
  waitpid(plain, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "fork child failed: %d\n", status);
    return 1;
  }

  pid_t child = fork();
  if (child == 0) {
    execl("/proc/self/exe", argv[0], "--child", static_cast<char*>(nullptr));
    _exit(127);
  }
  waitpid(child, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "exec child failed: %d\n", status);
    return 1;
  }
  std::printf("child_pid %d\n", static_cast<int>(child));
  return 0;
}
