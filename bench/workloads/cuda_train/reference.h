// SPDX-License-Identifier: Apache-2.0
// A CPU reference of everything cuda_train computes, in double: the element-wise maths (GELU and
// its derivative, softmax cross-entropy, AdamW) and a whole MLP's forward and backward pass.
// The unit test checks it against finite differences and trains it on the synthetic task;
// `cuda_train --check` checks the GPU kernels and one GPU training step against it.
//
// Layouts are the GPU's: matrices column-major, a batch of activations is [features x batch]
// (one column per sample), layer l's weight is [widths[l+1] x widths[l]].
#pragma once

#include <cstdint>
#include <vector>

namespace perfwarden::cuda_train {

// GELU, tanh approximation (Hendrycks and Gimpel 2016), as in GPT-2 and PyTorch's
// gelu(approximate="tanh"), and its exact derivative.
double Gelu(double z);
double GeluGrad(double z);

// Mean softmax cross-entropy over `batch` columns of `classes` logits, stable (max subtracted).
// When dlogits is not null it receives d(scale * loss)/dlogits = scale * (softmax - onehot) /
// batch.
double SoftmaxCrossEntropy(const std::vector<double>& logits, const std::vector<int>& labels,
                           std::int64_t classes, std::int64_t batch, double scale,
                           std::vector<double>* dlogits);

struct AdamWConfig {
  double lr = 1e-3;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

// One AdamW step (Loshchilov and Hutter 2019) at step t >= 1 on gradients scaled by `scale`:
// g = grad / scale; m, v updated; p -= lr * (m_hat / (sqrt(v_hat) + eps) + weight_decay * p)
// with m_hat = m / (1 - beta1^t), v_hat = v / (1 - beta2^t). The decay is decoupled: it scales
// p directly, not through the gradient, so Adam's normalisation does not touch it.
void AdamWStep(std::vector<double>& p, const std::vector<double>& grad, std::vector<double>& m,
               std::vector<double>& v, const AdamWConfig& config, double weight_decay,
               std::int64_t t, double scale);

struct RefMlp {
  std::vector<std::int64_t> widths;
  std::vector<std::vector<double>> weights;  // [l]: widths[l+1] x widths[l], column-major
  std::vector<std::vector<double>> biases;   // [l]: widths[l+1]
};

struct RefBatch {
  std::int64_t batch = 0;
  std::vector<double> x;    // widths[0] x batch
  std::vector<int> labels;  // batch
};

struct RefGrads {
  std::vector<std::vector<double>> weights;
  std::vector<std::vector<double>> biases;
};

// The MLP cuda_train starts from (synthetic.h's InitialWeight, zero biases).
RefMlp InitialMlp(const std::vector<std::int64_t>& widths, std::uint64_t seed);
// The batch cuda_train trains on at `step` (synthetic.h).
RefBatch SyntheticBatch(std::int64_t inputs, std::int64_t classes, std::int64_t batch,
                        std::uint64_t seed, std::int64_t step);

// Mean loss; when grads is not null, the gradients of scale * loss.
double LossAndGrads(const RefMlp& mlp, const RefBatch& batch, double scale, RefGrads* grads);

// AdamW on every parameter: weights with config.weight_decay, biases without.
struct RefOptimizer {
  RefGrads m;
  RefGrads v;
  std::int64_t t = 0;
};
void AdamWStep(RefMlp& mlp, const RefGrads& grads, RefOptimizer& state, const AdamWConfig& config,
               double scale);

}  // namespace perfwarden::cuda_train
