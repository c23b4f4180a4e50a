// SPDX-License-Identifier: Apache-2.0
// bench/workloads/cuda_train's analytic side, without a GPU: parameter count, GEMM FLOPs and
// memory plan against hand-computed values, percentiles, the steady-state rule on scripted step
// times, the MFU peak table, the JSON lines, the command line, and the CPU reference (its
// gradients against finite differences; the synthetic task is learnable).
#include <gtest/gtest.h>

#include <cmath>

#include "bench/workloads/cuda_train/device_peaks.h"
#include "bench/workloads/cuda_train/json_lines.h"
#include "bench/workloads/cuda_train/model_math.h"
#include "bench/workloads/cuda_train/options.h"
#include "bench/workloads/cuda_train/reference.h"

namespace perfwarden::cuda_train {
namespace {

const ModelShape kDefault{{1024, 4096, 4096, 1024}, 256, Precision::kBf16};

TEST(CudaTrainModel, ParamsOfTheDefaultModel) {
  // 1024*4096 + 4096*4096 + 4096*1024 weights, 4096 + 4096 + 1024 biases.
  EXPECT_EQ(WeightCount(kDefault), 25'165'824);
  EXPECT_EQ(ParamCount(kDefault), 25'175'040);
  EXPECT_EQ(ParamCount(ModelShape{{3, 5, 2}, 4, Precision::kFp32}), 15 + 5 + 10 + 2);
}

TEST(CudaTrainModel, FlopsAreTwoMkNPerGemm) {
  // {3, 5, 2}, batch 4: forward 2*4*3*5 + 2*4*5*2 = 200; dW the same; dX only for layer 1: 80.
  const StepFlops small = FlopsPerStep(ModelShape{{3, 5, 2}, 4, Precision::kFp32});
  EXPECT_DOUBLE_EQ(small.forward, 200);
  EXPECT_DOUBLE_EQ(small.backward_weights, 200);
  EXPECT_DOUBLE_EQ(small.backward_inputs, 80);
  EXPECT_DOUBLE_EQ(small.total(), 480);
  // Default: 2 * 256 * 25,165,824 forward and dW; 2 * 256 * (4096^2 + 4096 * 1024) for dX.
  const StepFlops big = FlopsPerStep(kDefault);
  EXPECT_DOUBLE_EQ(big.forward, 12'884'901'888.0);
  EXPECT_DOUBLE_EQ(big.backward_weights, 12'884'901'888.0);
  EXPECT_DOUBLE_EQ(big.backward_inputs, 10'737'418'240.0);
  EXPECT_DOUBLE_EQ(big.total(), 36'507'222'016.0);
}

TEST(CudaTrainModel, MemoryPlanByCategory) {
  ModelShape shape{{3, 5, 2}, 4, Precision::kFp32};  // 32 params, 25 of them weights
  MemoryPlan fp32 = PlanMemory(shape, 1000);
  EXPECT_EQ(fp32.params, 32 * 4);
  EXPECT_EQ(fp32.grads, 32 * 4);
  EXPECT_EQ(fp32.optimizer, 32 * 8);
  // x 4*3*4, labels 4*4, hidden z and a 2*4*5*4, logits 4*2*4, dlogits 4*2*4, losses 4*4 + 4.
  EXPECT_EQ(fp32.activations, 48 + 16 + 160 + 32 + 32 + 16 + 4);
  EXPECT_EQ(fp32.workspace, 1000 + kTrainStateBytes);
  EXPECT_EQ(fp32.total(), 128 + 128 + 256 + 308 + 1020);
  EXPECT_EQ(PlanMemory(ModelShape{{3, 5, 2}, 4, Precision::kTf32}, 1000).total(), fp32.total());

  shape.precision = Precision::kBf16;
  MemoryPlan bf16 = PlanMemory(shape, 1000);
  EXPECT_EQ(bf16.params, 32 * 4 + 25 * 2);  // + bf16 copies of the weights
  EXPECT_EQ(bf16.grads, 32 * 4);
  EXPECT_EQ(bf16.optimizer, 32 * 8);
  EXPECT_EQ(bf16.activations, 24 + 16 + 80 + 32 + 16 + 16 + 4);  // fp32 logits either way
}

TEST(CudaTrainModel, PercentilesInterpolateLinearly) {
  const std::vector<double> v = {5, 1, 4, 2, 3};  // unsorted on purpose
  EXPECT_DOUBLE_EQ(Percentile(v, 0), 1);
  EXPECT_DOUBLE_EQ(Percentile(v, 50), 3);
  EXPECT_DOUBLE_EQ(Percentile(v, 95), 4.8);  // numpy.percentile([1, 2, 3, 4, 5], 95)
  EXPECT_DOUBLE_EQ(Percentile(v, 99), 4.96);
  EXPECT_DOUBLE_EQ(Percentile(v, 100), 5);
  EXPECT_DOUBLE_EQ(Percentile({7}, 99), 7);
  EXPECT_DOUBLE_EQ(Percentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(Percentile({1, 2}, 25), 1.25);
}

TEST(CudaTrainModel, CoefficientOfVariation) {
  EXPECT_DOUBLE_EQ(CoefficientOfVariation({1, 1, 1}), 0);
  EXPECT_DOUBLE_EQ(CoefficientOfVariation({1, 2, 3}), 0.5);  // sd 1 (n - 1), mean 2
  EXPECT_DOUBLE_EQ(CoefficientOfVariation({4}), 0);
}

TEST(CudaTrainModel, WarmupEndsWhenTheWindowIsStable) {
  SteadyState s(4, 0.05, 20);
  // Step 6's window {1.2, 1.0, 1.01, 0.99} has a CV of 0.09; step 7's {1.0, 1.01, 0.99, 1.0}
  // of 0.008: steps 0-7 are warm-up, 8 on are measured.
  const std::vector<double> times = {10, 5, 3, 1.2, 1.0, 1.01, 0.99, 1.0, 1.0, 3.0, 1.0};
  std::vector<bool> warmup;
  for (const double t : times) warmup.push_back(s.Record(t));
  EXPECT_EQ(warmup, (std::vector<bool>{true, true, true, true, true, true, true, true, false, false,
                                       false}));  // a later spike stays measured
  EXPECT_EQ(s.warmup_steps(), 8);
  EXPECT_EQ(s.reason(), "cv");
  EXPECT_LT(s.final_cv(), 0.01);
}

TEST(CudaTrainModel, WarmupIsCappedByWarmupMax) {
  SteadyState s(3, 0.05, 6);
  int warm = 0;
  for (int i = 0; i < 12; ++i) warm += s.Record(i % 2 == 0 ? 1.0 : 2.0) ? 1 : 0;
  EXPECT_EQ(warm, 6);
  EXPECT_EQ(s.warmup_steps(), 6);
  EXPECT_EQ(s.reason(), "cap");

  SteadyState none(10, 0.05, 0);  // --warmup-max 0: every step measured
  EXPECT_FALSE(none.Record(5.0));
  EXPECT_EQ(none.warmup_steps(), 0);

  SteadyState early(10, 0.05, 3);  // the cap before a full window
  EXPECT_TRUE(early.Record(1));
  EXPECT_TRUE(early.Record(1));
  EXPECT_TRUE(early.Record(1));
  EXPECT_FALSE(early.Record(1));
  EXPECT_EQ(early.reason(), "cap");
}

TEST(CudaTrainModel, DatasheetPeaksAreDense) {
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA H100 80GB HBM3", Precision::kBf16)->tflops, 989.5);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA H100 80GB HBM3", Precision::kTf32)->tflops, 494.5);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA H100 80GB HBM3", Precision::kFp32)->tflops, 67);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA H100 PCIe", Precision::kBf16)->tflops, 756.5);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA H100 NVL", Precision::kBf16)->tflops, 835.5);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA H200", Precision::kBf16)->tflops, 989.5);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA GH200 480GB", Precision::kTf32)->tflops, 494.5);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA A100-SXM4-80GB", Precision::kBf16)->tflops, 312);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA A100 80GB PCIe", Precision::kTf32)->tflops, 156);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA L4", Precision::kBf16)->tflops, 121);
  EXPECT_DOUBLE_EQ(DatasheetPeak("NVIDIA L40S", Precision::kBf16)->tflops, 362.05);
  EXPECT_FALSE(DatasheetPeak("NVIDIA L40", Precision::kBf16).has_value());  // not "L4"
  EXPECT_FALSE(DatasheetPeak("NVIDIA GeForce RTX 4090", Precision::kBf16).has_value());
  const auto h100 = DatasheetPeak("NVIDIA H100 80GB HBM3", Precision::kBf16);
  EXPECT_FALSE(h100->estimate);
  EXPECT_NE(h100->source.find("datasheet"), std::string::npos);
}

TEST(CudaTrainModel, EstimatedPeakFromSmsAndClock) {
  // H100 SXM at its 1830 MHz tensor clock gives its datasheet figure back.
  const auto hopper = EstimatedPeak(9, 0, 132, 1'830'000, Precision::kBf16);
  ASSERT_TRUE(hopper.has_value());
  EXPECT_NEAR(hopper->tflops, 989.4, 0.1);
  EXPECT_TRUE(hopper->estimate);
  EXPECT_NE(hopper->source.find("estimate"), std::string::npos);
  // A100: 108 SMs x 1410 MHz x 2048 = 312 TFLOP/s bf16; fp32 19.5.
  EXPECT_NEAR(EstimatedPeak(8, 0, 108, 1'410'000, Precision::kBf16)->tflops, 311.9, 0.1);
  EXPECT_NEAR(EstimatedPeak(8, 0, 108, 1'410'000, Precision::kFp32)->tflops, 19.5, 0.05);
  EXPECT_FALSE(EstimatedPeak(7, 5, 40, 1'590'000, Precision::kBf16).has_value());
  // The override wins; then the datasheet; then the estimate.
  EXPECT_DOUBLE_EQ(ResolvePeak(500.0, "NVIDIA H100 PCIe", 9, 0, 114, 1e6, Precision::kBf16)->tflops,
                   500);
  EXPECT_DOUBLE_EQ(ResolvePeak({}, "NVIDIA H100 PCIe", 9, 0, 114, 1e6, Precision::kBf16)->tflops,
                   756.5);
  EXPECT_TRUE(ResolvePeak({}, "NVIDIA B200", 10, 0, 148, 1.9e6, Precision::kBf16)->estimate);
}

TEST(CudaTrainModel, JsonLinesOfTheProtocol) {
  EXPECT_EQ(StepLine(12, false, 0.01234, {{"loss", 2.31}, {"samples_per_s", 20742.1}}),
            R"({"event":"step","step":12,"warmup":false,"time_s":0.01234,)"
            R"("values":{"loss":2.31,"samples_per_s":20742.1}})");
  EXPECT_EQ(StepLine(0, true, 0.5, {{"loss", std::nan("")}, {"tflops", 1.5}}),
            R"({"event":"step","step":0,"warmup":true,"time_s":0.5,"values":{"tflops":1.5}})");
  EXPECT_EQ(MetricLine("samples_per_s", 20731.0, "samples/s", "higher"),
            R"({"event":"metric","name":"samples_per_s","value":20731,"unit":"samples/s",)"
            R"("direction":"higher"})");
  EXPECT_EQ(InfoLine("device", "NVIDIA \"H100\""),
            R"({"event":"info","key":"device","value":"NVIDIA \"H100\""})");
  EXPECT_EQ(InfoLine("sm_count", 132.0), R"({"event":"info","key":"sm_count","value":132})");
  EXPECT_EQ(EndLine(), R"({"event":"end"})");
  EXPECT_EQ(JsonNumber(36'507'222'016.0), "36507222016");  // byte and FLOP counts stay exact
  EXPECT_EQ(JsonNumber(1.0 / 3.0), "0.3333333333");
  EXPECT_EQ(JsonNumber(INFINITY), "null");
  EXPECT_EQ(JsonString("a\nb\x01"), "\"a\\nb\\u0001\"");
}

std::optional<Options> Parse(std::vector<const char*> args, std::string* error) {
  args.insert(args.begin(), "cuda_train");
  return ParseOptions(static_cast<int>(args.size()), args.data(), error);
}

TEST(CudaTrainModel, CommandLine) {
  std::string error;
  auto defaults = Parse({}, &error);
  ASSERT_TRUE(defaults.has_value()) << error;
  EXPECT_EQ(defaults->widths, (std::vector<std::int64_t>{1024, 4096, 4096, 1024}));
  EXPECT_EQ(defaults->batch, 256);
  EXPECT_EQ(defaults->precision, Precision::kBf16);
  EXPECT_EQ(defaults->mode, Mode::kTrain);

  auto o = Parse({"--width", "512", "--depth=3", "--classes", "10", "--precision", "tf32",
                  "--batch=64", "--loss-scale", "dynamic", "--plan"},
                 &error);
  ASSERT_TRUE(o.has_value()) << error;
  EXPECT_EQ(o->widths, (std::vector<std::int64_t>{512, 512, 512, 10}));
  EXPECT_EQ(o->batch, 64);
  EXPECT_EQ(o->precision, Precision::kTf32);
  EXPECT_EQ(o->loss_scale_mode, LossScaleMode::kDynamic);
  EXPECT_EQ(o->mode, Mode::kPlan);

  EXPECT_EQ(Parse({"--steps", "5", "--help"}, &error)->mode, Mode::kHelp);
  EXPECT_EQ(defaults->warmup_max, 50);
  EXPECT_EQ(Parse({"--steps", "20"}, &error)->warmup_max, 10);  // half of a short run
  EXPECT_EQ(Parse({"--steps", "20", "--warmup-max", "15"}, &error)->warmup_max, 15);

  const std::vector<std::pair<std::vector<const char*>, const char*>> bad = {
      {{"--widths", "1024,x,10"}, "--widths: \"x\" is not a positive integer"},
      {{"--widths", "1024"}, "at least two widths"},
      {{"--widths", "8,1"}, "two classes"},
      {{"--widths", "8,4", "--width", "8", "--depth", "2"}, "alternatives"},
      {{"--width", "8"}, "go together"},
      {{"--precision", "fp16"}, "not fp32, tf32 or bf16"},
      {{"--batch", "0"}, "--batch: \"0\" is not an integer"},
      {{"--lr", "-1"}, "not a positive number"},
      {{"--steps", "10", "--warmup-max", "10"}, "must be below --steps"},
      {{"--frobnicate"}, "unknown option --frobnicate"},
      {{"--batch"}, "needs a value"},
      {{"--plan=1"}, "takes no value"},
  };
  for (const auto& [args, says] : bad) {
    error.clear();
    EXPECT_FALSE(Parse(args, &error).has_value()) << args[0];
    EXPECT_NE(error.find(says), std::string::npos) << error;
  }
}

// Central differences of f at x, h = 1e-6.
template <typename F>
double Derivative(F f, double x) {
  return (f(x + 1e-6) - f(x - 1e-6)) / 2e-6;
}

TEST(CudaTrainReference, GeluGradientMatchesFiniteDifferences) {
  for (double z = -6; z <= 6; z += 0.37) {
    EXPECT_NEAR(GeluGrad(z), Derivative(Gelu, z), 1e-8) << z;
  }
  EXPECT_NEAR(Gelu(1.0), 0.8411919906082768, 1e-12);  // PyTorch gelu(1, approximate="tanh")
}

TEST(CudaTrainReference, SoftmaxCrossEntropyIsStableAndItsGradientRight) {
  const std::int64_t classes = 4;
  const std::int64_t batch = 2;
  const std::vector<int> labels = {2, 0};
  std::vector<double> logits = {0.1, -1.2, 0.7, 2.0, 1000.0, 999.0, -1000.0, 998.5};
  std::vector<double> grad;
  const double loss = SoftmaxCrossEntropy(logits, labels, classes, batch, 8.0, &grad);
  ASSERT_TRUE(std::isfinite(loss));
  for (std::size_t i = 0; i < logits.size(); ++i) {
    const auto f = [&](double x) {
      std::vector<double> moved = logits;
      moved[i] = x;
      return 8.0 * SoftmaxCrossEntropy(moved, labels, classes, batch, 1.0, nullptr);
    };
    EXPECT_NEAR(grad[i], Derivative(f, logits[i]), 1e-6) << i;
  }
  // Uniform logits: ln(classes).
  EXPECT_NEAR(SoftmaxCrossEntropy(std::vector<double>(8, 3.0), labels, 4, 2, 1, nullptr),
              std::log(4.0), 1e-12);
}

TEST(CudaTrainReference, MlpGradientsMatchFiniteDifferences) {
  const std::vector<std::int64_t> widths = {4, 6, 5, 3};
  RefMlp mlp = InitialMlp(widths, 7);
  for (auto& b : mlp.biases) {
    for (std::size_t i = 0; i < b.size(); ++i) b[i] = 0.1 * static_cast<double>(i) - 0.2;
  }
  const RefBatch batch = SyntheticBatch(4, 3, 3, 7, 0);
  RefGrads grads;
  LossAndGrads(mlp, batch, 2.0, &grads);  // gradients of 2 * loss
  for (std::size_t l = 0; l < mlp.weights.size(); ++l) {
    for (std::size_t i = 0; i < mlp.weights[l].size(); ++i) {
      const auto f = [&](double x) {
        RefMlp moved = mlp;
        moved.weights[l][i] = x;
        return 2.0 * LossAndGrads(moved, batch, 1.0, nullptr);
      };
      EXPECT_NEAR(grads.weights[l][i], Derivative(f, mlp.weights[l][i]), 1e-6) << l << "," << i;
    }
    for (std::size_t i = 0; i < mlp.biases[l].size(); ++i) {
      const auto f = [&](double x) {
        RefMlp moved = mlp;
        moved.biases[l][i] = x;
        return 2.0 * LossAndGrads(moved, batch, 1.0, nullptr);
      };
      EXPECT_NEAR(grads.biases[l][i], Derivative(f, mlp.biases[l][i]), 1e-6) << l << "," << i;
    }
  }
}

TEST(CudaTrainReference, AdamWFirstStepIsSignSizedAndDecayIsDecoupled) {
  // Step 1: m_hat = g, v_hat = g^2, so the update is lr * (g / (|g| + eps) + wd * p).
  std::vector<double> p = {1.0, -2.0};
  std::vector<double> m(2, 0.0);
  std::vector<double> v(2, 0.0);
  AdamWConfig config;
  config.lr = 0.1;
  AdamWStep(p, {4.0, -0.5}, m, v, config, 0.5, 1, 2.0);  // gradients scaled by 2
  EXPECT_NEAR(p[0], 1.0 - 0.1 * (1.0 + 0.5 * 1.0), 1e-7);
  EXPECT_NEAR(p[1], -2.0 - 0.1 * (-1.0 + 0.5 * -2.0), 1e-7);
  EXPECT_NEAR(m[0], 0.1 * 2.0, 1e-12);
  EXPECT_NEAR(v[1], 0.001 * 0.0625, 1e-12);
}

TEST(CudaTrainReference, SyntheticBatchesAreFixedBySeedAndStep) {
  const RefBatch a = SyntheticBatch(16, 8, 32, 1, 5);
  const RefBatch b = SyntheticBatch(16, 8, 32, 1, 5);
  const RefBatch c = SyntheticBatch(16, 8, 32, 1, 6);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.labels, b.labels);
  EXPECT_NE(a.x, c.x);
  for (const int label : a.labels) {
    EXPECT_GE(label, 0);
    EXPECT_LT(label, 8);
  }
}

// The task is learnable: AdamW on the CPU reference cuts the loss of a small MLP well below its
// starting point of about ln(classes), on fresh batches every step.
TEST(CudaTrainReference, TheSyntheticTaskIsLearnable) {
  const std::vector<std::int64_t> widths = {16, 32, 8};
  RefMlp mlp = InitialMlp(widths, 1);
  RefOptimizer optimizer;
  AdamWConfig config;
  config.lr = 3e-3;
  double initial = 0;
  double last = 0;
  const int steps = 300;
  for (int step = 0; step < steps; ++step) {
    const RefBatch batch = SyntheticBatch(16, 8, 32, 1, step);
    RefGrads grads;
    const double loss = LossAndGrads(mlp, batch, 1.0, &grads);
    if (step == 0) initial = loss;
    if (step >= steps - 20) last += loss / 20;
    AdamWStep(mlp, grads, optimizer, config, 1.0);
  }
  EXPECT_NEAR(initial, std::log(8.0), 0.5);
  EXPECT_LT(last, 0.5 * initial) << "initial " << initial << ", final " << last;
}

}  // namespace
}  // namespace perfwarden::cuda_train

namespace perfwarden::cuda_train {
namespace {

// The compulsory traffic of a step, counted by hand for a one-hidden-layer fp32 MLP
// (widths 2, 3, 4; batch 5): GEMMs, element-wise kernels and AdamW, each tensor once.
TEST(BytesPerStep, CountsEveryTensorOnceByHand) {
  ModelShape shape;
  shape.widths = {2, 3, 4};
  shape.batch = 5;
  shape.precision = Precision::kFp32;
  const double B = 5, a = 4;
  double expected = 0;
  // Layer 0 (2 -> 3, hidden): forward, bias + GELU, dW, bias gradient (no dX: its input is data).
  expected += 2 * 3 * a + B * 2 * a + B * 3 * a;
  expected += B * 3 * a + 3 * 4 + 2 * B * 3 * a;
  expected += B * 3 * a + B * 2 * a + 2 * 3 * 4;
  expected += B * 3 * a + 3 * 4;
  // Layer 1 (3 -> 4, logits in fp32): forward, dW, bias gradient, dX and GELU backward.
  expected += 3 * 4 * a + B * 3 * a + B * 4 * 4;
  expected += B * 4 * a + B * 3 * a + 3 * 4 * 4;
  expected += B * 4 * a + 4 * 4;
  expected += 3 * 4 * a + B * 4 * a + B * 3 * a;
  expected += 3 * B * 3 * a;
  // Softmax cross-entropy, then AdamW over 2*3+3 + 3*4+4 = 25 parameters.
  expected += B * 4 * 4 + B * 4 + B * 4 * a + B * 4;
  expected += 25 * 28;
  EXPECT_DOUBLE_EQ(BytesPerStep(shape), expected);
  // bf16 halves the activations' bytes and adds the weights' bf16 copies.
  shape.precision = Precision::kBf16;
  EXPECT_LT(BytesPerStep(shape), expected);
}

TEST(DeviceBandwidth, DatasheetFigures) {
  EXPECT_EQ(DatasheetBandwidthGbs("NVIDIA H100 80GB HBM3"), 3350);
  EXPECT_EQ(DatasheetBandwidthGbs("NVIDIA H100 PCIe"), 2000);
  EXPECT_EQ(DatasheetBandwidthGbs("NVIDIA H200"), 4800);
  EXPECT_EQ(DatasheetBandwidthGbs("NVIDIA A100-SXM4-80GB"), 2039);
  EXPECT_EQ(DatasheetBandwidthGbs("NVIDIA A100-PCIE-40GB"), 1555);
  EXPECT_EQ(DatasheetBandwidthGbs("NVIDIA L4"), 300);
  EXPECT_FALSE(DatasheetBandwidthGbs("Tesla T4").has_value());
}

}  // namespace
}  // namespace perfwarden::cuda_train
