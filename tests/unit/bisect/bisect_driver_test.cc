// SPDX-License-Identifier: Apache-2.0
// The whole bisect algorithm (bisect/driver.h) against simulated measurements: it finds a
// planted step among noise and around a commit that does not build, ends that stay undecided at
// the cap are answered as such, a probe left unknown is probed again when the window has
// narrowed to it, a log replays to the same
// answer without measuring again, a cut log stops at the measurement that follows (how the
// server queues remote steps), a log of another bisect is refused, an end that does not build
// is an error, and the JSON of measurements, options and reports reads back what it wrote.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <set>
#include <vector>

#include "bisect/driver.h"
#include "tests/testing/numbered_commits.h"

namespace perfwarden::bisect {
namespace {

using nlohmann::json;

std::vector<CommitRef> Commits(std::size_t n) { return testing::NumberedCommits(n); }

// A target's level, or the relative noise of its repetitions (a coefficient of variation), in a
// request.
using RequestFn = std::function<double(const Request&, std::size_t position)>;

// Measures position p around level(p) with Gaussian noise (2% unless `noise` says otherwise);
// positions in `broken` do not build.
class Simulator {
 public:
  Simulator(std::function<double(std::size_t)> level, std::set<std::size_t> broken = {},
            RequestFn noise = {})
      : level_([level](const Request&, std::size_t p) { return level(p); }),
        broken_(std::move(broken)),
        noise_of_(std::move(noise)) {}
  // A level that depends on the request too (what a machine that drifts between measurements
  // would show).
  explicit Simulator(RequestFn level) : level_(std::move(level)) {}

  MeasureFn Fn() {
    return [this](const Request& request) -> Result<Measurement> {
      ++calls;
      Measurement m;
      m.suite = "micro";
      m.metric = "real_time";
      for (const std::size_t t : request.targets) {
        TargetResult r;
        if (broken_.count(t) != 0) {
          r.skipped = true;
          r.note = "build failed (exit 1): error: broken";
        } else {
          const double cv = noise_of_ ? noise_of_(request, t) : 0.02;
          for (int i = 0; i < request.repetitions; ++i) {
            r.samples.push_back(level_(request, t) * (1 + cv * noise_(rng_)));
          }
        }
        m.results.push_back(std::move(r));
      }
      return m;
    };
  }
  int calls = 0;

 private:
  RequestFn level_;
  std::set<std::size_t> broken_;
  RequestFn noise_of_;
  std::mt19937_64 rng_{42};
  std::normal_distribution<double> noise_{0, 1};
};

TEST(BisectDriver, FindsAStepAroundABrokenCommit) {
  Simulator sim([](std::size_t p) { return p >= 37 ? 1100.0 : 1000.0; }, {32});
  std::vector<Measurement> log;
  auto outcome = RunSearch(Commits(64), {}, &log, sim.Fn(), {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error().ToString();
  ASSERT_TRUE(outcome->finished);
  const Report& r = outcome->report;
  ASSERT_EQ(r.culprits.size(), 1u);
  EXPECT_EQ(r.culprits[0].sha, Commits(64)[37].sha);
  EXPECT_TRUE(r.culprits[0].exact);
  EXPECT_NEAR(r.culprits[0].magnitude, 0.10, 0.02);
  EXPECT_LT(r.culprits[0].ci_low, r.culprits[0].magnitude);
  EXPECT_GT(r.culprits[0].ci_high, r.culprits[0].magnitude);
  EXPECT_TRUE(r.endpoints.reproduced);
  EXPECT_EQ(r.expected_probes, 6u);
  EXPECT_LE(r.probes.size(), 9u);
  EXPECT_EQ(r.measurements, log.size());
  EXPECT_EQ(static_cast<std::size_t>(sim.calls), log.size());
  EXPECT_EQ(r.suite, "micro");
}

TEST(BisectDriver, ALogReplaysToTheSameAnswerAndACutLogStopsWhereItWasCut) {
  Simulator sim([](std::size_t p) { return p >= 11 ? 1100.0 : 1000.0; });
  const std::vector<CommitRef> commits = Commits(32);
  std::vector<Measurement> log;
  auto full = RunSearch(commits, {}, &log, sim.Fn(), {});
  ASSERT_TRUE(full.has_value());
  ASSERT_GE(log.size(), 4u);
  // The whole log, no measurer: the same answer, nothing measured.
  std::vector<Measurement> replayed = log;
  auto again = RunSearch(commits, {}, &replayed, {}, {});
  ASSERT_TRUE(again.has_value());
  ASSERT_TRUE(again->finished);
  EXPECT_EQ(ReportJson(again->report), ReportJson(full->report));
  EXPECT_EQ(replayed.size(), log.size());
  // Cut after i measurements: pending is measurement i, and what was decided so far is kept.
  for (std::size_t i = 0; i < log.size(); ++i) {
    std::vector<Measurement> cut(log.begin(), log.begin() + static_cast<std::ptrdiff_t>(i));
    auto partial = RunSearch(commits, {}, &cut, {}, {});
    ASSERT_TRUE(partial.has_value()) << i;
    ASSERT_FALSE(partial->finished) << i;
    ASSERT_TRUE(partial->pending.has_value());
    EXPECT_EQ(*partial->pending, log[i].request) << i;
    EXPECT_EQ(partial->report.measurements, i);
    EXPECT_LE(partial->report.probes.size(), full->report.probes.size());
  }
  // The first measurement is of the two ends.
  EXPECT_EQ(log[0].request.targets, (std::vector<std::size_t>{0, 32}));
}

TEST(BisectDriver, ALogOfAnotherBisectIsRefused) {
  Simulator sim([](std::size_t p) { return p >= 11 ? 1100.0 : 1000.0; });
  std::vector<Measurement> log;
  ASSERT_TRUE(RunSearch(Commits(32), {}, &log, sim.Fn(), {}).has_value());
  // Same measurements, a range of another length: the first request already differs.
  auto other = RunSearch(Commits(16), {}, &log, {}, {});
  ASSERT_FALSE(other.has_value());
  EXPECT_EQ(other.error().code, ErrorCode::kInvalidArgument);
  EXPECT_NE(other.error().message.find("another bisect"), std::string::npos);
}

TEST(BisectDriver, AnEndThatDoesNotBuildIsAnError) {
  Simulator sim([](std::size_t) { return 1000.0; }, {0});
  std::vector<Measurement> log;
  auto outcome = RunSearch(Commits(8), {}, &log, sim.Fn(), {});
  ASSERT_FALSE(outcome.has_value());
  EXPECT_EQ(outcome.error().code, ErrorCode::kUnavailable);
  EXPECT_NE(outcome.error().message.find("the good end"), std::string::npos);
  EXPECT_NE(outcome.error().message.find("build failed"), std::string::npos);
}

TEST(BisectDriver, AFlatRangeIsNotReproduced) {
  Simulator sim([](std::size_t) { return 1000.0; });
  std::vector<Measurement> log;
  auto outcome = RunSearch(Commits(8), {}, &log, sim.Fn(), {});
  ASSERT_TRUE(outcome.has_value());
  EXPECT_TRUE(outcome->finished);
  EXPECT_TRUE(outcome->report.culprits.empty());
  EXPECT_FALSE(outcome->report.endpoints.reproduced);
  ASSERT_EQ(outcome->report.warnings.size(), 1u);
}

// Ends 4% apart under 10% noise: at the cap (20) the interval of the change still reaches the
// 5% threshold and the change is not a significant regression of that size. The answer is
// "undecided" with its figures, not "does not reproduce".
TEST(BisectDriver, EndsUndecidedAtTheCapAreAnsweredAsUndecided) {
  Simulator sim([](std::size_t p) { return p >= 3 ? 1040.0 : 1000.0; }, {},
                [](const Request&, std::size_t) { return 0.10; });
  SearchOptions options;
  options.max_repetitions = 20;
  std::vector<Measurement> log;
  auto outcome = RunSearch(Commits(8), options, &log, sim.Fn(), {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error().ToString();
  ASSERT_TRUE(outcome->finished);
  const Report& r = outcome->report;
  EXPECT_EQ(r.endpoints.outcome, Reproduction::kUndecided) << r.endpoints.reason;
  EXPECT_FALSE(r.endpoints.reproduced);
  EXPECT_EQ(r.endpoints.repetitions, 20);
  EXPECT_GT(r.endpoints.repetitions_needed, 20);
  EXPECT_GE(r.endpoints.ci_high, 0.05);
  // The ends were measured twice: 10 repetitions, then 10 more (doubling to the cap).
  ASSERT_EQ(log.size(), 2u);
  EXPECT_EQ(log[1].request, (Request{{0, 8}, 10}));
  EXPECT_TRUE(r.culprits.empty());
  EXPECT_TRUE(r.probes.empty());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_EQ(r.warnings[0].find("undecided"), 0u) << r.warnings[0];
  EXPECT_EQ(r.warnings[0].find("does not reproduce"), std::string::npos) << r.warnings[0];
  EXPECT_NE(r.warnings[0].find("--max-repetitions to about " +
                               std::to_string(r.endpoints.repetitions_needed)),
            std::string::npos)
      << r.warnings[0];
  // The JSON carries the outcome and its figures.
  const json ends = ReportJson(r)["endpoints"];
  EXPECT_EQ(ends["outcome"], "undecided");
  EXPECT_EQ(ends["repetitions"], 20);
  EXPECT_EQ(ends["ci"].size(), 2u);
  auto back = ReportFromJson(json::parse(ReportJson(r).dump()));
  ASSERT_TRUE(back.has_value()) << back.error().ToString();
  EXPECT_EQ(ReportJson(*back), ReportJson(r));
  // A report written before the outcome existed reads as reproduced or not; an outcome that
  // contradicts "reproduced" is refused.
  json old = ReportJson(r);
  old["endpoints"].erase("outcome");
  EXPECT_EQ(ReportFromJson(old)->endpoints.outcome, Reproduction::kNotReproduced);
  old["endpoints"]["reproduced"] = true;
  EXPECT_EQ(ReportFromJson(old)->endpoints.outcome, Reproduction::kReproduced);
  old["endpoints"]["outcome"] = "undecided";
  EXPECT_EQ(ReportFromJson(old).error().field, "endpoints.outcome");
}

// A probe left UNKNOWN at the cap (its first measurement is far too noisy) is stepped around;
// once the window has narrowed to it, it is probed again against the final window's ends, and
// the culprit is exact.
TEST(BisectDriver, AProbeUnknownAtTheCapIsProbedAgainstTheFinalWindow) {
  const std::vector<std::size_t> first = {0, 8, 16};
  Simulator sim([](std::size_t p) { return p >= 9 ? 1100.0 : 1000.0; }, {},
                [&](const Request& request, std::size_t p) {
                  return p == 8 && request.targets == first ? 0.5 : 0.02;
                });
  SearchOptions options;
  options.max_repetitions = 20;
  std::vector<Measurement> log;
  auto outcome = RunSearch(Commits(16), options, &log, sim.Fn(), {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error().ToString();
  const Report& r = outcome->report;
  ASSERT_GE(r.probes.size(), 2u);
  EXPECT_EQ(r.probes.front().position, 8u);
  EXPECT_EQ(r.probes.front().verdict, "unknown") << r.probes.front().reason;
  EXPECT_EQ(r.probes.front().n, 20);
  EXPECT_EQ(r.probes.back().position, 8u);
  EXPECT_EQ(r.probes.back().verdict, "good") << r.probes.back().reason;
  ASSERT_EQ(r.culprits.size(), 1u);
  EXPECT_EQ(r.culprits[0].sha, Commits(16)[9].sha);
  EXPECT_TRUE(r.culprits[0].exact);
}

// The culprit's step measures low (3% of a 10% change, CI and all) and one side's ends differ in
// their check (a moment of drift), so that side is searched for another step; inside it the
// ends no longer differ, the first probe stays UNKNOWN at the cap, and the side is given up
// instead of stepping around every commit in it.
TEST(BisectDriver, ASideWhoseEndsNoLongerDifferIsNotSearchedFurther) {
  const std::vector<std::size_t> step = {11, 12}, side = {0, 11};
  Simulator sim([&](const Request& request, std::size_t p) {
    if (request.targets == step) return p == 12 ? 1030.0 : 1000.0;
    if (request.targets == side) return p == 11 ? 1050.0 : 1000.0;
    if (request.targets.front() == 0 && request.targets.back() == 11) return 1000.0;
    return p >= 12 ? 1100.0 : 1000.0;
  });
  SearchOptions options;
  options.max_repetitions = 20;
  std::vector<Measurement> log;
  auto outcome = RunSearch(Commits(16), options, &log, sim.Fn(), {});
  ASSERT_TRUE(outcome.has_value()) << outcome.error().ToString();
  const Report& r = outcome->report;
  ASSERT_EQ(r.culprits.size(), 1u);
  EXPECT_EQ(r.culprits[0].sha, Commits(16)[12].sha);
  std::size_t in_side = 0;
  for (const ProbeRecord& p : r.probes) in_side += p.position < 11 ? 1 : 0;
  bool given_up = false;
  for (const std::string& w : r.warnings) {
    given_up = given_up || w.find("is not searched further") != std::string::npos;
  }
  EXPECT_TRUE(given_up) << ReportJson(r).dump(1);
  EXPECT_LE(in_side, 4u) << ReportJson(r).dump(1);  // the first window's probes below 11, + 1
}

TEST(BisectDriver, BadOptionsAreRefused) {
  std::vector<Measurement> log;
  SearchOptions options;
  options.repetitions = 1;
  EXPECT_FALSE(RunSearch(Commits(8), options, &log, {}, {}).has_value());
  EXPECT_FALSE(RunSearch(Commits(0), {}, &log, {}, {}).has_value());
}

TEST(BisectDriver, JsonReadsBackWhatItWrote) {
  Simulator sim([](std::size_t p) { return p >= 5 ? 1100.0 : 1000.0; }, {3});
  std::vector<Measurement> log;
  auto outcome = RunSearch(Commits(8), {}, &log, sim.Fn(), {});
  ASSERT_TRUE(outcome.has_value());
  for (const Measurement& m : log) {
    auto back = MeasurementFromJson(json::parse(MeasurementJson(m).dump()));
    ASSERT_TRUE(back.has_value()) << back.error().ToString();
    EXPECT_EQ(MeasurementJson(*back), MeasurementJson(m));
  }
  auto report = ReportFromJson(json::parse(ReportJson(outcome->report).dump()));
  ASSERT_TRUE(report.has_value());
  EXPECT_EQ(ReportJson(*report), ReportJson(outcome->report));
  SearchOptions options;
  options.threshold = 0.03;
  options.max_repetitions = 40;
  auto parsed = SearchOptionsFromJson(SearchOptionsJson(options));
  ASSERT_TRUE(parsed.has_value());
  EXPECT_EQ(SearchOptionsJson(*parsed), SearchOptionsJson(options));
}

TEST(BisectDriver, MalformedJsonNamesTheField) {
  Measurement made;
  made.request.targets = {0, 4};
  made.request.repetitions = 2;
  made.results.resize(2);
  made.results[0].samples = {1, 2};
  made.results[1].samples = {3, 4};
  made.suite = "s";
  made.metric = "m";
  json m = MeasurementJson(made);
  ASSERT_TRUE(MeasurementFromJson(m).has_value());
  json bad = m;
  bad["results"].erase(1);
  EXPECT_EQ(MeasurementFromJson(bad).error().field, "measurement.results");
  bad = m;
  bad["results"][0]["samples"] = json::array({1, "x"});
  EXPECT_EQ(MeasurementFromJson(bad).error().field, "measurement.results[0].samples");
  bad = m;
  bad["results"][1]["samples"] = json::array();
  EXPECT_EQ(MeasurementFromJson(bad).error().field, "measurement.results[1].samples");
  bad = m;
  bad["direction"] = "sideways";
  EXPECT_EQ(MeasurementFromJson(bad).error().field, "measurement.direction");
  bad = m;
  bad["request"]["targets"] = json::array();
  EXPECT_EQ(MeasurementFromJson(bad).error().field, "request.targets");
  EXPECT_EQ(SearchOptionsFromJson({{"treshold", 0.05}}).error().field, "options.treshold");
  EXPECT_EQ(SearchOptionsFromJson({{"repetitions", "ten"}}).error().field, "options.repetitions");
  EXPECT_EQ(SearchOptionsFromJson({{"alpha", 2.0}}).error().field, "options.alpha");
}

}  // namespace
}  // namespace perfwarden::bisect
