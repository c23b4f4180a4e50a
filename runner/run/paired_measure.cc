// SPDX-License-Identifier: Apache-2.0
#include "runner/run/paired_measure.h"

namespace perfwarden::run {

PairedMeasurer::PairedMeasurer(const config::RunnerConfig& head, const BaselineTree& base,
                               const PairedOptions& options)
    : head_(head), base_(base), options_(options), order_(options.seed) {}

void PairedMeasurer::Record(const SuiteOutcome& outcome, bool base_side, bool base_first,
                            const std::set<std::string>& only) {
  for (const wire::ResultSeries& s : outcome.series) {
    // A binary that ignores the filter reports more than was asked: only what was asked for
    // belongs to this pair of runs.
    if (!only.empty() && only.count(s.key.benchmark) == 0) continue;
    PairedSeries& series = series_[s.key];
    if (series.key.suite.empty()) {
      series.key = s.key;
      series.unit = s.unit;
      series.direction = s.direction;
    }
    series.blocks.resize(static_cast<size_t>(blocks_) + 1);
    PairedBlock& block = series.blocks.back();
    block.base_first = base_first;
    std::vector<double>& into = base_side ? block.base : block.head;
    into.insert(into.end(), s.values.begin(), s.values.end());
  }
}

Result<void> PairedMeasurer::MeasurePair(const std::string& suite_name,
                                         const config::Suite& head_suite,
                                         const config::Suite& base_suite,
                                         const std::set<std::string>& benchmarks, int repetitions,
                                         const ProgressLine& progress) {
  const ProgressLine quiet = [](const std::string&) {};
  const bool base_first = (order_() & 1u) == 0;
  for (int turn = 0; turn < 2; ++turn) {
    const bool base_side = (turn == 0) == base_first;
    SuiteOptions options;
    options.repetitions = repetitions;
    options.benchmarks = benchmarks;
    options.work_dir = base_.WorkDir(base_side ? "work-base" : "work-head");
    options.skip_build = true;
    options.quiet = true;
    auto outcome = RunSuite(base_side ? base_.config() : head_, base_side ? base_suite : head_suite,
                            options, blocks_ == 0 ? progress : quiet);
    if (!outcome) {
      return MakeError(outcome.error().code, std::string(base_side ? "baseline" : "this build") +
                                                 " (suite " + suite_name +
                                                 "): " + outcome.error().message);
    }
    Record(*outcome, base_side, base_first,
           head_suite.type == config::SuiteType::kGbench ? benchmarks : std::set<std::string>{});
  }
  return {};
}

Result<void> PairedMeasurer::MeasureBlock(const BenchmarkSelection& only,
                                          const ProgressLine& progress) {
  for (const auto& [suite_name, benchmarks] : only) {
    const config::Suite* head_suite = head_.FindSuite(suite_name);
    const config::Suite* base_suite = base_.config().FindSuite(suite_name);
    if (head_suite == nullptr || base_suite == nullptr) {
      return MakeError(ErrorCode::kNotFound,
                       "suite " + suite_name + " is not in both commits' perfwarden.yaml");
    }
    std::set<std::string> names = benchmarks;
    const bool split = options_.interleave != PairedOptions::Interleave::kSuite &&
                       head_suite->type == config::SuiteType::kGbench;
    if (split && names.empty()) {
      for (const auto& [key, series] : series_) {
        if (key.suite == suite_name) names.insert(key.benchmark);
      }
    }
    if (!split || names.empty()) {
      if (auto ok = MeasurePair(suite_name, *head_suite, *base_suite, benchmarks,
                                options_.repetitions, progress);
          !ok) {
        return ok;
      }
      continue;
    }
    const bool rounds = options_.interleave == PairedOptions::Interleave::kRepetition;
    for (const std::string& name : names) {
      for (int round = 0; round < (rounds ? options_.repetitions : 1); ++round) {
        if (auto ok = MeasurePair(suite_name, *head_suite, *base_suite, {name},
                                  rounds ? 1 : options_.repetitions, progress);
            !ok) {
          return ok;
        }
      }
    }
  }
  ++blocks_;
  for (auto& [key, series] : series_) series.blocks.resize(static_cast<size_t>(blocks_));
  return {};
}

std::vector<PairedSeries> PairedMeasurer::Series() const {
  std::vector<PairedSeries> out;
  out.reserve(series_.size());
  for (const auto& [key, series] : series_) out.push_back(series);
  return out;
}

}  // namespace perfwarden::run
