// GPU test program (c): a CUDA graph of 5 kernels, captured once and
// replayed R times. With CONCURRENT_KERNEL and no GRAPH_TRACE, every graph
// kernel must appear as a kernel record.
//   agent_graph R
#include "common.h"

__global__ void graph_kernel(int step) {
  (void)step;
}

int main(int argc, char** argv) {
  int replays = argc > 1 ? std::atoi(argv[1]) : 20;
  cudaStream_t stream;
  CHECK_CUDA(cudaStreamCreate(&stream));
  cudaGraph_t graph;
  CHECK_CUDA(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
  for (int i = 0; i < 5; ++i) graph_kernel<<<1, 32, 0, stream>>>(i);
  CHECK_CUDA(cudaStreamEndCapture(stream, &graph));
  cudaGraphExec_t exec;
  CHECK_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int r = 0; r < replays; ++r) CHECK_CUDA(cudaGraphLaunch(exec, stream));
  CHECK_CUDA(cudaStreamSynchronize(stream));
  CHECK_CUDA(cudaGraphExecDestroy(exec));
  CHECK_CUDA(cudaGraphDestroy(graph));
  CHECK_CUDA(cudaStreamDestroy(stream));
  std::printf("graph kernels %d\n", 5 * replays);
  return 0;
}
