// SPDX-License-Identifier: Apache-2.0
#include "runner/compare/compare.h"

#include <algorithm>
#include <cstdio>
#include <regex>

namespace perfwarden::compare {
namespace {

// Warnings about one side's environment, without the file name.
std::vector<std::string> ContextWarnings(const adapters::GbenchContext& c, int64_t skipped) {
  std::vector<std::string> warnings;
  if (c.library_build_type == "debug") {
    warnings.push_back(
        "the Google Benchmark library reports a debug build (library_build_type: debug; "
        "Debian's libbenchmark does); if the benchmarked code was built without optimisation "
        "too, its timings are not representative");
  }
  if (c.cpu_scaling_enabled.value_or(false)) {
    warnings.push_back(
        "CPU frequency scaling was enabled (cpu_scaling_enabled: true); timings are noisier; "
        "use the performance governor on benchmark hosts");
  }
  if (!c.load_avg.empty() && c.num_cpus > 0 &&
      c.load_avg.front() > 0.5 * static_cast<double>(c.num_cpus)) {
    char buffer[160];
    std::snprintf(buffer, sizeof buffer,
                  "the host was busy (1-minute load average %.2f on %lld CPUs); timings are "
                  "noisier",
                  c.load_avg.front(), static_cast<long long>(c.num_cpus));
    warnings.push_back(buffer);
  }
  if (skipped > 0) {
    warnings.push_back(std::to_string(skipped) +
                       " repetition(s) reported an error or were skipped and are left out");
  }
  return warnings;
}

// The files' environments: one line per warning, naming the side(s) it applies to.
std::vector<std::string> EnvironmentWarnings(const adapters::GbenchFile& base,
                                             const adapters::GbenchFile& contender,
                                             const judge::CompareReport& report) {
  std::vector<std::string> out;
  auto base_warnings = ContextWarnings(base.context, report.base.skipped);
  auto contender_warnings = ContextWarnings(contender.context, report.contender.skipped);
  for (const auto& w : base_warnings) {
    bool both = std::find(contender_warnings.begin(), contender_warnings.end(), w) !=
                contender_warnings.end();
    out.push_back((both ? base.source + " and " + contender.source : base.source) + ": " + w);
  }
  for (const auto& w : contender_warnings) {
    if (std::find(base_warnings.begin(), base_warnings.end(), w) == base_warnings.end()) {
      out.push_back(contender.source + ": " + w);
    }
  }
  if (!base.context.host_name.empty() && !contender.context.host_name.empty() &&
      base.context.host_name != contender.context.host_name) {
    out.push_back("the two files come from different hosts (" + base.context.host_name + " and " +
                  contender.context.host_name + "): differences may be the machine, not the code");
  }
  if (base.context.library_build_type != contender.context.library_build_type &&
      !base.context.library_build_type.empty() && !contender.context.library_build_type.empty()) {
    out.push_back("the Google Benchmark library build types differ (" +
                  base.context.library_build_type + " vs " + contender.context.library_build_type +
                  ")");
  }
  return out;
}

// One file's series of the metric as the judge pairs them: by benchmark name (the suite is the
// file: "" in every key), with the comparison's direction; the values stay in `series`.
std::vector<judge::Series> AsSeries(const std::vector<adapters::MetricSeries>& series,
                                    Direction direction) {
  std::vector<judge::Series> out;
  out.reserve(series.size());
  for (const adapters::MetricSeries& s : series) {
    out.push_back({.key = s.key, .unit = s.unit, .direction = direction, .values = s.values});
  }
  return out;
}

int64_t Skipped(const std::vector<adapters::MetricSeries>& series) {
  int64_t skipped = 0;
  for (const auto& s : series) skipped += s.skipped;
  return skipped;
}

}  // namespace

Result<judge::CompareReport> Compare(const adapters::GbenchFile& base,
                                     const adapters::GbenchFile& contender,
                                     const CompareOptions& options) {
  if (auto valid = stats::ValidatePolicy(options.policy); !valid) {
    return tl::unexpected(valid.error());
  }
  std::optional<std::regex> filter;
  if (!options.filter.empty()) {
    try {
      filter.emplace(options.filter, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgument(
          "'" + options.filter + "' is not a valid regular expression: " + e.what(), "filter");
    }
  }
  auto base_series = adapters::CollectMetric(base, options.metric);
  if (!base_series) return tl::unexpected(base_series.error());
  auto contender_series = adapters::CollectMetric(contender, options.metric);
  if (!contender_series) return tl::unexpected(contender_series.error());

  auto keep = [&](std::vector<adapters::MetricSeries>& series) {
    if (!filter) return;
    std::erase_if(series, [&](const adapters::MetricSeries& s) {
      return !std::regex_search(s.key.benchmark, *filter);
    });
  };
  keep(*base_series);
  keep(*contender_series);

  judge::CompareOptions judge_options;
  judge_options.metric = options.metric;
  judge_options.direction = options.direction.value_or(adapters::DefaultDirection(options.metric));
  judge_options.policy = options.policy;
  judge_options.name = judge::StatsName::kBenchmark;
  judge_options.advise_repetitions = true;
  const auto base_pairs = AsSeries(*base_series, judge_options.direction);
  const auto contender_pairs = AsSeries(*contender_series, judge_options.direction);
  auto report =
      judge::Compare(base.source, base_pairs, contender.source, contender_pairs, judge_options);
  if (!report) return tl::unexpected(report.error());
  if (report->verdicts.metrics.empty()) {
    return InvalidArgument("no benchmark with metric '" + options.metric + "' is in both " +
                           base.source + " and " + contender.source +
                           (filter ? " (after --filter)" : ""));
  }
  report->base.skipped = Skipped(*base_series);
  report->contender.skipped = Skipped(*contender_series);
  auto environment = EnvironmentWarnings(base, contender, *report);
  report->warnings.insert(report->warnings.begin(), environment.begin(), environment.end());
  return report;
}

}  // namespace perfwarden::compare
