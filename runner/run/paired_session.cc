// SPDX-License-Identifier: Apache-2.0
#include "runner/run/paired_session.h"

#include <set>

#include "judge/paired.h"
#include "stats/paired_design.h"

namespace perfwarden::run {
namespace {

using Clock = std::chrono::steady_clock;

bool Open(const stats::PairedMetricVerdict& v) { return v.decided_at_look < 0 && !v.unstable; }

// "3 metrics still undecided: core/BM_Sort/16384 real_time, ..." (the first few).
std::string Undecided(const judge::PairedJudgement& judged) {
  std::string names;
  int count = 0;
  for (const stats::PairedMetricVerdict& v : judged.verdicts.metrics) {
    if (!Open(v)) continue;
    if (++count <= 3) names += (names.empty() ? "" : ", ") + v.name;
  }
  if (count > 3) names += ", ...";
  return std::to_string(count) + " metric(s) still undecided" + (count > 0 ? ": " + names : "");
}

}  // namespace

BenchmarkSelection StillUndecided(const config::RunnerConfig& head,
                                  const judge::PairedJudgement& judged) {
  BenchmarkSelection out;
  for (const judge::PairedRow& row : judged.rows) {
    const stats::PairedMetricVerdict* v = judged.VerdictOf(row);
    if (v == nullptr || !row.gated || !Open(*v)) continue;
    const SeriesKey& key = row.series->key;
    const config::Suite* suite = head.FindSuite(key.suite);
    if (suite != nullptr && suite->type == config::SuiteType::kGbench) {
      out[key.suite].insert(key.benchmark);
    } else {
      out[key.suite];  // command and training suites run whole
    }
  }
  return out;
}

Result<wire::PairedMeasurement> MeasurePaired(const config::RunnerConfig& head,
                                              const PairedRequest& request,
                                              const ProgressLine& progress) {
  wire::PairedMeasurement out;
  out.baseline_commit = request.baseline_commit;
  out.testbed = request.testbed;
  out.parameters = request.parameters;
  out.design = request.design;
  auto policy = judge::PairedPolicyOf(out);
  if (!policy) return tl::unexpected(policy.error());
  const std::vector<int> schedule =
      stats::PairedLookSchedule(policy->min_blocks, policy->max_blocks, policy->growth);

  std::set<std::string> suites;
  for (const auto& [suite, benchmarks] : request.gated) suites.insert(suite);
  auto tree = BaselineTree::Prepare(head, request.baseline_commit, suites, progress,
                                    request.baseline_cache);
  if (!tree) return tl::unexpected(tree.error());

  PairedOptions options;
  options.repetitions = static_cast<int>(request.design.repetitions);
  options.seed = request.design.seed;
  options.interleave = request.interleave;
  PairedMeasurer measurer(head, *tree, options);
  const Clock::time_point start = Clock::now();
  out.design.stopped = "max_blocks";
  // After the first look only the benchmarks with a metric still undecided run again; a decided
  // one's blocks end where it was decided.
  BenchmarkSelection measure = request.gated;
  std::string which = "every gated benchmark";
  for (size_t look = 0; look < schedule.size(); ++look) {
    while (measurer.blocks() < schedule[look]) {
      progress("paired: block " + std::to_string(measurer.blocks() + 1) + " of " +
               std::to_string(schedule[look]) + " (look " + std::to_string(look + 1) + " of " +
               std::to_string(schedule.size()) + ", at most " + std::to_string(schedule.back()) +
               " blocks) of " + which);
      if (auto measured = measurer.MeasureBlock(measure, progress); !measured) {
        return tl::unexpected(measured.error());
      }
    }
    const bool out_of_time = request.budget.count() > 0 && Clock::now() - start >= request.budget;
    out.series = measurer.Series();
    auto judged = judge::JudgePaired(out, *policy, out_of_time);
    if (!judged) return tl::unexpected(judged.error());
    progress("paired: look " + std::to_string(look + 1) + " at " +
             std::to_string(measurer.blocks()) + " blocks: " + Undecided(*judged));
    if (!judged->verdicts.more_blocks_needed) {
      // Metrics left undecided are UNSTABLE: the time or the blocks ran out before they could
      // be decided; otherwise every metric was.
      out.design.stopped = judged->verdicts.unstable == 0 ? "decided"
                           : out_of_time                  ? "time_budget"
                                                          : "max_blocks";
      break;
    }
    measure = StillUndecided(head, *judged);
    size_t benchmarks = 0;
    for (const auto& [suite, names] : measure) benchmarks += names.empty() ? 1 : names.size();
    which = std::to_string(benchmarks) + " undecided benchmark(s) or suite(s)";
  }
  return out;
}

}  // namespace perfwarden::run
