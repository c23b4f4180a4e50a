// SPDX-License-Identifier: Apache-2.0
// `perfwarden compare A.json B.json`: the offline comparison of two Google Benchmark outputs
// (like Google Benchmark's compare.py, with intervals, correction and a three-way verdict).
#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "core/threshold_rule.h"
#include "judge/compare_json.h"
#include "judge/compare_report.h"
#include "runner/adapters/gbench_reader.h"
#include "runner/cli/commands.h"
#include "runner/compare/compare.h"
#include "runner/compare/report_format.h"
#include "stats/multiple_testing.h"

namespace perfwarden::cli {
namespace {

int Fail(const perfwarden::Error& error) {
  std::cerr << "perfwarden: error: " << error.ToString() << "\n";
  return kExitUsage;
}

struct CompareArgs {
  std::string base;
  std::string contender;
  std::string threshold = "5%";
  double alpha = 0.05;
  std::string metric = "real_time";
  std::string direction;
  std::string format = "text";
  std::string test = "utest";
  std::string correction = "holm";
  std::string filter;
  double confidence = 0.95;
  int resamples = 2000;
  uint64_t seed = 0x5eed;
};

int RunCompare(const CompareArgs& args) {
  perfwarden::compare::CompareOptions options;
  auto threshold = perfwarden::ParseThreshold(args.threshold);
  if (!threshold) return Fail(threshold.error());
  options.policy.threshold = *threshold;
  options.policy.alpha = args.alpha;
  options.policy.confidence = args.confidence;
  options.policy.bootstrap_resamples = args.resamples;
  options.policy.seed = args.seed;
  options.policy.test = *perfwarden::stats::ParseVerdictTest(args.test);
  options.policy.correction = *perfwarden::stats::ParseCorrection(args.correction);
  options.metric = args.metric;
  options.filter = args.filter;
  if (!args.direction.empty()) options.direction = perfwarden::ParseDirection(args.direction);

  auto base = perfwarden::adapters::ReadGbenchFile(args.base);
  if (!base) return Fail(base.error());
  auto contender = perfwarden::adapters::ReadGbenchFile(args.contender);
  if (!contender) return Fail(contender.error());
  auto report = perfwarden::compare::Compare(*base, *contender, options);
  if (!report) return Fail(report.error());

  std::string text;
  if (args.format == "json") {
    text = perfwarden::judge::CompareReportJson(*report);
  } else if (args.format == "markdown") {
    text = perfwarden::compare::FormatMarkdown(*report);
  } else {
    text = perfwarden::compare::FormatText(*report);
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
  return perfwarden::judge::ExitCode(*report);
}

}  // namespace

void AddCompareCommand(CLI::App& app, int* exit_code) {
  auto args_ptr = std::make_shared<CompareArgs>();
  CompareArgs& args = *args_ptr;
  CLI::App* compare = app.add_subcommand(
      "compare",
      "Compare two Google Benchmark JSON outputs (like Google Benchmark's compare.py, with "
      "confidence intervals, multiple-comparison correction and a three-way verdict)");
  compare->add_option("base", args.base, "Base results (--benchmark_format=json output; - = stdin)")
      ->required();
  compare->add_option("contender", args.contender, "Contender results")->required();
  compare->add_option("--threshold", args.threshold, "Relative change that matters: 5% or 0.05")
      ->capture_default_str();
  compare->add_option("--alpha", args.alpha, "Family-wise significance level")
      ->check(CLI::Range(1e-12, 0.5))
      ->capture_default_str();
  compare->add_option("--metric", args.metric, "real_time, cpu_time or a user counter name")
      ->capture_default_str();
  compare
      ->add_option("--direction", args.direction,
                   "lower or higher is better (default: by metric name; *_per_second is "
                   "higher)")
      ->check(CLI::IsMember({"lower", "higher"}));
  compare->add_option("--format", args.format, "Output format")
      ->check(CLI::IsMember({"text", "markdown", "json"}))
      ->capture_default_str();
  compare->add_option("--test", args.test, "Significance test of the verdict")
      ->check(CLI::IsMember({"utest", "welch", "welch-log"}))
      ->capture_default_str();
  compare->add_option("--correction", args.correction, "Multiple-comparison correction")
      ->check(
          CLI::IsMember({"holm", "bonferroni", "fdr_bh", "holm-sidak", "sidak", "fdr_by", "none"}))
      ->capture_default_str();
  compare->add_option("--filter", args.filter, "Only benchmarks whose name matches this regex");
  compare->add_option("--confidence", args.confidence, "Confidence level of the intervals")
      ->check(CLI::Range(0.5, 0.9999))
      ->capture_default_str();
  compare->add_option("--resamples", args.resamples, "Bootstrap resamples")
      ->check(CLI::Range(100, 1000000))
      ->capture_default_str();
  compare->add_option("--seed", args.seed, "Bootstrap seed (results are reproducible)")
      ->capture_default_str();

  compare->callback([args_ptr, exit_code]() { *exit_code = RunCompare(*args_ptr); });
}

}  // namespace perfwarden::cli
