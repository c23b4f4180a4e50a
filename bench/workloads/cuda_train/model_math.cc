// SPDX-License-Identifier: Apache-2.0
#include "model_math.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

namespace perfwarden::cuda_train {

std::optional<Precision> ParsePrecision(std::string_view text) {
  if (text == "fp32") return Precision::kFp32;
  if (text == "tf32") return Precision::kTf32;
  if (text == "bf16") return Precision::kBf16;
  return std::nullopt;
}

const char* PrecisionName(Precision precision) {
  switch (precision) {
    case Precision::kFp32:
      return "fp32";
    case Precision::kTf32:
      return "tf32";
    case Precision::kBf16:
      return "bf16";
  }
  return "?";
}

std::int64_t ActivationBytes(Precision precision) { return precision == Precision::kBf16 ? 2 : 4; }

std::optional<std::vector<std::int64_t>> ParseWidths(std::string_view text, std::string* error) {
  std::vector<std::int64_t> widths;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    std::int64_t width = 0;
    const auto [end, ec] = std::from_chars(item.data(), item.data() + item.size(), width);
    if (item.empty() || ec != std::errc() || end != item.data() + item.size() || width < 1) {
      *error = "\"" + std::string(item) + "\" is not a positive integer width";
      return std::nullopt;
    }
    // cuBLAS takes int dimensions; far below that, a width this large would not fit a GPU.
    if (width > (1LL << 24)) {
      *error = "width " + std::to_string(width) + " is above 16777216";
      return std::nullopt;
    }
    widths.push_back(width);
    at = comma + 1;
  }
  if (widths.size() < 2) {
    *error = "need at least two widths (input and classes)";
    return std::nullopt;
  }
  if (widths.back() < 2) {
    *error = "need at least two classes (the last width)";
    return std::nullopt;
  }
  return widths;
}

std::vector<std::int64_t> WidthsFromDepth(std::int64_t width, std::int64_t depth,
                                          std::int64_t classes) {
  std::vector<std::int64_t> widths(static_cast<std::size_t>(std::max<std::int64_t>(depth, 1)),
                                   width);
  widths.push_back(classes);
  return widths;
}

std::string FormatWidths(const std::vector<std::int64_t>& widths) {
  std::string out;
  for (std::size_t i = 0; i < widths.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(widths[i]);
  }
  return out;
}

std::int64_t WeightCount(const ModelShape& shape) {
  std::int64_t n = 0;
  for (std::size_t l = 0; l < shape.layers(); ++l) n += shape.widths[l] * shape.widths[l + 1];
  return n;
}

std::int64_t ParamCount(const ModelShape& shape) {
  std::int64_t n = WeightCount(shape);
  for (std::size_t l = 0; l < shape.layers(); ++l) n += shape.widths[l + 1];
  return n;
}

StepFlops FlopsPerStep(const ModelShape& shape) {
  StepFlops flops;
  const double batch = static_cast<double>(shape.batch);
  for (std::size_t l = 0; l < shape.layers(); ++l) {
    const double gemm = 2.0 * batch * static_cast<double>(shape.widths[l]) *
                        static_cast<double>(shape.widths[l + 1]);
    flops.forward += gemm;
    flops.backward_weights += gemm;
    if (l > 0) flops.backward_inputs += gemm;
  }
  return flops;
}

double BytesPerStep(const ModelShape& shape) {
  const double batch = static_cast<double>(shape.batch);
  const double a = static_cast<double>(ActivationBytes(shape.precision));
  // The GEMMs read weights in the activation type (bf16 copies for bf16, fp32 otherwise).
  const double w = a;
  double bytes = 0;
  const std::size_t layers = shape.layers();
  for (std::size_t l = 0; l < layers; ++l) {
    const double in = static_cast<double>(shape.widths[l]);
    const double out = static_cast<double>(shape.widths[l + 1]);
    const bool last = l + 1 == layers;
    const double y = last ? 4 : a;                                        // logits are fp32
    bytes += in * out * w + batch * in * a + batch * out * y;             // forward GEMM
    if (!last) bytes += batch * out * a + out * 4 + 2 * batch * out * a;  // bias + GELU
    bytes += batch * out * a + batch * in * a + in * out * 4;             // dW = dY X^T
    bytes += batch * out * a + out * 4;                                   // the bias gradient
    if (l > 0) {
      bytes += in * out * w + batch * out * a + batch * in * a;  // dX = W^T dY
      bytes += 3 * batch * in * a;  // GELU backward of this layer's input: grad, pre -> grad
    }
  }
  const double classes = static_cast<double>(shape.classes());
  bytes += batch * classes * 4 + batch * 4 + batch * classes * a + batch * 4;  // softmax CE
  const double params = static_cast<double>(ParamCount(shape));
  bytes += params * (4 * 4 + 3 * 4);  // AdamW: read p, g, m, v; write p, m, v
  if (shape.precision == Precision::kBf16) bytes += static_cast<double>(WeightCount(shape)) * 2;
  return bytes;
}

MemoryPlan PlanMemory(const ModelShape& shape, std::int64_t cublas_workspace_bytes) {
  MemoryPlan plan;
  const std::int64_t params = ParamCount(shape);
  const std::int64_t act = ActivationBytes(shape.precision);
  const std::int64_t batch = shape.batch;
  plan.params = 4 * params;
  if (shape.precision == Precision::kBf16) plan.params += 2 * WeightCount(shape);
  plan.grads = 4 * params;
  plan.optimizer = 2 * 4 * params;
  // Input batch (activation type) and its int32 labels.
  plan.activations = batch * shape.widths.front() * act + batch * 4;
  // Each hidden layer keeps its pre-activation (bias added, for GELU's derivative) and its
  // activation (for the next layer's dW); in the backward pass the activation's buffer receives
  // its gradient, then, in place, the pre-activation's gradient.
  for (std::size_t l = 1; l + 1 < shape.widths.size(); ++l) {
    plan.activations += 2 * batch * shape.widths[l] * act;
  }
  // fp32 logits (the loss is computed in fp32 whatever the precision), their gradient in the
  // activation type (the last layer's GEMM input), per-sample losses and the mean loss.
  plan.activations += batch * shape.classes() * 4 + batch * shape.classes() * act + batch * 4 + 4;
  plan.workspace = cublas_workspace_bytes + kTrainStateBytes;
  return plan;
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  const auto below = static_cast<std::size_t>(std::floor(rank));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  const double fraction = rank - static_cast<double>(below);
  return values[below] + fraction * (values[above] - values[below]);
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (const double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

double CoefficientOfVariation(const std::vector<double>& values) {
  if (values.size() < 2) return 0;
  const double mean = Mean(values);
  if (mean == 0) return 0;
  double squares = 0;
  for (const double v : values) squares += (v - mean) * (v - mean);
  return std::sqrt(squares / static_cast<double>(values.size() - 1)) / std::abs(mean);
}

SteadyState::SteadyState(int window, double max_cv, std::int64_t warmup_max)
    : window_(std::max(window, 2)),
      max_cv_(max_cv),
      warmup_max_(warmup_max),
      steady_(warmup_max <= 0),
      final_cv_(std::numeric_limits<double>::quiet_NaN()) {
  if (steady_) reason_ = "cap";
}

bool SteadyState::Record(double seconds) {
  if (steady_) return false;
  ++warmup_steps_;
  recent_.push_back(seconds);
  if (recent_.size() > static_cast<std::size_t>(window_)) recent_.erase(recent_.begin());
  if (recent_.size() == static_cast<std::size_t>(window_)) {
    final_cv_ = CoefficientOfVariation(recent_);
    if (final_cv_ <= max_cv_) {
      steady_ = true;
      reason_ = "cv";
      return true;
    }
  }
  if (warmup_steps_ >= warmup_max_) {
    steady_ = true;
    reason_ = "cap";
  }
  return true;
}

}  // namespace perfwarden::cuda_train
