// SPDX-License-Identifier: Apache-2.0
#include "reference.h"

#include <algorithm>
#include <cmath>

#include "synthetic.h"

namespace perfwarden::cuda_train {
namespace {

constexpr double kSqrt2OverPi = 0.7978845608028654;
constexpr double kGeluCubic = 0.044715;

std::size_t Index(std::int64_t row, std::int64_t col, std::int64_t rows) {
  return static_cast<std::size_t>(row + col * rows);
}

// out[rows x batch] = W[rows x cols] in[cols x batch] + bias
std::vector<double> Affine(const std::vector<double>& w, const std::vector<double>& bias,
                           const std::vector<double>& in, std::int64_t rows, std::int64_t cols,
                           std::int64_t batch) {
  std::vector<double> out(static_cast<std::size_t>(rows * batch));
  for (std::int64_t b = 0; b < batch; ++b) {
    for (std::int64_t r = 0; r < rows; ++r) {
      double sum = bias[static_cast<std::size_t>(r)];
      for (std::int64_t c = 0; c < cols; ++c) sum += w[Index(r, c, rows)] * in[Index(c, b, cols)];
      out[Index(r, b, rows)] = sum;
    }
  }
  return out;
}

}  // namespace

double Gelu(double z) {
  return 0.5 * z * (1.0 + std::tanh(kSqrt2OverPi * (z + kGeluCubic * z * z * z)));
}

double GeluGrad(double z) {
  const double t = std::tanh(kSqrt2OverPi * (z + kGeluCubic * z * z * z));
  return 0.5 * (1.0 + t) +
         0.5 * z * (1.0 - t * t) * kSqrt2OverPi * (1.0 + 3.0 * kGeluCubic * z * z);
}

double SoftmaxCrossEntropy(const std::vector<double>& logits, const std::vector<int>& labels,
                           std::int64_t classes, std::int64_t batch, double scale,
                           std::vector<double>* dlogits) {
  if (dlogits != nullptr) dlogits->assign(logits.size(), 0.0);
  double total = 0;
  for (std::int64_t b = 0; b < batch; ++b) {
    double max = -INFINITY;
    for (std::int64_t c = 0; c < classes; ++c) max = std::max(max, logits[Index(c, b, classes)]);
    double sum = 0;
    for (std::int64_t c = 0; c < classes; ++c) sum += std::exp(logits[Index(c, b, classes)] - max);
    const double log_sum = max + std::log(sum);
    const int label = labels[static_cast<std::size_t>(b)];
    total += log_sum - logits[Index(label, b, classes)];
    if (dlogits == nullptr) continue;
    for (std::int64_t c = 0; c < classes; ++c) {
      const double p = std::exp(logits[Index(c, b, classes)] - log_sum);
      (*dlogits)[Index(c, b, classes)] =
          scale * (p - (c == label ? 1.0 : 0.0)) / static_cast<double>(batch);
    }
  }
  return total / static_cast<double>(batch);
}

void AdamWStep(std::vector<double>& p, const std::vector<double>& grad, std::vector<double>& m,
               std::vector<double>& v, const AdamWConfig& config, double weight_decay,
               std::int64_t t, double scale) {
  const double correction1 = 1.0 - std::pow(config.beta1, static_cast<double>(t));
  const double correction2 = 1.0 - std::pow(config.beta2, static_cast<double>(t));
  for (std::size_t i = 0; i < p.size(); ++i) {
    const double g = grad[i] / scale;
    m[i] = config.beta1 * m[i] + (1.0 - config.beta1) * g;
    v[i] = config.beta2 * v[i] + (1.0 - config.beta2) * g * g;
    const double m_hat = m[i] / correction1;
    const double v_hat = v[i] / correction2;
    p[i] -= config.lr * (m_hat / (std::sqrt(v_hat) + config.eps) + weight_decay * p[i]);
  }
}

RefMlp InitialMlp(const std::vector<std::int64_t>& widths, std::uint64_t seed) {
  RefMlp mlp;
  mlp.widths = widths;
  for (std::size_t l = 0; l + 1 < widths.size(); ++l) {
    std::vector<double> w(static_cast<std::size_t>(widths[l] * widths[l + 1]));
    for (std::size_t i = 0; i < w.size(); ++i) {
      w[i] = InitialWeight(seed, static_cast<int>(l), static_cast<std::int64_t>(i), widths[l]);
    }
    mlp.weights.push_back(std::move(w));
    mlp.biases.emplace_back(static_cast<std::size_t>(widths[l + 1]), 0.0);
  }
  return mlp;
}

RefBatch SyntheticBatch(std::int64_t inputs, std::int64_t classes, std::int64_t batch,
                        std::uint64_t seed, std::int64_t step) {
  RefBatch out;
  out.batch = batch;
  out.x.resize(static_cast<std::size_t>(inputs * batch));
  for (std::int64_t b = 0; b < batch; ++b) {
    const int label = SampleLabel(seed, step, b, classes);
    out.labels.push_back(label);
    for (std::int64_t i = 0; i < inputs; ++i) {
      out.x[Index(i, b, inputs)] = SampleInput(seed, step, b, i, label, inputs);
    }
  }
  return out;
}

double LossAndGrads(const RefMlp& mlp, const RefBatch& batch, double scale, RefGrads* grads) {
  const std::size_t layers = mlp.weights.size();
  const std::int64_t n = batch.batch;
  // activations[l] is layer l's input; pre[l] is layer l's output before GELU.
  std::vector<std::vector<double>> activations = {batch.x};
  std::vector<std::vector<double>> pre;
  for (std::size_t l = 0; l < layers; ++l) {
    pre.push_back(
        Affine(mlp.weights[l], mlp.biases[l], activations[l], mlp.widths[l + 1], mlp.widths[l], n));
    if (l + 1 < layers) {
      std::vector<double> a = pre.back();
      for (double& z : a) z = Gelu(z);
      activations.push_back(std::move(a));
    }
  }
  const std::int64_t classes = mlp.widths.back();
  std::vector<double> dz;
  const double loss =
      SoftmaxCrossEntropy(pre.back(), batch.labels, classes, n, scale, grads ? &dz : nullptr);
  if (grads == nullptr) return loss;
  grads->weights.assign(layers, {});
  grads->biases.assign(layers, {});
  for (std::size_t l = layers; l-- > 0;) {
    const std::int64_t rows = mlp.widths[l + 1];
    const std::int64_t cols = mlp.widths[l];
    std::vector<double>& dw = grads->weights[l];
    std::vector<double>& db = grads->biases[l];
    dw.assign(static_cast<std::size_t>(rows * cols), 0.0);
    db.assign(static_cast<std::size_t>(rows), 0.0);
    for (std::int64_t b = 0; b < n; ++b) {
      for (std::int64_t r = 0; r < rows; ++r) {
        const double d = dz[Index(r, b, rows)];
        db[static_cast<std::size_t>(r)] += d;
        for (std::int64_t c = 0; c < cols; ++c) {
          dw[Index(r, c, rows)] += d * activations[l][Index(c, b, cols)];
        }
      }
    }
    if (l == 0) break;  // the input is data: no gradient
    std::vector<double> da(static_cast<std::size_t>(cols * n), 0.0);
    for (std::int64_t b = 0; b < n; ++b) {
      for (std::int64_t c = 0; c < cols; ++c) {
        double sum = 0;
        for (std::int64_t r = 0; r < rows; ++r) {
          sum += mlp.weights[l][Index(r, c, rows)] * dz[Index(r, b, rows)];
        }
        da[Index(c, b, cols)] = sum * GeluGrad(pre[l - 1][Index(c, b, cols)]);
      }
    }
    dz = std::move(da);
  }
  return loss;
}

void AdamWStep(RefMlp& mlp, const RefGrads& grads, RefOptimizer& state, const AdamWConfig& config,
               double scale) {
  if (state.t == 0) {
    for (const auto& w : mlp.weights) state.m.weights.emplace_back(w.size(), 0.0);
    for (const auto& b : mlp.biases) state.m.biases.emplace_back(b.size(), 0.0);
    state.v = state.m;
  }
  ++state.t;
  for (std::size_t l = 0; l < mlp.weights.size(); ++l) {
    AdamWStep(mlp.weights[l], grads.weights[l], state.m.weights[l], state.v.weights[l], config,
              config.weight_decay, state.t, scale);
    AdamWStep(mlp.biases[l], grads.biases[l], state.m.biases[l], state.v.biases[l], config, 0.0,
              state.t, scale);
  }
}

}  // namespace perfwarden::cuda_train
