// SPDX-License-Identifier: Apache-2.0
// cuda_train's command line (plain C++, unit-tested): every option, its default, its checks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "model_math.h"

namespace perfwarden::cuda_train {

enum class Mode { kTrain, kPlan, kCheck, kHelp };
enum class LossScaleMode { kNone, kStatic, kDynamic };

struct Options {
  Mode mode = Mode::kTrain;
  std::vector<std::int64_t> widths = {1024, 4096, 4096, 1024};
  std::int64_t batch = 256;
  std::int64_t steps = 200;  // at most, warm-up included
  Precision precision = Precision::kBf16;
  std::uint64_t seed = 1;
  double lr = 1e-3;
  double weight_decay = 0.01;
  double beta1 = 0.9;
  double beta2 = 0.999;
  double eps = 1e-8;
  LossScaleMode loss_scale_mode = LossScaleMode::kNone;
  double loss_scale = 1;  // static scale, or the dynamic scale's start (65536)
  int device = 0;
  std::int64_t warmup_max = 50;
  int warmup_window = 10;
  double warmup_cv = 0.05;
  std::optional<double> peak_tflops;

  ModelShape shape() const { return ModelShape{widths, batch, precision}; }
};

// Parses argv; nullopt and *error (one line, naming the option) when it is not valid.
std::optional<Options> ParseOptions(int argc, const char* const* argv, std::string* error);
std::string Usage();

}  // namespace perfwarden::cuda_train
