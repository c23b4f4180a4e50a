// SPDX-License-Identifier: Apache-2.0
// A paired verdict (baseline and pull request measured side by side in blocks) in every rendering
// of `perfwarden gate`: the same outcome and rows, one line saying how it was measured, UNSTABLE
// rows listed after INCONCLUSIVE with their noise and the blocks that would decide them, and
// UNSTABLE never failing. tests/fixtures/verdicts/paired.json is this file's PairedSample() as
// wire::EncodeVerdict writes it (the golden renderings in gate_report_test.cc and the dashboard's
// browser test read it).
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/report/verdict_model.h"
#include "runner/report/verdict_render.h"
#include "tests/testing/oracle_csv.h"
#include "wire/verdict.h"

namespace perfwarden::report {
namespace {

using perfwarden::testing::FixturePath;
using perfwarden::testing::ReadFile;
using wire::Interval;
using wire::MetricResult;
using wire::Outcome;
using wire::PairedDetail;
using wire::PairedSummary;
using wire::ResultKind;
using wire::Summary;
using wire::Verdict;

MetricResult Row(std::string benchmark, std::string metric, ResultKind kind, double change,
                 Interval ci, double p) {
  MetricResult r;
  r.key = {"gbench_sample", std::move(benchmark), std::move(metric)};
  r.unit = "ns";
  r.kind = kind;
  r.base = Summary{65, 1000.0, 0.02};
  r.current = Summary{65, 1000.0 * (1 + change), 0.02};
  r.change = change;
  r.change_ci = ci;
  r.p_value = p / 2;
  r.p_adjusted = p;
  PairedDetail d;
  d.blocks = 13;
  d.noise = 0.021;
  d.drift = 0.094;
  d.t_ci = ci;
  d.bootstrap_ci = Interval{ci.lower + 0.001, ci.upper - 0.001};
  d.median_change = change + 0.001;
  d.hodges_lehmann = change - 0.001;
  d.p_t = p / 2;
  d.p_wilcoxon = 0.0012;
  d.p_sign = 0.0034;
  r.paired = d;
  return r;
}

// A run measured side by side until the time budget ran out at the third of five looks: one
// regression and one improvement decided early, one equivalent, one row left UNSTABLE.
Verdict PairedSample() {
  Verdict v;
  v.id = 57;
  v.run_id = "6f1c0c4e-2b1a-4c7e-9d3f-0a1b2c3d4e5f";
  v.created_at = "2024-05-02T09:30:00Z";
  v.outcome = Outcome::kRegression;
  v.algorithm_version = "perfwarden-paired/1";
  v.parameters.test = "t";
  v.parameters.correction = "holm";
  v.parameters.bootstrap_resamples = 2000;
  v.parameters.seed = 42;
  v.contender_run_ids = {v.run_id};
  v.commit = "89abcdef0123456789abcdef0123456789abcdef";
  v.branch = "faster-hash";
  v.testbed = "ci-x86-1";
  v.pr = 42;
  v.report_url =
      "https://perf.example.com/#/p/demo/runs/6f1c0c4e-2b1a-4c7e-9d3f-0a1b2c3d4e5f/verdict";

  MetricResult regression =
      Row("BM_Sort/16384", "real_time", ResultKind::kRegression, 0.0997, {0.081, 0.117}, 3.4e-5);
  regression.reason = "slower by 9.97% (threshold 5%) at look 1, adjusted p 3.4e-5";
  regression.current->median = 1099.7;
  regression.paired->blocks = 6;
  regression.paired->decided_at_look = 0;
  MetricResult improvement =
      Row("BM_Copy/4096", "bytes_per_second", ResultKind::kImprovement, 0.12, {0.09, 0.15}, 2.0e-4);
  improvement.unit = "bytes/s";
  improvement.direction = Direction::kHigherIsBetter;
  improvement.paired->blocks = 9;
  improvement.paired->decided_at_look = 1;
  MetricResult equivalent =
      Row("BM_Sort/1024", "real_time", ResultKind::kEquivalent, 0.004, {-0.01, 0.018}, 0.61);
  equivalent.paired->decided_at_look = 2;
  MetricResult unstable =
      Row("BM_Hash/64", "real_time", ResultKind::kUnstable, 0.031, {-0.052, 0.121}, 0.38);
  unstable.reason = "undecided when the time budget ran out";
  unstable.paired->noise = 0.081;
  unstable.paired->blocks_needed = 92;
  unstable.repetitions_needed = 92 * 5;
  v.results = {equivalent, unstable, improvement, regression};
  v.counts = {.regression = 1, .improvement = 1, .equivalent = 1, .unstable = 1};

  PairedSummary p;
  p.baseline_commit = "0123456789abcdef0123456789abcdef01234567";
  // The design of the fixture (written before the trimmed test and blocks of one).
  p.design.repetitions = 5;
  p.design.min_blocks = 6;
  p.design.max_blocks = 30;
  p.design.test = "t";
  p.design.seed = 42;
  p.design.stopped = "time_budget";
  p.measured = 4;
  p.look = 2;
  p.looks = 5;
  p.blocks = 13;
  p.geomean_change = 0.021;
  p.geomean_ci = Interval{0.004, 0.039};
  v.paired = p;
  return v;
}

// The sample as `perfwarden gate --confirm` leaves it: the unpaired verdict #41 (with its baseline
// run) with two of its rows re-measured side by side.
Verdict AmendingSample() {
  Verdict v = PairedSample();
  v.paired->amends = 41;
  v.paired->measured = 2;
  v.paired->design.stopped = "decided";
  wire::Baseline b;
  b.commit = v.paired->baseline_commit;
  b.branch = "main";
  b.testbed = "ci-x86-1";
  b.run_ids = {"11111111-2222-4333-8444-555555555555"};
  b.selection = "merge_base";
  v.baseline = b;
  return v;
}

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST(PairedFixture, IsTheSampleAsTheEncoderWritesIt) {
  const std::string path = FixturePath("verdicts/paired.json");
  const std::string encoded = wire::EncodeVerdict(PairedSample()).dump(2) + "\n";
  if (std::getenv("PERFWARDEN_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(path, std::ios::binary) << encoded;
  }
  EXPECT_EQ(ReadFile(path), encoded);
  const auto decoded = wire::DecodeVerdict(ReadFile(path));
  ASSERT_TRUE(decoded.has_value()) << decoded.error().ToString();
  EXPECT_EQ(*decoded, PairedSample());
}

TEST(OrderedResults, ListsUnstableAfterInconclusive) {
  Verdict v = PairedSample();
  MetricResult inconclusive = v.results[0];
  inconclusive.key.benchmark = "BM_Zip";
  inconclusive.kind = ResultKind::kInconclusive;
  v.results.push_back(inconclusive);
  std::vector<std::string> names;
  for (const MetricResult* r : OrderedResults(v)) names.push_back(r->key.benchmark);
  EXPECT_EQ(names, (std::vector<std::string>{"BM_Sort/16384", "BM_Zip", "BM_Hash/64",
                                             "BM_Copy/4096", "BM_Sort/1024"}));
}

TEST(RenderText, ShowsHowAPairedVerdictWasMeasuredAndItsUnstableRows) {
  const std::string text = RenderText(PairedSample());
  EXPECT_TRUE(
      text.starts_with("perfwarden: REGRESSION \u2014 1 of 4 benchmark metrics slower than "
                       "its threshold\n"))
      << text;
  EXPECT_NE(text.find("\nbaseline: 0123456, measured side by side (no baseline run)\n"
                      "paired: measured side by side on this host against 0123456789ab: 13 "
                      "blocks of 5 repetitions each (look 3 of 5), stopped: time_budget (the time "
                      "budget ran out); geomean change +2.10% [+0.4, +3.9]\n"
                      "1 regression, 1 unstable, 1 improvement, 1 equivalent\n"),
            std::string::npos)
      << text;
  // The table lists the regression, then the unstable row, then the decided others.
  const size_t regression = text.find("\nBM_Sort/16384 ");
  const size_t unstable = text.find("\nBM_Hash/64 ");
  const size_t improvement = text.find("\nBM_Copy/4096 ");
  ASSERT_NE(regression, std::string::npos);
  EXPECT_LT(regression, unstable);
  EXPECT_LT(unstable, improvement);
  EXPECT_NE(text.find("+3.10% [-5.2, +12.1]"), std::string::npos);
  EXPECT_NE(text.find("  UNSTABLE BM_Hash/64 [real_time]: undecided when the time budget ran out "
                      "(noise 8.1% per block; ~92 blocks (460 repetitions) would decide it)\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("UNSTABLE results do not fail the job: to decide them, raise the "
                      "repetitions per block or max_blocks, quiet the benchmark, or give it its "
                      "own threshold rule."),
            std::string::npos);
  EXPECT_NE(RenderText(PairedSample(), {.color = true}).find("\x1b[33mUNSTABLE\x1b[0m"),
            std::string::npos);

  const std::string amending = RenderText(AmendingSample());
  EXPECT_NE(amending.find("\nbaseline: 0123456 on main, selected as the merge-base (distance 0), "
                          "1 run on ci-x86-1\npaired: re-measured 2 rows side by side on this "
                          "host against 0123456789ab (amending verdict #41): 13 blocks of 5 "
                          "repetitions each (look 3 of 5), stopped: decided; "),
            std::string::npos)
      << amending;
}

TEST(RenderMarkdown, ShowsHowAPairedVerdictWasMeasuredAndItsUnstableRows) {
  const std::string md = RenderMarkdown(PairedSample(), {.comment = true, .project = "demo"});
  EXPECT_NE(md.find("### perfwarden: **Regression**\n\n1 of 4 benchmark metrics slower than its "
                    "threshold \u2014 `faster-hash` at 89abcde on `ci-x86-1`, PR \\#42.\n\n"
                    "Measured side by side on this host against 0123456789ab: 13 blocks of 5 "
                    "repetitions each (look 3 of 5), stopped: time\\_budget (the time budget ran "
                    "out); geomean change +2.10% \\[+0.4, +3.9\\].\n"),
            std::string::npos)
      << md;
  // The unstable row is in the first table, with its reason, not folded with the decided rows.
  const size_t details = md.find("<details>");
  const size_t unstable_row = md.find("| `BM_Hash/64` | `real_time` |");
  ASSERT_NE(details, std::string::npos);
  EXPECT_LT(unstable_row, details);
  EXPECT_NE(md.find("| +3.10% \\[-5.2, +12.1\\] | 0.38 | 65/65 | UNSTABLE |"), std::string::npos)
      << md;
  EXPECT_NE(
      md.find("- UNSTABLE **`BM_Hash/64`** \\[`real_time`\\]: undecided when the time budget "
              "ran out (noise 8.1% per block; \\~92 blocks (460 repetitions) would decide it)"),
      std::string::npos)
      << md;
  EXPECT_NE(md.find("| **REGRESSION** |"), std::string::npos);
  EXPECT_NE(md.find("<summary>2 other benchmark metrics</summary>"), std::string::npos);
  EXPECT_NE(md.find("| IMPROVEMENT |"), std::string::npos);
  EXPECT_NE(md.find("UNSTABLE results do not fail the job"), std::string::npos);
  EXPECT_NE(md.find("Baseline: 0123456, measured side by side (no baseline run).  \n"
                    "1 regression, 1 unstable, 1 improvement, 1 equivalent.  \n"),
            std::string::npos)
      << md;

  const std::string amending = RenderMarkdown(AmendingSample());
  EXPECT_NE(amending.find("\nRe-measured 2 rows side by side on this host against 0123456789ab "
                          "(amending verdict \\#\u206041): 13 blocks"),
            std::string::npos)
      << amending;
}

TEST(RenderJUnit, UnstableIsSkippedWithItsNoiseAndNeverAFailure) {
  const std::string xml = RenderJUnit(PairedSample());
  EXPECT_NE(xml.find("<testsuite name=\"perfwarden\" tests=\"4\" failures=\"1\" errors=\"0\" "
                     "skipped=\"1\""),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<testcase classname=\"gbench_sample\" name=\"BM_Hash/64 [real_time]\" "
                     "time=\"0\">\n      <skipped message=\"UNSTABLE: noise 8.1% per block; ~92 "
                     "blocks (460 repetitions) would decide it; not gating\">undecided when the "
                     "time budget ran out\nbaseline 1 us (n=65, cv 2.0%), current 1.031 us (n=65, "
                     "cv 2.0%), change +3.10% [-5.2, +12.1], p=0.19, adjusted p=0.38, 460 "
                     "repetitions would decide it; side by side: 13 blocks, noise 8.1% per block, "
                     "drift 9.4%, median change +3.2%, Hodges-Lehmann +3.0%, p_t=0.19, "
                     "p_wilcoxon=0.0012, p_sign=0.0034</skipped>\n    </testcase>\n"),
            std::string::npos)
      << xml;
  EXPECT_NE(xml.find("<failure message=\"+9.97% (threshold 5%), p=3.4e-5\" type=\"REGRESSION\">"),
            std::string::npos);
  EXPECT_NE(xml.find("<system-out>IMPROVEMENT: "), std::string::npos);
  EXPECT_NE(xml.find("side by side: 6 blocks, noise 2.1% per block"), std::string::npos);
  EXPECT_NE(xml.find("<property name=\"paired\" value=\"measured side by side on this host "
                     "against 0123456789ab: 13 blocks of 5 repetitions each (look 3 of 5), "
                     "stopped: time_budget"),
            std::string::npos);
  EXPECT_EQ(Count(xml, "<testcase "), 4u);

  // Only unstable rows and no regression: nothing fails.
  Verdict calm = PairedSample();
  calm.outcome = Outcome::kPass;
  std::erase_if(calm.results,
                [](const MetricResult& r) { return r.kind == ResultKind::kRegression; });
  calm.counts.regression = 0;
  const std::string passing = RenderJUnit(calm);
  EXPECT_NE(passing.find("tests=\"3\" failures=\"0\" errors=\"0\" skipped=\"1\""),
            std::string::npos);
  EXPECT_EQ(passing.find("<failure"), std::string::npos);
  EXPECT_FALSE(HasRegression(calm));
}

TEST(RenderGitLabMetrics, ListsEveryPairedRowWithItsChange) {
  EXPECT_EQ(RenderGitLabMetrics(PairedSample()),
            "perfwarden_gbench_sample_BM_Copy_4096_bytes_per_second 1120\n"
            "perfwarden_gbench_sample_BM_Copy_4096_bytes_per_second_change_percent 12\n"
            "perfwarden_gbench_sample_BM_Hash_64_real_time 1031\n"
            "perfwarden_gbench_sample_BM_Hash_64_real_time_change_percent 3.1\n"
            "perfwarden_gbench_sample_BM_Sort_1024_real_time 1004\n"
            "perfwarden_gbench_sample_BM_Sort_1024_real_time_change_percent 0.4\n"
            "perfwarden_gbench_sample_BM_Sort_16384_real_time 1099.7\n"
            "perfwarden_gbench_sample_BM_Sort_16384_real_time_change_percent 9.97\n");
}

}  // namespace
}  // namespace perfwarden::report
