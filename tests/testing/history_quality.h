// SPDX-License-Identifier: Apache-2.0
// Detection quality on the labelled history corpus (tests/fixtures/history; docs/statistics.md,
// "History detection quality"): loads the corpus, runs perfwarden's history detector and the
// peers' default methods on every series' per-point levels, and scores them: a planted step of
// at least 5% is a positive, matched by the nearest detection within 5 points; detections near a
// smaller step or inside a drift are ignored; every other detection is a false positive.
// Shared by bench/history_quality.cc (the table) and tests/unit/stats/history_quality_test.cc
// (the pin).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/result.h"
#include "stats/history_detector.h"

namespace perfwarden::quality {

struct PlantedStep {
  std::size_t index = 0;
  double size = 0;  // relative change of the true level
};

struct LabelledSeries {
  std::string name, category;
  std::vector<double> levels;      // per-point medians of the repetitions
  std::vector<PlantedStep> steps;  // planted steps and fingerprint-change shifts together
  std::vector<std::pair<std::size_t, std::size_t>> drifts;  // [start, end)
  std::vector<std::size_t> outliers;
  bool pure_noise = false;  // no label of any kind: counts for the false-alarm rate
  bool real = false;        // recorded noise (bench/record_real_noise.sh), not synthetic
};

// Every *.json of `dir` (as bench/history_corpus.cc writes them), in file-name order.
Result<std::vector<LabelledSeries>> LoadCorpus(const std::string& dir);

constexpr double kPositiveSize = 0.05;  // a planted step this large or larger must be found
constexpr std::size_t kTolerance = 5;   // points between a detection and the truth

struct Score {
  std::size_t tp = 0, fp = 0, fn = 0, points = 0;
  std::size_t noise_fp = 0, noise_points = 0;            // on pure-noise series only
  std::size_t real_noise_fp = 0, real_noise_points = 0;  // on recorded pure-noise series only
  double Precision() const;                              // 1 when nothing was detected
  double Recall() const;                                 // 1 when there was nothing to find
  double F1() const;
  double FalseAlarmsPer1000() const;  // noise_fp per 1,000 pure-noise points
  double SyntheticFalseAlarmsPer1000() const;
  double RealFalseAlarmsPer1000() const;
  double FpPer1000() const;  // fp per 1,000 points of any series
  Score& operator+=(const Score& other);
};

// Scores one series' detections (sorted or not) against its labels.
Score ScoreSeries(const LabelledSeries& series, std::span<const std::size_t> detections);

struct Method {
  std::string name;
  std::function<Result<std::vector<std::size_t>>(std::span<const double>)> detect;
};

// perfwarden's DetectSteps with `options`, then the peers at their documented defaults:
// github-action-benchmark's previous-point ratio at 200% and at 5% (both directions), Conbench's
// lookback z > 5 over 100 points (10 points of history first), Perfherder's t > 7 over windows of
// 12, Otava's e-divisive with p 0.001 on windows of 50.
// The quality benches' detector options: sets the field `arg` (--threshold, --window,
// --max-pvalue, --rank-pvalue, --level-points, --min-segment, --rank-test 0|1,
// --serial-correction 0|1, --mean-shift 0|1, --mean-shift-penalty, --clip-sigmas) from `value`;
// false when `arg` names none of them.
bool SetDetectorOption(stats::HistoryOptions& options, const std::string& arg, const char* value);

std::vector<Method> Methods(const stats::HistoryOptions& options = {});

struct MethodScore {
  std::string method;
  Score overall;
  std::map<std::string, Score> by_category;
};

Result<std::vector<MethodScore>> Evaluate(const std::vector<LabelledSeries>& corpus,
                                          const std::vector<Method>& methods);

// A Markdown table: overall, then one per category.
std::string FormatTables(const std::vector<MethodScore>& scores);

}  // namespace perfwarden::quality
