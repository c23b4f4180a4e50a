// SPDX-License-Identifier: Apache-2.0
// Reader of perfwarden's JSON-lines protocol (v1) for training benchmarks: any command (the CUDA
// benchmark of bench/workloads/cuda_train, a PyTorch or JAX script) prints one JSON object per
// line as it trains; other lines (logs) are ignored. docs/gpu.md specifies the protocol:
//
//   {"event":"step","step":12,"warmup":false,"time_s":0.01234,"values":{"loss":2.31}}
//   {"event":"metric","name":"mfu","value":0.41,"unit":"ratio","direction":"higher"}
//   {"event":"info","key":"device","value":"NVIDIA H100 80GB HBM3"}
//   {"event":"end"}
//
// Steps marked warmup are counted but not kept as samples. A line that begins with '{' must be a
// valid event: a malformed one is an error naming the line and the field, never skipped.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/metric.h"
#include "core/result.h"

namespace perfwarden::adapters {

struct TrainStep {
  int64_t step = 0;
  bool warmup = false;
  double time_s = 0;
  std::map<std::string, double> values;  // per-step values ("loss", "samples_per_s", ...)
};

struct TrainMetric {
  std::string name;
  double value = 0;
  std::string unit;
  std::optional<Direction> direction;  // absent: by name (DefaultDirection)
};

struct TrainOutput {
  std::vector<TrainStep> steps;  // in the order printed, warm-up included
  std::vector<TrainMetric> metrics;
  std::map<std::string, std::string> info;
  bool ended = false;  // the "end" event was seen
  std::vector<std::string> warnings;

  std::size_t WarmupSteps() const;
};

// Reads the whole output; `source` names it in errors ("mlp.log:12: ...").
Result<TrainOutput> ReadTrainLines(std::string_view text, const std::string& source);

// The direction of a metric named `name` when the command did not say: rates (`*_per_s`,
// `*per_second`, `tflops`, `mfu`, `*throughput*`) are higher-is-better, the rest lower.
Direction DefaultTrainDirection(std::string_view name);

}  // namespace perfwarden::adapters
