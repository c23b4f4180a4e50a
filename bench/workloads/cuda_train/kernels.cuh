// SPDX-License-Identifier: Apache-2.0
// cuda_train's own kernels: everything but the matrix products (which are cuBLAS's). Each
// Launch* enqueues one kernel on `stream` and checks the launch; T is the activation type,
// float or __nv_bfloat16, and arithmetic is in fp32 whatever T is. Matrices are column-major
// [features x batch], as the GEMMs see them (mlp.cu).
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "model_math.h"

namespace perfwarden::cuda_train {

// What one training step leaves on the device for the next, so that loss scaling never makes
// the host wait for the GPU: the scale, whether this step's gradients overflowed, how many
// optimizer steps were taken (AdamW's t), and the dynamic scale's bookkeeping.
struct TrainState {
  float loss_scale;
  int overflow;
  int step;
  int good_steps;
  int skipped;
};
static_assert(sizeof(TrainState) == kTrainStateBytes, "model_math.h's plan counts these bytes");

struct AdamWHyper {
  float lr;
  float beta1;
  float beta2;
  float eps;
};

// The dynamic loss scale doubles after this many steps without overflow and halves on one
// (the defaults of torch.cuda.amp.GradScaler).
constexpr int kLossScaleGrowthInterval = 2000;

// Step `step`'s batch (synthetic.h): x [inputs x batch] and labels [batch].
template <typename T>
void LaunchGenerateBatch(T* x, int* labels, std::int64_t inputs, std::int64_t classes,
                         std::int64_t batch, std::uint64_t seed, std::int64_t step,
                         cudaStream_t stream);
// Layer `layer`'s initial weights (synthetic.h's InitialWeight).
void LaunchInitWeights(float* w, std::int64_t n, std::int64_t fan_in, std::uint64_t seed, int layer,
                       cudaStream_t stream);
void LaunchCastToBf16(const float* in, __nv_bfloat16* out, std::int64_t n, cudaStream_t stream);

// z[rows x cols] += bias (kept for GELU's derivative); a = GELU(z).
template <typename T>
void LaunchBiasGelu(T* z, T* a, const float* bias, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream);
// Per sample b: row_loss[b] = logsumexp(z) - z[label] with z = logits[:, b] + bias (the max is
// subtracted before exp, so any finite logits work); dlogits = loss_scale * (softmax(z) -
// onehot) / cols, the gradient of the mean loss times the loss scale.
template <typename T>
void LaunchSoftmaxCrossEntropy(const float* logits, const float* bias, const int* labels,
                               const TrainState* state, T* dlogits, float* row_loss,
                               std::int64_t rows, std::int64_t cols, cudaStream_t stream);
// loss = mean of row_loss, in a fixed order (one block), so that a seed gives one loss.
void LaunchMeanLoss(const float* row_loss, std::int64_t n, float* loss, cudaStream_t stream);
// grad *= GELU'(z), in place: the activation's gradient becomes the pre-activation's.
template <typename T>
void LaunchGeluBackward(T* grad, const T* z, std::int64_t n, cudaStream_t stream);
// db[r] = sum over the batch of dz[r, b], in a fixed order (no atomics).
template <typename T>
void LaunchBiasGrad(const T* dz, float* db, std::int64_t rows, std::int64_t cols,
                    cudaStream_t stream);
// Sets state->overflow when any gradient is infinite or NaN.
void LaunchFindNonFinite(const float* grads, std::int64_t n, TrainState* state,
                         cudaStream_t stream);
// AdamW on n parameters with gradients divided by the loss scale; does nothing when
// state->overflow is set; writes bf16 copies of the new values when `copy` is not null.
void LaunchAdamW(float* p, const float* grads, float* m, float* v, __nv_bfloat16* copy,
                 std::int64_t n, AdamWHyper hyper, float weight_decay, const TrainState* state,
                 cudaStream_t stream);
// Ends the step: counts it or its skip, adjusts a dynamic loss scale, clears the overflow flag.
void LaunchFinishStep(TrainState* state, bool dynamic_scale, cudaStream_t stream);

}  // namespace perfwarden::cuda_train
