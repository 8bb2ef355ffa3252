// GPU check program for the tracer (tests/gpu/check_tracer.sh): captures KERNELS distinct
// kernels into a CUDA graph, replays it REPLAYS times inside an NVTX range "replay", and
// launches PLAIN ordinary kernels inside a range "plain". Prints what it launched as one JSON
// line, so the check can compare the tracer's counts with the truth:
//   {"graph_kernels":..,"graph_nodes":..,"replays":..,"plain_kernels":..}
//   usage: tracer_graph [KERNELS=6] [REPLAYS=50] [PLAIN=20]
#include <cuda_runtime.h>
#include <nvtx3/nvToolsExt.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(x)                                                                              \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      return 1;                                                                               \
    }                                                                                         \
  } while (0)

template <int K>
__global__ void step_kernel(float* x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = x[i] * 0.999f + static_cast<float>(K);
}

using KernelFn = void (*)(float*, int);
static KernelFn kKernels[] = {step_kernel<0>, step_kernel<1>, step_kernel<2>, step_kernel<3>,
                              step_kernel<4>, step_kernel<5>, step_kernel<6>, step_kernel<7>};

int main(int argc, char** argv) {
  int kernels = argc > 1 ? std::atoi(argv[1]) : 6;
  int replays = argc > 2 ? std::atoi(argv[2]) : 50;
  int plain = argc > 3 ? std::atoi(argv[3]) : 20;
  if (kernels < 1 || kernels > 8 || replays < 1 || plain < 0) {
    std::fprintf(stderr, "usage: tracer_graph [KERNELS 1..8] [REPLAYS>=1] [PLAIN>=0]\n");
    return 2;
  }
  const int n = 1 << 16;
  float* x = nullptr;
  CHECK(cudaMalloc(&x, n * sizeof(float)));
  CHECK(cudaMemset(x, 0, n * sizeof(float)));
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  cudaGraph_t graph;
  CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  for (int k = 0; k < kernels; ++k) kKernels[k]<<<n / 256, 256, 0, s>>>(x, n);
  CHECK(cudaStreamEndCapture(s, &graph));
  cudaGraphExec_t exec;
  CHECK(cudaGraphInstantiate(&exec, graph, 0));
  size_t nodes = 0;
  CHECK(cudaGraphGetNodes(graph, nullptr, &nodes));
  CHECK(cudaStreamSynchronize(s));

  nvtxRangePushA("replay");
  for (int r = 0; r < replays; ++r) CHECK(cudaGraphLaunch(exec, s));
  CHECK(cudaStreamSynchronize(s));
  nvtxRangePop();

  nvtxRangeId_t plain_range = nvtxRangeStartA("plain");
  for (int i = 0; i < plain; ++i) kKernels[i % kernels]<<<n / 256, 256, 0, s>>>(x, n);
  CHECK(cudaStreamSynchronize(s));
  nvtxRangeEnd(plain_range);

  float host = 0;
  CHECK(cudaMemcpy(&host, x, sizeof host, cudaMemcpyDeviceToHost));
  std::printf(
      "{\"graph_kernels\":%d,\"graph_nodes\":%zu,\"replays\":%d,\"plain_kernels\":%d,"
      "\"x0\":%g}\n",
      kernels * replays, nodes, replays, plain, host);
  CHECK(cudaGraphExecDestroy(exec));
  CHECK(cudaGraphDestroy(graph));
  CHECK(cudaStreamDestroy(s));
  CHECK(cudaFree(x));
  return 0;
}
