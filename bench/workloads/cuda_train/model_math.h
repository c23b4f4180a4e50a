// SPDX-License-Identifier: Apache-2.0
// The analytic side of cuda_train, in plain C++ so that g++ compiles it and CI tests it without a
// GPU: parameter count, GEMM FLOPs per training step, the device-memory plan per category,
// percentiles, and the steady-state rule that ends warm-up. cuda_train.cu allocates exactly the
// plan computed here, so the numbers it reports and the numbers tested here are the same code.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfwarden::cuda_train {

// fp32: fp32 everywhere, tensor cores off. tf32: fp32 storage, GEMM inputs rounded to TF32 on
// the tensor cores. bf16: bf16 copies of the weights and bf16 activations feed the GEMMs, which
// accumulate in fp32; master weights, gradients and optimizer state stay fp32.
enum class Precision { kFp32, kTf32, kBf16 };

std::optional<Precision> ParsePrecision(std::string_view text);
const char* PrecisionName(Precision precision);
// Bytes of one activation element (the GEMMs' input type): 4, or 2 for bf16.
std::int64_t ActivationBytes(Precision precision);

// An MLP: widths = {input, hidden..., classes}; layer l maps widths[l] to widths[l + 1]. Every
// layer but the last is followed by bias + GELU; the last gives the logits of a softmax
// cross-entropy over `classes`.
struct ModelShape {
  std::vector<std::int64_t> widths;
  std::int64_t batch = 0;
  Precision precision = Precision::kBf16;

  std::size_t layers() const { return widths.empty() ? 0 : widths.size() - 1; }
  std::int64_t classes() const { return widths.empty() ? 0 : widths.back(); }
};

// "1024,4096,4096,1024" -> {1024, 4096, 4096, 1024}; nullopt and *error set when malformed
// (fewer than two widths, a width below 1, or fewer than two classes).
std::optional<std::vector<std::int64_t>> ParseWidths(std::string_view text, std::string* error);
// --width W --depth D: D layers, input and hidden width W, then `classes` outputs.
std::vector<std::int64_t> WidthsFromDepth(std::int64_t width, std::int64_t depth,
                                          std::int64_t classes);
std::string FormatWidths(const std::vector<std::int64_t>& widths);

// Weights plus biases: sum over layers of in * out + out.
std::int64_t ParamCount(const ModelShape& shape);
// Weights only (the part that gets bf16 copies and weight decay).
std::int64_t WeightCount(const ModelShape& shape);

// GEMM FLOPs of one training step, 2 * m * k * n per product. Per layer (B = batch):
// forward Y = W X (2 B in out), weight gradient dW = dY X^T (2 B in out) and input gradient
// dX = W^T dY (2 B in out), except for the first layer, whose input is data and gets no
// gradient. Element-wise kernels (bias, GELU, softmax, AdamW) are not counted: they are
// memory-bound and below 1% of the FLOPs for any width worth measuring.
struct StepFlops {
  double forward = 0;
  double backward_weights = 0;
  double backward_inputs = 0;
  double total() const { return forward + backward_weights + backward_inputs; }
};
StepFlops FlopsPerStep(const ModelShape& shape);

// Bytes one training step must move to and from device memory at the least (its compulsory
// traffic, for a roofline): every GEMM reads its two operands and writes its result once, every
// element-wise kernel reads and writes its tensors once (bias + GELU, softmax cross-entropy,
// the bias gradients, GELU's backward), and AdamW reads parameters, gradients and both moments
// and writes parameters and moments (and, for bf16, the weights' bf16 copies). Caches can only
// lower the real traffic of a kernel below this when its operands were left in L2 by the one
// before; flops_per_step / bytes_per_step against the device's ridge point classifies the step.
double BytesPerStep(const ModelShape& shape);

// Device memory, by category, in requested bytes (what cuda_train asks cudaMalloc for; the
// allocator rounds each buffer up to its granularity, which this plan does not model).
struct MemoryPlan {
  std::int64_t params = 0;       // fp32 master weights and biases (+ bf16 weight copies)
  std::int64_t grads = 0;        // fp32 gradients of every parameter
  std::int64_t optimizer = 0;    // AdamW's fp32 first and second moments
  std::int64_t activations = 0;  // input batch, labels, pre-activations, activations, logits...
  std::int64_t workspace = 0;    // cuBLAS workspace and the step's state on the device
  std::int64_t total() const { return params + grads + optimizer + activations + workspace; }
};

// The cuBLAS workspace cuda_train hands to cublasSetWorkspace: 32 MiB, NVIDIA's recommendation
// for Hopper (cuBLAS documentation, "cublasSetWorkspace").
constexpr std::int64_t kCublasWorkspaceBytes = 32LL << 20;
// sizeof(TrainState) in kernels.cuh: loss scale, overflow flag, step, good steps, skipped steps.
constexpr std::int64_t kTrainStateBytes = 20;

// The activation buffers (see model_math.cc for the list) are reused in the backward pass: the
// gradient of layer l's activation is written over that activation once dW has consumed it, so
// no extra gradient buffers are needed.
MemoryPlan PlanMemory(const ModelShape& shape, std::int64_t cublas_workspace_bytes);

// Linear interpolation between closest ranks (NumPy's default, Hyndman-Fan type 7); p in
// [0, 100]. The input need not be sorted; an empty input gives 0.
double Percentile(std::vector<double> values, double p);
double Mean(const std::vector<double>& values);
// Sample standard deviation (n - 1) over the mean; 0 for fewer than two values or a zero mean.
double CoefficientOfVariation(const std::vector<double>& values);

// Warm-up ends at the first step after which the last `window` step times have a coefficient of
// variation at or below `max_cv` (the clocks, caches and cuBLAS's heuristics have settled), or
// after `warmup_max` steps, whichever comes first. Steps before and including that one are
// warm-up; every later step is measured. warmup_max = 0 measures every step.
class SteadyState {
 public:
  SteadyState(int window, double max_cv, std::int64_t warmup_max);

  // Records the next step's time; returns whether that step was a warm-up step.
  bool Record(double seconds);
  bool steady() const { return steady_; }
  std::int64_t warmup_steps() const { return warmup_steps_; }
  // "cv" when the rule ended warm-up, "cap" when warmup_max did, "" while warming up.
  const std::string& reason() const { return reason_; }
  // The window's coefficient of variation when warm-up ended (NaN for "cap" before a window).
  double final_cv() const { return final_cv_; }

 private:
  int window_;
  double max_cv_;
  std::int64_t warmup_max_;
  bool steady_ = false;
  std::int64_t warmup_steps_ = 0;
  std::vector<double> recent_;  // the last `window` times
  std::string reason_;
  double final_cv_;
};

}  // namespace perfwarden::cuda_train
