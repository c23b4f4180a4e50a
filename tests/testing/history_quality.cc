// SPDX-License-Identifier: Apache-2.0
#include "tests/testing/history_quality.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <tuple>

#include "stats/change_points.h"
#include "stats/descriptive.h"
#include "stats/peer_detectors.h"

namespace perfwarden::quality {
namespace {

std::size_t Distance(std::size_t a, std::size_t b) { return a > b ? a - b : b - a; }

Result<LabelledSeries> ParseSeries(const nlohmann::json& j) {
  LabelledSeries s;
  s.name = j.at("name").get<std::string>();
  s.category = j.at("category").get<std::string>();
  for (const auto& point : j.at("values")) {
    if (point.is_array()) {
      std::vector<double> reps = point.get<std::vector<double>>();
      s.levels.push_back(stats::Median(reps));
    } else {
      s.levels.push_back(point.get<double>());
    }
  }
  for (const char* key : {"steps", "fingerprint_changes"}) {
    for (const auto& step : j.at(key)) {
      s.steps.push_back({step.at("index").get<std::size_t>(), step.at("size").get<double>()});
    }
  }
  for (const auto& drift : j.at("drifts")) {
    s.drifts.emplace_back(drift.at("start").get<std::size_t>(), drift.at("end").get<std::size_t>());
  }
  s.outliers = j.at("outliers").get<std::vector<std::size_t>>();
  s.real = j.value("noise", "").rfind("real:", 0) == 0;
  s.pure_noise = s.steps.empty() && s.drifts.empty() && s.outliers.empty();
  return s;
}

}  // namespace

Result<std::vector<LabelledSeries>> LoadCorpus(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  if (ec) return InvalidArgument("cannot list: " + ec.message(), dir);
  std::sort(files.begin(), files.end());
  std::vector<LabelledSeries> corpus;
  for (const auto& file : files) {
    std::ifstream in(file);
    nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (j.is_discarded()) return InvalidArgument("invalid JSON", file.string());
    try {
      for (const auto& series : j.at("series")) {
        auto parsed = ParseSeries(series);
        if (!parsed) return tl::unexpected(parsed.error());
        corpus.push_back(std::move(*parsed));
      }
    } catch (const nlohmann::json::exception& e) {
      return InvalidArgument(e.what(), file.string());
    }
  }
  return corpus;
}

double Score::Precision() const { return tp + fp == 0 ? 1.0 : double(tp) / double(tp + fp); }
double Score::Recall() const { return tp + fn == 0 ? 1.0 : double(tp) / double(tp + fn); }
double Score::F1() const {
  const double p = Precision(), r = Recall();
  return p + r == 0 ? 0.0 : 2 * p * r / (p + r);
}
double Score::FalseAlarmsPer1000() const {
  return noise_points == 0 ? 0.0 : 1000.0 * double(noise_fp) / double(noise_points);
}
double Score::SyntheticFalseAlarmsPer1000() const {
  const std::size_t synthetic = noise_points - real_noise_points;
  return synthetic == 0 ? 0.0 : 1000.0 * double(noise_fp - real_noise_fp) / double(synthetic);
}
double Score::RealFalseAlarmsPer1000() const {
  return real_noise_points == 0 ? 0.0 : 1000.0 * double(real_noise_fp) / double(real_noise_points);
}
double Score::FpPer1000() const { return points == 0 ? 0.0 : 1000.0 * double(fp) / double(points); }

Score& Score::operator+=(const Score& o) {
  tp += o.tp, fp += o.fp, fn += o.fn, points += o.points;
  noise_fp += o.noise_fp, noise_points += o.noise_points;
  real_noise_fp += o.real_noise_fp, real_noise_points += o.real_noise_points;
  return *this;
}

Score ScoreSeries(const LabelledSeries& series, std::span<const std::size_t> detections) {
  std::vector<PlantedStep> positives;
  std::vector<std::pair<std::size_t, std::size_t>> ignored;  // closed intervals
  for (const PlantedStep& step : series.steps) {
    if (std::fabs(step.size) >= kPositiveSize) {
      positives.push_back(step);
    } else {
      ignored.emplace_back(step.index > kTolerance ? step.index - kTolerance : 0,
                           step.index + kTolerance);
    }
  }
  for (const auto& [start, end] : series.drifts) {
    ignored.emplace_back(start > kTolerance ? start - kTolerance : 0, end + kTolerance);
  }
  // Nearest pairs first; each positive and each detection is matched at most once.
  std::vector<std::tuple<std::size_t, std::size_t, std::size_t>> pairs;  // distance, p, d
  for (std::size_t p = 0; p < positives.size(); ++p) {
    for (std::size_t d = 0; d < detections.size(); ++d) {
      const std::size_t distance = Distance(positives[p].index, detections[d]);
      if (distance <= kTolerance) pairs.emplace_back(distance, p, d);
    }
  }
  std::sort(pairs.begin(), pairs.end());
  std::vector<bool> positive_used(positives.size()), detection_used(detections.size());
  Score score;
  for (const auto& [distance, p, d] : pairs) {
    if (positive_used[p] || detection_used[d]) continue;
    positive_used[p] = detection_used[d] = true;
    ++score.tp;
  }
  score.fn = positives.size() - score.tp;
  for (std::size_t d = 0; d < detections.size(); ++d) {
    if (detection_used[d]) continue;
    const bool ignore = std::any_of(ignored.begin(), ignored.end(), [&](const auto& interval) {
      return detections[d] >= interval.first && detections[d] <= interval.second;
    });
    if (!ignore) ++score.fp;
  }
  score.points = series.levels.size();
  if (series.pure_noise) {
    score.noise_fp = score.fp;
    score.noise_points = score.points;
    if (series.real) {
      score.real_noise_fp = score.fp;
      score.real_noise_points = score.points;
    }
  }
  return score;
}

bool SetDetectorOption(stats::HistoryOptions& options, const std::string& arg, const char* value) {
  const auto on = [&] { return std::string(value) != "0"; };
  if (arg == "--threshold") {
    options.threshold = std::strtod(value, nullptr);
  } else if (arg == "--window") {
    options.window = std::strtoul(value, nullptr, 10);
  } else if (arg == "--max-pvalue") {
    options.max_pvalue = std::strtod(value, nullptr);
  } else if (arg == "--rank-pvalue") {
    options.rank_pvalue = std::strtod(value, nullptr);
  } else if (arg == "--level-points") {
    options.level_points = std::strtoul(value, nullptr, 10);
  } else if (arg == "--min-segment") {
    options.min_segment = std::strtoul(value, nullptr, 10);
  } else if (arg == "--rank-test") {
    options.rank_test = on();
  } else if (arg == "--serial-correction") {
    options.serial_correction = on();
  } else if (arg == "--mean-shift") {
    options.mean_shift = on();
  } else if (arg == "--mean-shift-penalty") {
    options.mean_shift_penalty = std::strtod(value, nullptr);
  } else if (arg == "--clip-sigmas") {
    options.clip_sigmas = std::strtod(value, nullptr);
  } else {
    return false;
  }
  return true;
}

std::vector<Method> Methods(const stats::HistoryOptions& options) {
  using Indices = Result<std::vector<std::size_t>>;
  std::vector<Method> methods;
  methods.push_back({"perfwarden", [options](std::span<const double> x) -> Indices {
                       auto steps = stats::DetectSteps(x, options);
                       if (!steps) return tl::unexpected(steps.error());
                       std::vector<std::size_t> out;
                       for (const stats::Step& s : *steps) out.push_back(s.index);
                       return out;
                     }});
  methods.push_back({"github-action-benchmark 200%", [](std::span<const double> x) {
                       return stats::PreviousPointDetector(x, 2.0, true);
                     }});
  methods.push_back({"github-action-benchmark 5%", [](std::span<const double> x) {
                       return stats::PreviousPointDetector(x, 1.05, true);
                     }});
  methods.push_back({"Conbench z>5, 100 points", [](std::span<const double> x) {
                       return stats::LookbackZScoreDetector(x, 100, 5, 10);
                     }});
  methods.push_back({"Perfherder t>7, 12+12", [](std::span<const double> x) {
                       return stats::MovingWindowTTestDetector(x, 12, 7);
                     }});
  methods.push_back({"Otava p 0.001, window 50", [](std::span<const double> x) -> Indices {
                       auto analysis = stats::DetectChangePoints(x, {50, 0.001, 0.0});
                       if (!analysis) return tl::unexpected(analysis.error());
                       std::vector<std::size_t> out;
                       for (const auto& cp : analysis->change_points) out.push_back(cp.index);
                       return out;
                     }});
  return methods;
}

Result<std::vector<MethodScore>> Evaluate(const std::vector<LabelledSeries>& corpus,
                                          const std::vector<Method>& methods) {
  std::vector<MethodScore> out;
  for (const Method& method : methods) {
    MethodScore ms{method.name, {}, {}};
    for (const LabelledSeries& series : corpus) {
      auto detections = method.detect(series.levels);
      if (!detections) return tl::unexpected(detections.error());
      const Score score = ScoreSeries(series, *detections);
      ms.overall += score;
      ms.by_category[series.category] += score;
    }
    out.push_back(std::move(ms));
  }
  return out;
}

namespace {

std::string Row(const std::string& name, const Score& s, bool noise_column) {
  char buffer[256];
  std::snprintf(buffer, sizeof buffer, "| %s | %zu | %zu | %zu | %.3f | %.3f | **%.3f** | %.2f |",
                name.c_str(), s.tp, s.fp, s.fn, s.Precision(), s.Recall(), s.F1(), s.FpPer1000());
  std::string row = buffer;
  if (noise_column) {
    std::snprintf(buffer, sizeof buffer, " **%.3f** | %.3f | %.2f |", s.FalseAlarmsPer1000(),
                  s.SyntheticFalseAlarmsPer1000(), s.RealFalseAlarmsPer1000());
    row += buffer;
  }
  return row + "\n";
}

}  // namespace

std::string FormatTables(const std::vector<MethodScore>& scores) {
  std::string out =
      "Overall\n\n| method | TP | FP | FN | precision | recall | F1 | FP per 1,000 "
      "points | false alarms per 1,000 pure-noise points | synthetic | real |\n"
      "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  for (const MethodScore& ms : scores) out += Row(ms.method, ms.overall, true);
  if (scores.empty()) return out;
  for (const auto& [category, unused] : scores.front().by_category) {
    const Score& any = scores.front().by_category.at(category);
    out += "\n" + category + " (" + std::to_string(any.points) + " points, " +
           std::to_string(any.tp + any.fn) +
           " positives)\n\n"
           "| method | TP | FP | FN | precision | recall | F1 | FP per 1,000 points |\n"
           "|---|---:|---:|---:|---:|---:|---:|---:|\n";
    for (const MethodScore& ms : scores) out += Row(ms.method, ms.by_category.at(category), false);
  }
  return out;
}

}  // namespace perfwarden::quality
