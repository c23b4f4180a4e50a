// SPDX-License-Identifier: Apache-2.0
// The MLP, its AdamW optimizer and one training step on one CUDA stream: cuBLAS for the matrix
// products (forward, and both backward products per layer), kernels.cu for the rest.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <vector>

#include "kernels.cuh"
#include "model_math.h"
#include "options.h"

namespace perfwarden::cuda_train {

// cudaMalloc with an account per category of model_math.h's MemoryPlan. Everything is
// allocated before the first step and nothing during training, so the sum of the accounts is
// the peak of what cuda_train itself holds.
class DeviceMemory {
 public:
  enum Category { kParams, kGrads, kOptimizer, kActivations, kWorkspace };

  DeviceMemory() = default;
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  ~DeviceMemory();

  template <typename T>
  T* Alloc(Category category, std::int64_t count) {
    return static_cast<T*>(AllocBytes(category, count * static_cast<std::int64_t>(sizeof(T))));
  }
  const MemoryPlan& accounted() const { return accounted_; }

 private:
  void* AllocBytes(Category category, std::int64_t bytes);

  std::vector<void*> buffers_;
  MemoryPlan accounted_;
};

struct TrainConfig {
  ModelShape shape;
  std::uint64_t seed = 1;
  AdamWHyper adamw{1e-3f, 0.9f, 0.999f, 1e-8f};
  float weight_decay = 0.01f;
  LossScaleMode loss_scale_mode = LossScaleMode::kNone;
  float loss_scale = 1;
};
TrainConfig ConfigFrom(const Options& options);

// T: the GEMMs' input and activation type, float (fp32, tf32) or __nv_bfloat16 (bf16).
//
// Layout: all fp32 parameters in one buffer, the weights of every layer first, then the biases
// (one AdamW launch each: the weights decay, the biases do not); gradients and moments alike.
// Layer l's weight is [widths[l+1] x widths[l]] column-major, activations [width x batch].
template <typename T>
class Mlp {
 public:
  Mlp(const TrainConfig& config, cudaStream_t stream);
  ~Mlp();
  Mlp(const Mlp&) = delete;
  Mlp& operator=(const Mlp&) = delete;

  // The data loader: writes step `step`'s batch. Not part of the timed step.
  void GenerateBatch(std::int64_t step);
  void Forward();   // the loss of the current batch into loss()
  void Backward();  // gradients of every parameter
  void Optimize();  // AdamW; skipped on the device when scaled gradients overflowed
  void Step() {
    Forward();
    Backward();
    Optimize();
  }

  const float* loss() const { return loss_; }
  const MemoryPlan& memory() const { return memory_.accounted(); }

  // For --check.
  std::int64_t param_count() const { return param_count_; }
  std::int64_t weight_offset(std::size_t layer) const { return weight_offsets_[layer]; }
  std::int64_t bias_offset(std::size_t layer) const { return bias_offsets_[layer]; }
  float* params() { return params_; }
  float* grads() { return grads_; }
  T* input() { return x_; }
  int* labels() { return labels_; }
  TrainState* state() { return state_; }

 private:
  // C = op(A) op(B), alpha 1 and beta 0, fp32 accumulation.
  void Gemm(cublasOperation_t op_a, cublasOperation_t op_b, std::int64_t m, std::int64_t n,
            std::int64_t k, const void* a, cudaDataType type_a, std::int64_t lda, const void* b,
            cudaDataType type_b, std::int64_t ldb, void* c, cudaDataType type_c, std::int64_t ldc);
  const T* GemmWeight(std::size_t layer) const;

  TrainConfig config_;
  cudaStream_t stream_;
  cublasHandle_t cublas_ = nullptr;
  cublasComputeType_t compute_;
  DeviceMemory memory_;
  std::vector<std::int64_t> widths_;
  std::int64_t batch_;
  std::int64_t param_count_;
  std::int64_t weight_count_;
  std::vector<std::int64_t> weight_offsets_;
  std::vector<std::int64_t> bias_offsets_;

  float* params_;
  __nv_bfloat16* weights_bf16_ = nullptr;  // bf16 only: the GEMMs' copy of the weights
  float* grads_;
  float* m_;
  float* v_;
  T* x_;
  int* labels_;
  std::vector<T*> pre_;  // [l]: layer l's input before GELU, l = 1 .. layers - 1
  std::vector<T*> act_;  // [l]: layer l's input, GELU(pre_[l]); then its gradient
  float* logits_;
  T* dlogits_;
  float* row_loss_;
  float* loss_;
  void* cublas_workspace_;
  TrainState* state_;
};

extern template class Mlp<float>;
extern template class Mlp<__nv_bfloat16>;

}  // namespace perfwarden::cuda_train
