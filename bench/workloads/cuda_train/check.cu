// SPDX-License-Identifier: Apache-2.0
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "check.cuh"
#include "cuda_check.cuh"
#include "kernels.cuh"
#include "mlp.cuh"
#include "reference.h"
#include "synthetic.h"

namespace perfwarden::cuda_train {
namespace {

using Vec = std::vector<double>;

// A device array of n T's, with copies to and from host doubles (rounded to T on the way in).
template <typename T>
class Buffer {
 public:
  explicit Buffer(std::size_t n) : n_(n) {
    PERFWARDEN_CUDA_CHECK(cudaMalloc(&data_, std::max<std::size_t>(n, 1) * sizeof(T)));
  }
  ~Buffer() { cudaFree(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  T* get() { return data_; }
  void Upload(const Vec& values) {
    std::vector<T> host(n_);
    for (std::size_t i = 0; i < n_; ++i) host[i] = static_cast<T>(static_cast<float>(values[i]));
    PERFWARDEN_CUDA_CHECK(cudaMemcpy(data_, host.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  Vec Download() const {
    std::vector<T> host(n_);
    PERFWARDEN_CUDA_CHECK(cudaMemcpy(host.data(), data_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    Vec out(n_);
    for (std::size_t i = 0; i < n_; ++i) out[i] = static_cast<double>(static_cast<float>(host[i]));
    return out;
  }

 private:
  std::size_t n_;
  T* data_ = nullptr;
};

Vec Download(const float* device, std::int64_t n) {
  std::vector<float> host(static_cast<std::size_t>(n));
  PERFWARDEN_CUDA_CHECK(
      cudaMemcpy(host.data(), device, host.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return Vec(host.begin(), host.end());
}

Vec Random(std::size_t n, double low, double high, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(low, high);
  Vec out(n);
  for (double& x : out) x = dist(rng);
  return out;
}

// max |got - want| / max |want|: the error relative to the largest expected value.
double MaxError(const Vec& got, const Vec& want) {
  double err = 0;
  double scale = 1e-30;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err = std::max(err, std::abs(got[i] - want[i]));
    scale = std::max(scale, std::abs(want[i]));
  }
  return err / scale;
}

// ||got - want|| / ||want||: for reduced precisions, where single elements may be far off.
double NormError(const Vec& got, const Vec& want) {
  double err = 0;
  double norm = 1e-300;
  for (std::size_t i = 0; i < want.size(); ++i) {
    err += (got[i] - want[i]) * (got[i] - want[i]);
    norm += want[i] * want[i];
  }
  return std::sqrt(err / norm);
}

class Report {
 public:
  void Expect(const std::string& name, double error, double tolerance) {
    const bool ok = error <= tolerance;  // NaN fails
    std::printf("check %-44s error %.3e (tolerance %.0e) %s\n", name.c_str(), error, tolerance,
                ok ? "ok" : "FAILED");
    (ok ? passed_ : failed_) += 1;
  }
  int Finish() const {
    std::printf("check: %d passed, %d failed\n", passed_, failed_);
    return failed_ == 0 ? 0 : 4;
  }

 private:
  int passed_ = 0;
  int failed_ = 0;
};

template <typename T>
const char* TypeName() {
  return std::is_same_v<T, float> ? "fp32" : "bf16";
}

void UploadState(TrainState* device, TrainState state) {
  PERFWARDEN_CUDA_CHECK(cudaMemcpy(device, &state, sizeof state, cudaMemcpyHostToDevice));
}

TrainState DownloadState(const TrainState* device) {
  TrainState state{};
  PERFWARDEN_CUDA_CHECK(cudaMemcpy(&state, device, sizeof state, cudaMemcpyDeviceToHost));
  return state;
}

// Element-wise kernels against reference.cc, for activation type T (tolerance: T's rounding).
template <typename T>
void CheckElementwise(Report& report, cudaStream_t stream) {
  const double tol = std::is_same_v<T, float> ? 1e-5 : 1e-2;
  const std::string type = TypeName<T>();
  Buffer<TrainState> state(1);
  UploadState(state.get(), TrainState{4.0f, 0, 0, 0, 0});  // loss scale 4

  {  // bias + GELU forward, rows not a multiple of anything
    const std::int64_t rows = 37;
    const std::int64_t cols = 5;
    Buffer<T> z(rows * cols), a(rows * cols);
    Buffer<float> bias(rows);
    z.Upload(Random(rows * cols, -5, 5, 1));
    bias.Upload(Random(rows, -1, 1, 2));
    const Vec z_in = z.Download();  // as rounded to T
    const Vec b = bias.Download();
    LaunchBiasGelu<T>(z.get(), a.get(), bias.get(), rows, cols, stream);
    PERFWARDEN_CUDA_CHECK(cudaStreamSynchronize(stream));
    Vec want_z(z_in.size()), want_a(z_in.size());
    for (std::size_t i = 0; i < z_in.size(); ++i) {
      want_z[i] = z_in[i] + b[i % rows];
      want_a[i] = Gelu(want_z[i]);
    }
    report.Expect("bias_gelu forward pre-activation " + type, MaxError(z.Download(), want_z), tol);
    report.Expect("bias_gelu forward activation " + type, MaxError(a.Download(), want_a), tol);
  }
  {  // GELU backward against the reference derivative
    const std::int64_t n = 301;
    Buffer<T> grad(n), z(n);
    grad.Upload(Random(n, -2, 2, 3));
    z.Upload(Random(n, -6, 6, 4));
    const Vec g_in = grad.Download();
    const Vec z_in = z.Download();
    LaunchGeluBackward<T>(grad.get(), z.get(), n, stream);
    PERFWARDEN_CUDA_CHECK(cudaStreamSynchronize(stream));
    Vec want(n);
    for (std::size_t i = 0; i < want.size(); ++i) want[i] = g_in[i] * GeluGrad(z_in[i]);
    report.Expect("gelu backward vs reference " + type, MaxError(grad.Download(), want), tol);
  }
  // Softmax cross-entropy: small logits, and logits around 1e4 that overflow a naive exp.
  for (const double offset : {0.0, 1e4}) {
    const std::int64_t rows = offset == 0 ? 10 : 1000;
    const std::int64_t cols = 4;
    Buffer<float> logits(rows * cols), bias(rows), row_loss(cols), loss(1);
    Buffer<T> dlogits(rows * cols);
    Buffer<int> labels(cols);
    Vec z = Random(rows * cols, offset - 8, offset + 8, 5);
    logits.Upload(z);
    bias.Upload(Random(rows, -1, 1, 6));
    const std::vector<int> label_values = {0, 3, static_cast<int>(rows) - 1, 7};
    PERFWARDEN_CUDA_CHECK(
        cudaMemcpy(labels.get(), label_values.data(), cols * sizeof(int), cudaMemcpyHostToDevice));
    z = logits.Download();
    const Vec b = bias.Download();
    LaunchSoftmaxCrossEntropy<T>(logits.get(), bias.get(), labels.get(), state.get(), dlogits.get(),
                                 row_loss.get(), rows, cols, stream);
    LaunchMeanLoss(row_loss.get(), cols, loss.get(), stream);
    PERFWARDEN_CUDA_CHECK(cudaStreamSynchronize(stream));
    for (std::size_t i = 0; i < z.size(); ++i) z[i] += b[i % rows];
    Vec want_grad;
    const double want_loss = SoftmaxCrossEntropy(z, label_values, rows, cols, 4.0, &want_grad);
    // Around 1e4 a float logit has a 1e-3 ulp: the loss can be no closer than that.
    const double loss_tol = offset == 0 ? 1e-5 : 2e-3;
    const std::string what = offset == 0 ? " " : " (logits ~1e4) ";
    report.Expect("softmax_xent loss" + what + type, MaxError(loss.Download(), {want_loss}),
                  loss_tol);
    report.Expect("softmax_xent gradient" + what + type, MaxError(dlogits.Download(), want_grad),
                  offset == 0 ? tol : std::max(tol, 1e-2));
  }
  {  // bias gradient: 70 features (not a multiple of 32), 37 samples
    const std::int64_t rows = 70;
    const std::int64_t cols = 37;
    Buffer<T> dz(rows * cols);
    Buffer<float> db(rows);
    dz.Upload(Random(rows * cols, -1, 1, 7));
    const Vec d = dz.Download();
    LaunchBiasGrad<T>(dz.get(), db.get(), rows, cols, stream);
    PERFWARDEN_CUDA_CHECK(cudaStreamSynchronize(stream));
    Vec want(rows, 0.0);
    for (std::size_t i = 0; i < d.size(); ++i) want[i % rows] += d[i];
    report.Expect("bias_grad reduction " + type, MaxError(db.Download(), want), 1e-5);
  }
}

// Gradient checks proper: each GPU backward kernel against central differences of its own GPU
// forward kernel (fp32, h = 1e-2: truncation and rounding errors both near 1e-5).
void CheckFiniteDifferences(Report& report, cudaStream_t stream) {
  const double h = 1e-2;
  {
    const std::int64_t n = 64;
    const Vec z = Random(n, -4, 4, 8);
    Buffer<float> zb(n), a(n), zero(n), grad(n);
    zero.Upload(Vec(n, 0.0));
    const auto forward = [&](double shift) {
      Vec moved = z;
      for (double& v : moved) v += shift;
      zb.Upload(moved);
      LaunchBiasGelu<float>(zb.get(), a.get(), zero.get(), n, 1, stream);
      return a.Download();
    };
    const Vec plus = forward(h);
    const Vec minus = forward(-h);
    Vec fd(n);
    for (std::size_t i = 0; i < fd.size(); ++i) fd[i] = (plus[i] - minus[i]) / (2 * h);
    grad.Upload(Vec(n, 1.0));
    zb.Upload(z);
    LaunchGeluBackward<float>(grad.get(), zb.get(), n, stream);
    report.Expect("gelu backward vs finite differences", MaxError(grad.Download(), fd), 1e-3);
  }
  {
    const std::int64_t rows = 6;
    const std::int64_t cols = 3;
    const Vec z = Random(rows * cols, -3, 3, 9);
    Buffer<float> logits(rows * cols), bias(rows), row_loss(cols), loss(1), dlogits(rows * cols);
    Buffer<int> labels(cols);
    Buffer<TrainState> state(1);
    UploadState(state.get(), TrainState{1.0f, 0, 0, 0, 0});
    bias.Upload(Vec(rows, 0.0));
    const std::vector<int> label_values = {1, 5, 0};
    PERFWARDEN_CUDA_CHECK(
        cudaMemcpy(labels.get(), label_values.data(), cols * sizeof(int), cudaMemcpyHostToDevice));
    const auto mean_loss = [&](const Vec& values) {
      logits.Upload(values);
      LaunchSoftmaxCrossEntropy<float>(logits.get(), bias.get(), labels.get(), state.get(),
                                       dlogits.get(), row_loss.get(), rows, cols, stream);
      LaunchMeanLoss(row_loss.get(), cols, loss.get(), stream);
      return loss.Download()[0];
    };
    Vec fd(z.size());
    for (std::size_t i = 0; i < z.size(); ++i) {
      Vec plus = z, minus = z;
      plus[i] += h;
      minus[i] -= h;
      fd[i] = (mean_loss(plus) - mean_loss(minus)) / (2 * h);
    }
    mean_loss(z);
    report.Expect("softmax_xent gradient vs finite differences", MaxError(dlogits.Download(), fd),
                  1e-3);
  }
}

void CheckAdamW(Report& report, cudaStream_t stream) {
  const std::int64_t n = 1000;
  const float scale = 8;
  const AdamWHyper hyper{1e-2f, 0.9f, 0.999f, 1e-8f};
  // The reference takes the kernel's float constants exactly: 1 - 0.999f differs from 1 - 0.999
  // by 1.3e-5 relative, which alone failed the second moment's 1e-5 on an H200.
  AdamWConfig ref;
  ref.lr = hyper.lr;
  ref.beta1 = hyper.beta1;
  ref.beta2 = hyper.beta2;
  ref.eps = hyper.eps;
  ref.weight_decay = 0.1f;
  Buffer<float> p(n), g(n), m(n), v(n);
  Buffer<__nv_bfloat16> copy(n);
  Buffer<TrainState> state(1);
  UploadState(state.get(), TrainState{scale, 0, 0, 0, 0});
  Vec want_p = Random(n, -1, 1, 10);
  Vec want_m(n, 0.0), want_v(n, 0.0);
  p.Upload(want_p);
  want_p = p.Download();
  m.Upload(want_m);
  v.Upload(want_v);
  for (int t = 1; t <= 3; ++t) {
    g.Upload(Random(n, -scale, scale, 10 + static_cast<unsigned>(t)));
    const Vec grads = g.Download();
    LaunchAdamW(p.get(), g.get(), m.get(), v.get(), copy.get(), n, hyper, 0.1f, state.get(),
                stream);
    LaunchFinishStep(state.get(), false, stream);
    AdamWStep(want_p, grads, want_m, want_v, ref, ref.weight_decay, t, scale);
  }
  report.Expect("adamw parameters after 3 steps", MaxError(p.Download(), want_p), 1e-5);
  report.Expect("adamw first moment", MaxError(m.Download(), want_m), 1e-5);
  report.Expect("adamw second moment", MaxError(v.Download(), want_v), 1e-5);
  report.Expect("adamw bf16 copy", MaxError(copy.Download(), want_p), 1e-2);
  // An overflowed step changes nothing and is counted as skipped.
  const Vec before = p.Download();
  TrainState overflowed = DownloadState(state.get());
  overflowed.overflow = 1;
  UploadState(state.get(), overflowed);
  LaunchAdamW(p.get(), g.get(), m.get(), v.get(), nullptr, n, hyper, 0.1f, state.get(), stream);
  LaunchFinishStep(state.get(), true, stream);
  const TrainState after = DownloadState(state.get());
  report.Expect("adamw skips an overflowed step", MaxError(p.Download(), before), 0);
  const bool counted = after.skipped == 1 && after.step == 3 && after.overflow == 0;
  report.Expect("dynamic loss scale halves on overflow",
                std::abs(static_cast<double>(after.loss_scale) - scale / 2.0) + (counted ? 0 : 1),
                0);
}

template <typename T>
Vec DownloadAs(const T* device, std::int64_t n) {
  std::vector<T> host(static_cast<std::size_t>(n));
  PERFWARDEN_CUDA_CHECK(
      cudaMemcpy(host.data(), device, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  Vec out(host.size());
  for (std::size_t i = 0; i < host.size(); ++i) out[i] = static_cast<float>(host[i]);
  return out;
}

// The flat parameter layout of Mlp (weights of every layer, then biases) <-> per layer.
template <typename T>
Vec Flatten(const Mlp<T>& mlp, const std::vector<Vec>& weights, const std::vector<Vec>& biases) {
  Vec flat(static_cast<std::size_t>(mlp.param_count()));
  for (std::size_t l = 0; l < weights.size(); ++l) {
    std::copy(weights[l].begin(), weights[l].end(), flat.begin() + mlp.weight_offset(l));
    std::copy(biases[l].begin(), biases[l].end(), flat.begin() + mlp.bias_offset(l));
  }
  return flat;
}

template <typename T>
void Unflatten(const Mlp<T>& mlp, const Vec& flat, std::vector<Vec>& weights,
               std::vector<Vec>& biases) {
  for (std::size_t l = 0; l < weights.size(); ++l) {
    const auto w = flat.begin() + mlp.weight_offset(l);
    const auto b = flat.begin() + mlp.bias_offset(l);
    weights[l].assign(w, w + static_cast<std::ptrdiff_t>(weights[l].size()));
    biases[l].assign(b, b + static_cast<std::ptrdiff_t>(biases[l].size()));
  }
}

// One whole training step of a tiny MLP against the reference: the synthetic data and initial
// weights, the loss, every gradient (so cuBLAS's transposes and leading dimensions too), and
// the AdamW update, weights decayed and biases not. fp32 must agree to rounding; tf32 and bf16
// within their GEMM inputs' precision (10 and 7 mantissa bits), normwise.
template <typename T>
void CheckStep(Report& report, Precision precision, cudaStream_t stream) {
  const std::string name = std::string("step ") + PrecisionName(precision) + ": ";
  const bool exact = precision == Precision::kFp32;
  const double grad_tol = exact ? 1e-4 : (precision == Precision::kTf32 ? 2e-2 : 5e-2);
  const double scale = 1024;  // scaled, then unscaled by AdamW: the results must not change
  const std::int64_t batch = 6;
  const std::uint64_t seed = 3;
  TrainConfig config;
  config.shape = ModelShape{{7, 13, 11, 5}, batch, precision};
  config.seed = seed;
  config.loss_scale_mode = LossScaleMode::kStatic;
  config.loss_scale = static_cast<float>(scale);
  const std::vector<std::int64_t>& widths = config.shape.widths;
  Mlp<T> mlp(config, stream);
  RefMlp ref = InitialMlp(widths, seed);
  report.Expect(
      name + "initial weights",
      MaxError(Download(mlp.params(), mlp.param_count()), Flatten(mlp, ref.weights, ref.biases)),
      1e-5);
  // Biases away from zero, so that AdamW's update shows whether they decay (they must not).
  const std::int64_t weight_count = mlp.bias_offset(0);
  Buffer<float> biases(static_cast<std::size_t>(mlp.param_count() - weight_count));
  biases.Upload(Random(static_cast<std::size_t>(mlp.param_count() - weight_count), -0.5, 0.5, 20));
  PERFWARDEN_CUDA_CHECK(cudaMemcpy(mlp.params() + weight_count, biases.get(),
                                 (mlp.param_count() - weight_count) * sizeof(float),
                                 cudaMemcpyDeviceToDevice));
  mlp.GenerateBatch(2);
  mlp.Forward();
  mlp.Backward();
  PERFWARDEN_CUDA_CHECK(cudaStreamSynchronize(stream));

  // The GPU's data and initial weights are the CPU generator's.
  const RefBatch want_batch = SyntheticBatch(widths.front(), widths.back(), batch, seed, 2);
  RefBatch got_batch;
  got_batch.batch = batch;
  got_batch.x = DownloadAs(mlp.input(), widths.front() * batch);
  got_batch.labels.resize(static_cast<std::size_t>(batch));
  PERFWARDEN_CUDA_CHECK(cudaMemcpy(got_batch.labels.data(), mlp.labels(), batch * sizeof(int),
                                 cudaMemcpyDeviceToHost));
  report.Expect(name + "synthetic inputs", MaxError(got_batch.x, want_batch.x),
                std::is_same_v<T, float> ? 1e-5 : 1e-2);
  report.Expect(name + "synthetic labels", got_batch.labels == want_batch.labels ? 0 : 1, 0);
  const Vec params = Download(mlp.params(), mlp.param_count());

  // Loss and gradients, from the GPU's own starting point.
  Unflatten(mlp, params, ref.weights, ref.biases);
  RefGrads want;
  const double want_loss = LossAndGrads(ref, got_batch, scale, &want);
  report.Expect(name + "loss", MaxError(DownloadAs(mlp.loss(), 1), {want_loss}),
                exact ? 1e-5 : grad_tol);
  const Vec grads = Download(mlp.grads(), mlp.param_count());
  const Vec want_grads = Flatten(mlp, want.weights, want.biases);
  report.Expect(name + "gradients",
                exact ? MaxError(grads, want_grads) : NormError(grads, want_grads), grad_tol);

  // AdamW on the GPU's gradients (the optimizer alone, whatever the GEMMs' precision).
  mlp.Optimize();
  PERFWARDEN_CUDA_CHECK(cudaStreamSynchronize(stream));
  RefGrads got_grads{ref.weights, ref.biases};
  Unflatten(mlp, grads, got_grads.weights, got_grads.biases);
  RefOptimizer optimizer;
  AdamWStep(ref, got_grads, optimizer, AdamWConfig{}, scale);
  const Vec want_after = Flatten(mlp, ref.weights, ref.biases);
  const Vec after = Download(mlp.params(), mlp.param_count());
  Vec step(after.size()), want_step(after.size());
  for (std::size_t i = 0; i < after.size(); ++i) {
    step[i] = after[i] - params[i];
    want_step[i] = want_after[i] - params[i];
  }
  report.Expect(name + "adamw update", MaxError(step, want_step), 1e-3);
}

}  // namespace

int RunChecks(cudaStream_t stream) {
  Report report;
  CheckElementwise<float>(report, stream);
  CheckElementwise<__nv_bfloat16>(report, stream);
  CheckFiniteDifferences(report, stream);
  CheckAdamW(report, stream);
  CheckStep<float>(report, Precision::kFp32, stream);
  CheckStep<float>(report, Precision::kTf32, stream);
  CheckStep<__nv_bfloat16>(report, Precision::kBf16, stream);
  return report.Finish();
}

}  // namespace perfwarden::cuda_train
