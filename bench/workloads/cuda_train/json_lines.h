// SPDX-License-Identifier: Apache-2.0
// perfwarden's JSON-lines protocol (v1, docs/gpu.md), as text: one event per line, written to
// stdout; everything else cuda_train says goes to stderr, which the reader ignores anyway.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfwarden::cuda_train {

// A JSON string literal, quotes included, with control characters escaped.
std::string JsonString(std::string_view text);
// A JSON number: integral values below 2^53 without a fraction or exponent (byte counts stay
// exact), others with 10 significant digits. JSON has no NaN or infinity: callers must not pass
// them (JsonNumber returns "null", which the reader refuses, rather than invalid JSON).
std::string JsonNumber(double value);

using Values = std::vector<std::pair<std::string, double>>;

// {"event":"step","step":12,"warmup":false,"time_s":0.01234,"values":{"loss":2.31,...}};
// non-finite values are left out of "values".
std::string StepLine(long long step, bool warmup, double time_s, const Values& values);
// {"event":"metric","name":"samples_per_s","value":20731,"unit":"samples/s","direction":"higher"}
std::string MetricLine(std::string_view name, double value, std::string_view unit,
                       std::string_view direction);
// {"event":"info","key":"device","value":"NVIDIA H100 80GB HBM3"}
std::string InfoLine(std::string_view key, std::string_view value);
std::string InfoLine(std::string_view key, double value);
// {"event":"end"}
std::string EndLine();

}  // namespace perfwarden::cuda_train
