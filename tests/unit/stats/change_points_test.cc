// SPDX-License-Identifier: Apache-2.0
// E-divisive change points against Apache Otava's own results (tests/fixtures/oracles/otava,
// copies of ../shared/oracles/otava): the windowed Hunter cases, the plain divisive t-test case,
// every Q-hat cell of the 14-point sequence, and the split step's weak change points.
#include "stats/change_points.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <filesystem>
#include <limits>
#include <nlohmann/json.hpp>
#include <random>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/oracle_csv.h"

namespace perfwarden::stats {
namespace {

using nlohmann::json;
using ::perfwarden::testing::FixturePath;
using ::perfwarden::testing::NearRel;
using ::perfwarden::testing::ReadFile;
using ::perfwarden::testing::WorstError;

// The README asks for 1e-9 on p-values; the statistics reproduce numpy's summation order.
constexpr double kRel = 1e-9;

json LoadOtava(const std::string& name) {
  return json::parse(ReadFile(FixturePath("oracles/otava/" + name)));
}

std::vector<double> Tigerbeetle() {
  std::istringstream in(ReadFile(FixturePath("oracles/otava/tigerbeetle.csv")));
  std::string line;
  std::getline(in, line);  // header: index,value
  std::vector<double> values;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    const auto comma = line.find(',');
    EXPECT_EQ(std::stoul(line.substr(0, comma)), values.size()) << line;
    values.push_back(std::stod(line.substr(comma + 1)));
  }
  return values;
}

std::vector<double> SeriesOf(const json& c) {
  if (c.contains("series_file")) {
    EXPECT_EQ(c["series_file"], "tigerbeetle.csv");
    return Tigerbeetle();
  }
  return c["series"].get<std::vector<double>>();
}

std::vector<std::size_t> Indices(const std::vector<ChangePoint>& cps) {
  std::vector<std::size_t> out;
  for (const ChangePoint& cp : cps) out.push_back(cp.index);
  return out;
}

const json& RunResult(const json& runs, const std::string& name) {
  for (const json& r : runs) {
    if (r["name"] == name) return r;
  }
  ADD_FAILURE() << "no Otava run result for " << name;
  static const json kNone = json::object();
  return kNone;
}

// Every statistic Otava reported for the case (p, means, ddof-0 stds, forward change).
void CheckAgainstRun(const std::vector<ChangePoint>& got, const json& run, WorstError& worst) {
  const json& expected = run["change_points"];
  ASSERT_EQ(got.size(), expected.size());
  for (std::size_t i = 0; i < got.size(); ++i) {
    const json& e = expected[i];
    SCOPED_TRACE("index " + std::to_string(got[i].index));
    EXPECT_EQ(got[i].index, e["index"].get<std::size_t>());
    worst.Add(got[i].p_value, e["pvalue"].get<double>());
    EXPECT_TRUE(NearRel(got[i].p_value, e["pvalue"].get<double>(), kRel));
    EXPECT_TRUE(NearRel(got[i].mean_before, e["mean_before"].get<double>(), 1e-12));
    EXPECT_TRUE(NearRel(got[i].mean_after, e["mean_after"].get<double>(), 1e-12));
    EXPECT_TRUE(NearRel(got[i].std_before, e["std_before_ddof0"].get<double>(), 1e-12));
    EXPECT_TRUE(NearRel(got[i].std_after, e["std_after_ddof0"].get<double>(), 1e-12));
    EXPECT_TRUE(
        NearRel(got[i].forward_change * 100.0, e["forward_change_percent"].get<double>(), 1e-12));
  }
}

bool IsPermutationCase(const json& c) {
  return c["function"].get<std::string>().find("ermutation") != std::string::npos ||
         c["function"].get<std::string>().find("_orig") != std::string::npos;
}

TEST(OtavaOracle, EveryWindowedHunterCase) {
  const json cases = LoadOtava("expected_change_points.json")["cases"];
  const json runs = LoadOtava("otava_run_results_debian.json");
  ASSERT_EQ(cases.size(), 21u);
  WorstError worst("otava hunter p-values");
  int checked = 0;
  for (const json& c : cases) {
    const std::string function = c["function"];
    if (function.rfind("compute_change_points", 0) != 0 || IsPermutationCase(c)) continue;
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const json& params = c["params"];
    ChangePointOptions options;
    options.window_len = params.value("window_len", std::size_t{50});
    options.max_pvalue = params.value("max_pvalue", 0.001);
    options.min_magnitude = params.value("min_magnitude", 0.0);
    const std::vector<double> series = SeriesOf(c);
    const auto analysis = DetectChangePoints(series, options);
    ASSERT_TRUE(analysis.has_value()) << analysis.error().ToString();
    const std::vector<std::size_t> got = Indices(analysis->change_points);
    const json& run = RunResult(runs, name);
    if (c["expected_indices"].is_null()) {
      // test_div_by_zero: Otava asserts two change points, the first at 3.
      ASSERT_EQ(got.size(), 2u);
      EXPECT_EQ(got[0], 3u);
      EXPECT_EQ(got, run["got"].get<std::vector<std::size_t>>());
    } else {
      EXPECT_EQ(got, c["expected_indices"].get<std::vector<std::size_t>>());
    }
    CheckAgainstRun(analysis->change_points, run, worst);
    if (c.contains("expected_forward_change_percent")) {
      ASSERT_EQ(got.size(), 1u);
      EXPECT_NEAR(analysis->change_points[0].forward_change * 100.0,
                  c["expected_forward_change_percent"].get<double>(), 0.05);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 18);
}

TEST(OtavaOracle, DivisiveTTestOnTheWholeSeries) {
  const json cases = LoadOtava("expected_change_points.json")["cases"];
  const json runs = LoadOtava("otava_run_results_debian.json");
  WorstError worst("otava divisive p-values");
  int checked = 0;
  for (const json& c : cases) {
    if (c["name"] != "change_point_divisive_test::test_ttest") continue;
    const auto cps = DivisiveChangePoints(SeriesOf(c), c["params"]["max_pvalue"].get<double>());
    ASSERT_TRUE(cps.has_value());
    EXPECT_EQ(Indices(*cps), c["expected_indices"].get<std::vector<std::size_t>>());
    CheckAgainstRun(*cps, RunResult(runs, c["name"]), worst);
    ++checked;
  }
  EXPECT_EQ(checked, 1);
}

TEST(OtavaOracle, EveryQHatCellOfTheSequence) {
  // The 14-point SEQUENCE of Otava's change_point_divisive tests (the test_ttest series).
  std::vector<double> sequence;
  const json oracle = LoadOtava("expected_change_points.json");
  for (const json& c : oracle["cases"]) {
    if (c["name"] == "change_point_divisive_test::test_ttest") sequence = SeriesOf(c);
  }
  ASSERT_EQ(sequence.size(), 14u);
  std::istringstream in(ReadFile(FixturePath("oracles/otava/qhat_matrix_SEQUENCE.csv")));
  std::string line;
  std::getline(in, line);
  ASSERT_EQ(line, "tau,kappa,qhat");
  WorstError worst("otava qhat");
  int cells = 0;
  double best = -std::numeric_limits<double>::infinity();
  std::size_t best_tau = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream row(line);
    std::string tau, kappa, qhat;
    std::getline(row, tau, ',');
    std::getline(row, kappa, ',');
    std::getline(row, qhat, ',');
    const double expected = testing::ParseNumber(qhat);
    const double actual = EDivisiveQHat(sequence, std::stoul(tau), std::stoul(kappa));
    worst.Add(actual, expected);
    EXPECT_TRUE(NearRel(actual, expected, 1e-12)) << line;
    if (actual > best) {
      best = actual;
      best_tau = std::stoul(tau);
    }
    ++cells;
  }
  EXPECT_EQ(cells, 91);  // every 1 <= tau < kappa <= 14
  EXPECT_EQ(best_tau, 5u);
  EXPECT_TRUE(NearRel(best, 761.2821428571428, 1e-12));
}

TEST(OtavaOracle, TigerbeetleWeakChangePointsOfTheSplitStep) {
  const json oracle = LoadOtava("tigerbeetle_weak_cps.json");
  const std::vector<double> series = Tigerbeetle();
  ASSERT_EQ(series.size(), 365u);
  WorstError worst("otava weak p-values");
  int checked = 0;
  for (const auto& [key, expected] : oracle["results_by_max_pvalue"].items()) {
    SCOPED_TRACE("max_pvalue " + key);
    ChangePointOptions options;
    options.window_len = oracle["window_len"].get<std::size_t>();
    options.max_pvalue = std::stod(key);
    options.min_magnitude = oracle["min_magnitude"].get<double>();
    EXPECT_DOUBLE_EQ(FirstPassPValue(options.max_pvalue), expected["first_pass_pvalue"]);
    const auto analysis = DetectChangePoints(series, options);
    ASSERT_TRUE(analysis.has_value());
    const auto check = [&](const std::vector<ChangePoint>& got, const json& indices,
                           const json& pvalues) {
      ASSERT_EQ(Indices(got), indices.get<std::vector<std::size_t>>());
      for (std::size_t i = 0; i < got.size(); ++i) {
        worst.Add(got[i].p_value, pvalues[i].get<double>());
        EXPECT_TRUE(NearRel(got[i].p_value, pvalues[i].get<double>(), kRel)) << got[i].index;
      }
    };
    check(analysis->weak_change_points, expected["weak_indices(split step)"],
          expected["weak_pvalues"]);
    check(analysis->change_points, expected["final_indices(after merge)"],
          expected["final_pvalues"]);
    ++checked;
  }
  EXPECT_EQ(checked, 2);
}

TEST(ChangePoints, ShortAndConstantSeriesHaveNone) {
  for (const std::vector<double>& series :
       {std::vector<double>{}, {5.0}, {1.0, 2.0}, std::vector<double>(100, 3.25)}) {
    const auto analysis = DetectChangePoints(series, ChangePointOptions{});
    ASSERT_TRUE(analysis.has_value());
    EXPECT_TRUE(analysis->change_points.empty()) << series.size();
    EXPECT_TRUE(analysis->weak_change_points.empty()) << series.size();
    const auto divisive = DivisiveChangePoints(series, 0.01);
    ASSERT_TRUE(divisive.has_value());
    EXPECT_TRUE(divisive->empty()) << series.size();
  }
}

TEST(ChangePoints, FindsACleanTwentyPercentStep) {
  std::mt19937_64 rng(20260501);
  std::normal_distribution<double> noise(0.0, 0.01);
  std::vector<double> series;
  for (int i = 0; i < 200; ++i) series.push_back((i < 100 ? 1.0 : 1.2) * (1.0 + noise(rng)));
  const auto analysis = DetectChangePoints(series, ChangePointOptions{});
  ASSERT_TRUE(analysis.has_value());
  ASSERT_EQ(analysis->change_points.size(), 1u)
      << ::testing::PrintToString(Indices(analysis->change_points));
  const ChangePoint& cp = analysis->change_points[0];
  EXPECT_GE(cp.index, 99u);
  EXPECT_LE(cp.index, 101u);
  EXPECT_NEAR(cp.forward_change, 0.2, 0.01);
  EXPECT_LT(cp.p_value, 1e-12);
}

// Bit-identical change points, weak and final, whether a series is analysed whole or grown a
// point (or a few) at a time from the state of the previous call: steps, a spike, noise of
// several scales, windows of several lengths (odd ones too).
void ExpectSameAnalysis(const ChangePointAnalysis& a, const ChangePointAnalysis& b,
                        const std::string& where) {
  ASSERT_EQ(a.change_points.size(), b.change_points.size()) << where;
  ASSERT_EQ(a.weak_change_points.size(), b.weak_change_points.size()) << where;
  for (std::size_t i = 0; i < a.change_points.size(); ++i) {
    EXPECT_EQ(a.change_points[i].index, b.change_points[i].index) << where;
    EXPECT_EQ(a.change_points[i].p_value, b.change_points[i].p_value) << where;
    EXPECT_EQ(a.change_points[i].magnitude, b.change_points[i].magnitude) << where;
  }
  for (std::size_t i = 0; i < a.weak_change_points.size(); ++i) {
    EXPECT_EQ(a.weak_change_points[i].index, b.weak_change_points[i].index) << where;
  }
}

TEST(ChangePointsIncremental, AppendingGivesTheFullAnalysis) {
  std::mt19937_64 rng(20261123);
  for (const std::size_t window : {std::size_t{7}, std::size_t{20}, std::size_t{50}}) {
    for (const double cv : {0.002, 0.02, 0.08}) {
      std::normal_distribution<double> noise(0.0, cv);
      std::vector<double> all;
      for (int i = 0; i < 400; ++i) {
        const double level = i < 90 ? 1.0 : i < 230 ? 1.1 : i < 300 ? 0.95 : 1.0;
        all.push_back(i == 150 ? 3.0 : level * (1.0 + noise(rng)));
      }
      ChangePointOptions options;
      options.window_len = window;
      options.min_magnitude = 0.01;
      ChangePointState state;
      std::size_t resumed = 0;
      std::uniform_int_distribution<std::size_t> grow(1, 4);
      for (std::size_t n = 1; n <= all.size(); n += grow(rng)) {
        const std::span<const double> prefix(all.data(), n);
        auto incremental = DetectChangePointsIncremental(prefix, options, &state);
        ASSERT_TRUE(incremental.has_value());
        resumed += incremental->resumed ? 1 : 0;
        auto full = DetectChangePoints(prefix, options);
        ASSERT_TRUE(full.has_value());
        ExpectSameAnalysis(incremental->analysis, *full,
                           "window " + std::to_string(window) + " cv " + std::to_string(cv) +
                               " n " + std::to_string(n));
        EXPECT_EQ(incremental->state.length, n);
        EXPECT_LE(incremental->state.resume_start, n);
        state = incremental->state;
      }
      EXPECT_GT(resumed, 100u);
    }
  }
}

TEST(ChangePointsIncremental, AStateOfOtherOptionsOrALongerSeriesIsNotUsed) {
  std::vector<double> series;
  for (int i = 0; i < 120; ++i) series.push_back(i < 60 ? 1.0 + 0.001 * (i % 3) : 1.3);
  ChangePointOptions options;
  auto first = DetectChangePointsIncremental(series, options, nullptr);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->resumed);
  EXPECT_EQ(first->analysis.change_points.size(), 1u);
  ChangePointOptions other = options;
  other.window_len = 30;
  auto with_other = DetectChangePointsIncremental(series, other, &first->state);
  ASSERT_TRUE(with_other.has_value());
  EXPECT_FALSE(with_other->resumed);
  const std::span<const double> shorter(series.data(), 80);
  auto with_longer = DetectChangePointsIncremental(shorter, options, &first->state);
  ASSERT_TRUE(with_longer.has_value());
  EXPECT_FALSE(with_longer->resumed);
  ExpectSameAnalysis(with_longer->analysis, *DetectChangePoints(shorter, options), "shorter");
  auto same = DetectChangePointsIncremental(series, options, &first->state);
  ASSERT_TRUE(same.has_value());
  EXPECT_TRUE(same->resumed);
  ExpectSameAnalysis(same->analysis, first->analysis, "same");
}

TEST(ChangePoints, RejectsInvalidArguments) {
  const std::vector<double> series = {1, 2, 3, 4};
  ChangePointOptions options;
  options.window_len = 1;
  auto r = DetectChangePoints(series, options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "window_len");
  options = {};
  options.max_pvalue = 1.5;
  r = DetectChangePoints(series, options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "max_pvalue");
  options = {};
  options.min_magnitude = std::nan("");
  r = DetectChangePoints(series, options);
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "min_magnitude");
  const std::vector<double> with_inf = {1, std::numeric_limits<double>::infinity(), 3};
  r = DetectChangePoints(with_inf, ChangePointOptions{});
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().field, "series[1]");
  EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  EXPECT_FALSE(DivisiveChangePoints(series, -0.1).has_value());
}

TEST(ChangePoints, QHatOutsideItsDomainIsNaN) {
  const std::vector<double> x = {1, 2, 3};
  EXPECT_TRUE(std::isnan(EDivisiveQHat(x, 0, 2)));
  EXPECT_TRUE(std::isnan(EDivisiveQHat(x, 2, 2)));
  EXPECT_TRUE(std::isnan(EDivisiveQHat(x, 1, 4)));
  // Two single points: Q-hat is their distance.
  EXPECT_DOUBLE_EQ(EDivisiveQHat(x, 1, 2), 1.0);
  EXPECT_DOUBLE_EQ(FirstPassPValue(0.2), 0.4);
  EXPECT_DOUBLE_EQ(FirstPassPValue(0.6), 0.6);
}

// The copies in tests/fixtures must stay byte-identical to ../shared/oracles/otava when present.
TEST(OtavaOracle, FixtureCopiesMatchSharedOracles) {
  const std::filesystem::path shared =
      std::filesystem::path(PERFWARDEN_SHARED_ORACLES_DIR) / "otava";
  if (!std::filesystem::exists(shared)) GTEST_SKIP() << "no " << shared;
  for (const char* name :
       {"README.md", "expected_change_points.json", "otava_run_results_debian.json",
        "qhat_matrix_SEQUENCE.csv", "tigerbeetle.csv", "tigerbeetle_weak_cps.json"}) {
    EXPECT_EQ(ReadFile(FixturePath(std::string("oracles/otava/") + name)),
              ReadFile((shared / name).string()))
        << name;
  }
}

}  // namespace
}  // namespace perfwarden::stats
