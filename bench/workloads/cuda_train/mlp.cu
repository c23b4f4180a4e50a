// SPDX-License-Identifier: Apache-2.0
#include <type_traits>

#include "cuda_check.cuh"
#include "mlp.cuh"

namespace perfwarden::cuda_train {

DeviceMemory::~DeviceMemory() {
  for (void* buffer : buffers_) cudaFree(buffer);  // errors at teardown have nowhere to go
}

void* DeviceMemory::AllocBytes(Category category, std::int64_t bytes) {
  void* buffer = nullptr;
  PERFWARDEN_CUDA_CHECK(cudaMalloc(&buffer, static_cast<std::size_t>(bytes)));
  buffers_.push_back(buffer);
  switch (category) {
    case kParams:
      accounted_.params += bytes;
      break;
    case kGrads:
      accounted_.grads += bytes;
      break;
    case kOptimizer:
      accounted_.optimizer += bytes;
      break;
    case kActivations:
      accounted_.activations += bytes;
      break;
    case kWorkspace:
      accounted_.workspace += bytes;
      break;
  }
  return buffer;
}

TrainConfig ConfigFrom(const Options& options) {
  TrainConfig config;
  config.shape = options.shape();
  config.seed = options.seed;
  config.adamw = {static_cast<float>(options.lr), static_cast<float>(options.beta1),
                  static_cast<float>(options.beta2), static_cast<float>(options.eps)};
  config.weight_decay = static_cast<float>(options.weight_decay);
  config.loss_scale_mode = options.loss_scale_mode;
  config.loss_scale = static_cast<float>(options.loss_scale);
  return config;
}

namespace {

template <typename T>
constexpr cudaDataType kType = std::is_same_v<T, float> ? CUDA_R_32F : CUDA_R_16BF;

}  // namespace

template <typename T>
Mlp<T>::Mlp(const TrainConfig& config, cudaStream_t stream)
    : config_(config),
      stream_(stream),
      widths_(config.shape.widths),
      batch_(config.shape.batch),
      param_count_(ParamCount(config.shape)),
      weight_count_(WeightCount(config.shape)) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, __nv_bfloat16>);
  const std::size_t layers = config.shape.layers();
  const bool bf16 = config.shape.precision == Precision::kBf16;
  if (bf16 != std::is_same_v<T, __nv_bfloat16>) {
    throw std::logic_error("Mlp's activation type does not match the precision");
  }
  // fp32: no tensor cores (CUBLAS_COMPUTE_32F does not down-convert). tf32: inputs rounded to
  // TF32 on the tensor cores. bf16: bf16 inputs, fp32 accumulation.
  compute_ = config.shape.precision == Precision::kTf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                        : CUBLAS_COMPUTE_32F;
  std::int64_t weights = 0;
  std::int64_t biases = weight_count_;
  for (std::size_t l = 0; l < layers; ++l) {
    weight_offsets_.push_back(weights);
    bias_offsets_.push_back(biases);
    weights += widths_[l] * widths_[l + 1];
    biases += widths_[l + 1];
  }

  using M = DeviceMemory;
  params_ = memory_.Alloc<float>(M::kParams, param_count_);
  if (bf16) weights_bf16_ = memory_.Alloc<__nv_bfloat16>(M::kParams, weight_count_);
  grads_ = memory_.Alloc<float>(M::kGrads, param_count_);
  m_ = memory_.Alloc<float>(M::kOptimizer, param_count_);
  v_ = memory_.Alloc<float>(M::kOptimizer, param_count_);
  x_ = memory_.Alloc<T>(M::kActivations, widths_[0] * batch_);
  labels_ = memory_.Alloc<int>(M::kActivations, batch_);
  pre_.assign(layers, nullptr);
  act_.assign(layers, nullptr);
  for (std::size_t l = 1; l < layers; ++l) {
    pre_[l] = memory_.Alloc<T>(M::kActivations, widths_[l] * batch_);
    act_[l] = memory_.Alloc<T>(M::kActivations, widths_[l] * batch_);
  }
  logits_ = memory_.Alloc<float>(M::kActivations, widths_.back() * batch_);
  dlogits_ = memory_.Alloc<T>(M::kActivations, widths_.back() * batch_);
  row_loss_ = memory_.Alloc<float>(M::kActivations, batch_);
  loss_ = memory_.Alloc<float>(M::kActivations, 1);
  cublas_workspace_ = memory_.Alloc<char>(M::kWorkspace, kCublasWorkspaceBytes);
  state_ = memory_.Alloc<TrainState>(M::kWorkspace, 1);

  PERFWARDEN_CUBLAS_CHECK(cublasCreate(&cublas_));
  PERFWARDEN_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
  // After cublasSetStream, which resets the workspace to cuBLAS's own pool: with ours, cuBLAS
  // allocates nothing per call and the memory plan holds.
  PERFWARDEN_CUBLAS_CHECK(cublasSetWorkspace(cublas_, cublas_workspace_,
                                             static_cast<std::size_t>(kCublasWorkspaceBytes)));

  for (std::size_t l = 0; l < layers; ++l) {
    LaunchInitWeights(params_ + weight_offsets_[l], widths_[l] * widths_[l + 1], widths_[l],
                      config.seed, static_cast<int>(l), stream_);
  }
  const auto bytes = [](std::int64_t n) { return static_cast<std::size_t>(n) * sizeof(float); };
  PERFWARDEN_CUDA_CHECK(
      cudaMemsetAsync(params_ + weight_count_, 0, bytes(param_count_ - weight_count_), stream_));
  PERFWARDEN_CUDA_CHECK(cudaMemsetAsync(m_, 0, bytes(param_count_), stream_));
  PERFWARDEN_CUDA_CHECK(cudaMemsetAsync(v_, 0, bytes(param_count_), stream_));
  if (bf16) LaunchCastToBf16(params_, weights_bf16_, weight_count_, stream_);
  const TrainState initial{config.loss_scale, 0, 0, 0, 0};
  PERFWARDEN_CUDA_CHECK(
      cudaMemcpyAsync(state_, &initial, sizeof initial, cudaMemcpyHostToDevice, stream_));
  PERFWARDEN_CUDA_CHECK(cudaStreamSynchronize(stream_));  // `initial` lives on this stack
}

template <typename T>
Mlp<T>::~Mlp() {
  if (cublas_ != nullptr) cublasDestroy(cublas_);
}

template <typename T>
const T* Mlp<T>::GemmWeight(std::size_t layer) const {
  if constexpr (std::is_same_v<T, float>) {
    return params_ + weight_offsets_[layer];
  } else {
    return weights_bf16_ + weight_offsets_[layer];
  }
}

template <typename T>
void Mlp<T>::Gemm(cublasOperation_t op_a, cublasOperation_t op_b, std::int64_t m, std::int64_t n,
                  std::int64_t k, const void* a, cudaDataType type_a, std::int64_t lda,
                  const void* b, cudaDataType type_b, std::int64_t ldb, void* c,
                  cudaDataType type_c, std::int64_t ldc) {
  const float alpha = 1.0f;
  const float beta = 0.0f;
  PERFWARDEN_CUBLAS_CHECK(cublasGemmEx(
      cublas_, op_a, op_b, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), &alpha, a,
      type_a, static_cast<int>(lda), b, type_b, static_cast<int>(ldb), &beta, c, type_c,
      static_cast<int>(ldc), compute_, CUBLAS_GEMM_DEFAULT));
}

template <typename T>
void Mlp<T>::GenerateBatch(std::int64_t step) {
  LaunchGenerateBatch<T>(x_, labels_, widths_.front(), widths_.back(), batch_, config_.seed, step,
                         stream_);
}

template <typename T>
void Mlp<T>::Forward() {
  const std::size_t layers = widths_.size() - 1;
  const T* in = x_;
  for (std::size_t l = 0; l < layers; ++l) {
    const std::int64_t out_w = widths_[l + 1];
    const std::int64_t in_w = widths_[l];
    const float* bias = params_ + bias_offsets_[l];
    if (l + 1 < layers) {
      // pre[l+1] [out x B] = W_l [out x in] . in [in x B]
      Gemm(CUBLAS_OP_N, CUBLAS_OP_N, out_w, batch_, in_w, GemmWeight(l), kType<T>, out_w, in,
           kType<T>, in_w, pre_[l + 1], kType<T>, out_w);
      LaunchBiasGelu<T>(pre_[l + 1], act_[l + 1], bias, out_w, batch_, stream_);
      in = act_[l + 1];
    } else {
      // The logits in fp32 whatever T: the loss and its gradient are computed in fp32.
      Gemm(CUBLAS_OP_N, CUBLAS_OP_N, out_w, batch_, in_w, GemmWeight(l), kType<T>, out_w, in,
           kType<T>, in_w, logits_, CUDA_R_32F, out_w);
      LaunchSoftmaxCrossEntropy<T>(logits_, bias, labels_, state_, dlogits_, row_loss_, out_w,
                                   batch_, stream_);
      LaunchMeanLoss(row_loss_, batch_, loss_, stream_);
    }
  }
}

template <typename T>
void Mlp<T>::Backward() {
  const T* dz = dlogits_;  // the gradient of layer l's output, [out x B]
  for (std::size_t l = widths_.size() - 1; l-- > 0;) {
    const std::int64_t out_w = widths_[l + 1];
    const std::int64_t in_w = widths_[l];
    const T* in = l == 0 ? x_ : act_[l];
    // dW_l [out x in] = dz [out x B] . in^T [B x in], straight into the fp32 gradients.
    Gemm(CUBLAS_OP_N, CUBLAS_OP_T, out_w, in_w, batch_, dz, kType<T>, out_w, in, kType<T>, in_w,
         grads_ + weight_offsets_[l], CUDA_R_32F, out_w);
    LaunchBiasGrad<T>(dz, grads_ + bias_offsets_[l], out_w, batch_, stream_);
    if (l == 0) break;  // the input is data: its gradient is not needed
    // d act_l [in x B] = W_l^T [in x out] . dz [out x B], over act_l, which dW_l has consumed
    // (same stream, so in order); then, in place, d pre_l = d act_l * GELU'(pre_l).
    Gemm(CUBLAS_OP_T, CUBLAS_OP_N, in_w, batch_, out_w, GemmWeight(l), kType<T>, out_w, dz,
         kType<T>, out_w, act_[l], kType<T>, in_w);
    LaunchGeluBackward<T>(act_[l], pre_[l], in_w * batch_, stream_);
    dz = act_[l];
  }
}

template <typename T>
void Mlp<T>::Optimize() {
  // Overflow can only come from a loss scale; without one a non-finite loss shows in the report.
  if (config_.loss_scale_mode != LossScaleMode::kNone) {
    LaunchFindNonFinite(grads_, param_count_, state_, stream_);
  }
  LaunchAdamW(params_, grads_, m_, v_, weights_bf16_, weight_count_, config_.adamw,
              config_.weight_decay, state_, stream_);
  const std::int64_t b = weight_count_;
  LaunchAdamW(params_ + b, grads_ + b, m_ + b, v_ + b, nullptr, param_count_ - b, config_.adamw,
              0.0f, state_, stream_);
  LaunchFinishStep(state_, config_.loss_scale_mode == LossScaleMode::kDynamic, stream_);
}

template class Mlp<float>;
template class Mlp<__nv_bfloat16>;

}  // namespace perfwarden::cuda_train
