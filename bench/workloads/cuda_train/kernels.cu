// SPDX-License-Identifier: Apache-2.0
#include <algorithm>
#include <cmath>

#include "cuda_check.cuh"
#include "kernels.cuh"
#include "synthetic.h"

namespace perfwarden::cuda_train {
namespace {

constexpr int kThreads = 256;  // a multiple of the warp size, as BlockReduce needs
constexpr float kSqrt2OverPi = 0.7978845608028654f;
constexpr float kGeluCubic = 0.044715f;

// Blocks for a grid-stride loop over n elements: one element per thread up to a grid that
// fills any current GPU many times over; beyond that, threads loop.
unsigned Blocks(std::int64_t n) {
  return static_cast<unsigned>(std::clamp<std::int64_t>((n + kThreads - 1) / kThreads, 1, 32768));
}

void CheckLaunch() { PERFWARDEN_CUDA_CHECK(cudaGetLastError()); }

__device__ __forceinline__ std::int64_t GlobalThread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ std::int64_t GridThreads() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

__device__ __forceinline__ float ToFloat(float x) { return x; }
__device__ __forceinline__ float ToFloat(__nv_bfloat16 x) { return __bfloat162float(x); }
template <typename T>
__device__ __forceinline__ T FromFloat(float x);
template <>
__device__ __forceinline__ float FromFloat<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// reference.cc's Gelu and GeluGrad, in fp32.
__device__ __forceinline__ float Gelu(float z) {
  return 0.5f * z * (1.0f + tanhf(kSqrt2OverPi * (z + kGeluCubic * z * z * z)));
}
__device__ __forceinline__ float GeluGrad(float z) {
  const float t = tanhf(kSqrt2OverPi * (z + kGeluCubic * z * z * z));
  return 0.5f * (1.0f + t) +
         0.5f * z * (1.0f - t * t) * kSqrt2OverPi * (1.0f + 3.0f * kGeluCubic * z * z);
}

struct Max {
  __device__ float operator()(float a, float b) const { return fmaxf(a, b); }
};
struct Sum {
  __device__ float operator()(float a, float b) const { return a + b; }
};

// Reduces v over the block and returns the result to every thread, in an order fixed by the
// block size (deterministic). `shared` holds one float per warp.
template <typename Op>
__device__ float BlockReduce(float v, Op op, float* shared) {
  for (int offset = 16; offset > 0; offset /= 2) v = op(v, __shfl_xor_sync(0xffffffffu, v, offset));
  const int warps = static_cast<int>(blockDim.x) / 32;
  __syncthreads();  // a previous reduction may still be reading `shared`
  if (threadIdx.x % 32 == 0) shared[threadIdx.x / 32] = v;
  __syncthreads();
  v = shared[0];
  for (int w = 1; w < warps; ++w) v = op(v, shared[w]);
  return v;
}

template <typename T>
__global__ void GenerateBatchKernel(T* x, int* labels, std::int64_t inputs, std::int64_t classes,
                                    std::int64_t batch, std::uint64_t seed, std::int64_t step) {
  const std::int64_t n = inputs * batch;
  for (std::int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const std::int64_t sample = i / inputs;
    const std::int64_t feature = i % inputs;
    const int label = SampleLabel(seed, step, sample, classes);
    x[i] = FromFloat<T>(SampleInput(seed, step, sample, feature, label, inputs));
    if (feature == 0) labels[sample] = label;
  }
}

__global__ void InitWeightsKernel(float* w, std::int64_t n, std::int64_t fan_in, std::uint64_t seed,
                                  int layer) {
  for (std::int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    w[i] = InitialWeight(seed, layer, i, fan_in);
  }
}

__global__ void CastToBf16Kernel(const float* in, __nv_bfloat16* out, std::int64_t n) {
  for (std::int64_t i = GlobalThread(); i < n; i += GridThreads())
    out[i] = FromFloat<__nv_bfloat16>(in[i]);
}

template <typename T>
__global__ void BiasGeluKernel(T* z, T* a, const float* bias, std::int64_t rows, std::int64_t n) {
  for (std::int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const float v = ToFloat(z[i]) + bias[i % rows];
    z[i] = FromFloat<T>(v);
    a[i] = FromFloat<T>(Gelu(v));
  }
}

// One block per sample: its `rows` logits are contiguous.
template <typename T>
__global__ void SoftmaxCrossEntropyKernel(const float* logits, const float* bias, const int* labels,
                                          const TrainState* state, T* dlogits, float* row_loss,
                                          std::int64_t rows, std::int64_t cols) {
  __shared__ float shared[kThreads / 32];
  const std::int64_t sample = blockIdx.x;
  const float* z = logits + sample * rows;
  float max = -INFINITY;
  for (std::int64_t r = threadIdx.x; r < rows; r += blockDim.x) max = fmaxf(max, z[r] + bias[r]);
  max = BlockReduce(max, Max{}, shared);
  float sum = 0;
  for (std::int64_t r = threadIdx.x; r < rows; r += blockDim.x) sum += expf(z[r] + bias[r] - max);
  sum = BlockReduce(sum, Sum{}, shared);
  const float log_sum = max + logf(sum);
  const int label = labels[sample];
  if (threadIdx.x == 0) row_loss[sample] = log_sum - (z[label] + bias[label]);
  const float scale = state->loss_scale / static_cast<float>(cols);
  T* dz = dlogits + sample * rows;
  for (std::int64_t r = threadIdx.x; r < rows; r += blockDim.x) {
    const float p = expf(z[r] + bias[r] - log_sum);
    dz[r] = FromFloat<T>(scale * (p - (r == label ? 1.0f : 0.0f)));
  }
}

__global__ void MeanLossKernel(const float* row_loss, std::int64_t n, float* loss) {
  __shared__ float shared[kThreads / 32];
  float sum = 0;
  for (std::int64_t i = threadIdx.x; i < n; i += blockDim.x) sum += row_loss[i];
  sum = BlockReduce(sum, Sum{}, shared);
  if (threadIdx.x == 0) *loss = sum / static_cast<float>(n);
}

template <typename T>
__global__ void GeluBackwardKernel(T* grad, const T* z, std::int64_t n) {
  for (std::int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    grad[i] = FromFloat<T>(ToFloat(grad[i]) * GeluGrad(ToFloat(z[i])));
  }
}

// Block (32, kBiasGradRows): 32 consecutive features (coalesced), the batch split over threadIdx.y.
constexpr int kBiasGradRows = 8;
template <typename T>
__global__ void BiasGradKernel(const T* dz, float* db, std::int64_t rows, std::int64_t cols) {
  __shared__ float partial[kBiasGradRows][33];  // 33: no bank conflicts on the column read
  const std::int64_t r = static_cast<std::int64_t>(blockIdx.x) * 32 + threadIdx.x;
  float sum = 0;
  if (r < rows) {
    for (std::int64_t b = threadIdx.y; b < cols; b += kBiasGradRows)
      sum += ToFloat(dz[r + b * rows]);
  }
  partial[threadIdx.y][threadIdx.x] = sum;
  __syncthreads();
  if (threadIdx.y == 0 && r < rows) {
    for (int y = 1; y < kBiasGradRows; ++y) sum += partial[y][threadIdx.x];
    db[r] = sum;
  }
}

__global__ void FindNonFiniteKernel(const float* grads, std::int64_t n, TrainState* state) {
  for (std::int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    if (!isfinite(grads[i])) state->overflow = 1;  // every writer writes 1: a benign race
  }
}

__global__ void AdamWKernel(float* p, const float* grads, float* m, float* v, __nv_bfloat16* copy,
                            std::int64_t n, AdamWHyper hyper, float weight_decay,
                            const TrainState* state) {
  if (state->overflow != 0) return;  // skipped step: the gradients are not usable
  // Bias corrections in double, once per thread: 1 - beta^t cancels badly in fp32 at small t.
  const double t = static_cast<double>(state->step) + 1.0;
  const float correction1 = static_cast<float>(1.0 - pow(static_cast<double>(hyper.beta1), t));
  const float correction2 = static_cast<float>(1.0 - pow(static_cast<double>(hyper.beta2), t));
  const float unscale = 1.0f / state->loss_scale;
  for (std::int64_t i = GlobalThread(); i < n; i += GridThreads()) {
    const float g = grads[i] * unscale;
    const float mi = hyper.beta1 * m[i] + (1.0f - hyper.beta1) * g;
    const float vi = hyper.beta2 * v[i] + (1.0f - hyper.beta2) * g * g;
    m[i] = mi;
    v[i] = vi;
    float pi = p[i];
    pi -=
        hyper.lr * ((mi / correction1) / (sqrtf(vi / correction2) + hyper.eps) + weight_decay * pi);
    p[i] = pi;
    if (copy != nullptr) copy[i] = FromFloat<__nv_bfloat16>(pi);
  }
}

__global__ void FinishStepKernel(TrainState* state, bool dynamic_scale) {
  if (state->overflow != 0) {
    ++state->skipped;
    state->good_steps = 0;
    if (dynamic_scale) state->loss_scale = fmaxf(state->loss_scale * 0.5f, 1.0f);
  } else {
    ++state->step;
    if (dynamic_scale && ++state->good_steps >= kLossScaleGrowthInterval) {
      state->loss_scale *= 2.0f;
      state->good_steps = 0;
    }
  }
  state->overflow = 0;
}

}  // namespace

template <typename T>
void LaunchGenerateBatch(T* x, int* labels, std::int64_t inputs, std::int64_t classes,
                         std::int64_t batch, std::uint64_t seed, std::int64_t step,
                         cudaStream_t stream) {
  GenerateBatchKernel<<<Blocks(inputs * batch), kThreads, 0, stream>>>(x, labels, inputs, classes,
                                                                       batch, seed, step);
  CheckLaunch();
}

void LaunchInitWeights(float* w, std::int64_t n, std::int64_t fan_in, std::uint64_t seed, int layer,
                       cudaStream_t stream) {
  InitWeightsKernel<<<Blocks(n), kThreads, 0, stream>>>(w, n, fan_in, seed, layer);
  CheckLaunch();
}

void LaunchCastToBf16(const float* in, __nv_bfloat16* out, std::int64_t n, cudaStream_t stream) {
  CastToBf16Kernel<<<Blocks(n), kThreads, 0, stream>>>(in, out, n);
  CheckLaunch();
}

template <typename T>
void LaunchBiasGelu(T* z, T* a, const float* bias, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream) {
  BiasGeluKernel<<<Blocks(rows * cols), kThreads, 0, stream>>>(z, a, bias, rows, rows * cols);
  CheckLaunch();
}

template <typename T>
void LaunchSoftmaxCrossEntropy(const float* logits, const float* bias, const int* labels,
                               const TrainState* state, T* dlogits, float* row_loss,
                               std::int64_t rows, std::int64_t cols, cudaStream_t stream) {
  SoftmaxCrossEntropyKernel<<<static_cast<unsigned>(cols), kThreads, 0, stream>>>(
      logits, bias, labels, state, dlogits, row_loss, rows, cols);
  CheckLaunch();
}

void LaunchMeanLoss(const float* row_loss, std::int64_t n, float* loss, cudaStream_t stream) {
  MeanLossKernel<<<1, kThreads, 0, stream>>>(row_loss, n, loss);
  CheckLaunch();
}

template <typename T>
void LaunchGeluBackward(T* grad, const T* z, std::int64_t n, cudaStream_t stream) {
  GeluBackwardKernel<<<Blocks(n), kThreads, 0, stream>>>(grad, z, n);
  CheckLaunch();
}

template <typename T>
void LaunchBiasGrad(const T* dz, float* db, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream) {
  const dim3 block(32, kBiasGradRows);
  BiasGradKernel<<<static_cast<unsigned>((rows + 31) / 32), block, 0, stream>>>(dz, db, rows, cols);
  CheckLaunch();
}

void LaunchFindNonFinite(const float* grads, std::int64_t n, TrainState* state,
                         cudaStream_t stream) {
  FindNonFiniteKernel<<<Blocks(n), kThreads, 0, stream>>>(grads, n, state);
  CheckLaunch();
}

void LaunchAdamW(float* p, const float* grads, float* m, float* v, __nv_bfloat16* copy,
                 std::int64_t n, AdamWHyper hyper, float weight_decay, const TrainState* state,
                 cudaStream_t stream) {
  if (n == 0) return;
  AdamWKernel<<<Blocks(n), kThreads, 0, stream>>>(p, grads, m, v, copy, n, hyper, weight_decay,
                                                  state);
  CheckLaunch();
}

void LaunchFinishStep(TrainState* state, bool dynamic_scale, cudaStream_t stream) {
  FinishStepKernel<<<1, 1, 0, stream>>>(state, dynamic_scale);
  CheckLaunch();
}

#define PERFWARDEN_INSTANTIATE(T)                                                                  \
  template void LaunchGenerateBatch<T>(T*, int*, std::int64_t, std::int64_t, std::int64_t,         \
                                       std::uint64_t, std::int64_t, cudaStream_t);                 \
  template void LaunchBiasGelu<T>(T*, T*, const float*, std::int64_t, std::int64_t, cudaStream_t); \
  template void LaunchSoftmaxCrossEntropy<T>(const float*, const float*, const int*,               \
                                             const TrainState*, T*, float*, std::int64_t,          \
                                             std::int64_t, cudaStream_t);                          \
  template void LaunchGeluBackward<T>(T*, const T*, std::int64_t, cudaStream_t);                   \
  template void LaunchBiasGrad<T>(const T*, float*, std::int64_t, std::int64_t, cudaStream_t);
PERFWARDEN_INSTANTIATE(float)
PERFWARDEN_INSTANTIATE(__nv_bfloat16)
#undef PERFWARDEN_INSTANTIATE

}  // namespace perfwarden::cuda_train
