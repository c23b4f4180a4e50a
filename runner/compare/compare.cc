#include "runner/compare/compare.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <regex>
#include <set>

namespace perfgate::compare {
namespace {

// Below this many repetitions per side, compare.py also calls its results unreliable.
constexpr size_t kRecommendedMinRepetitions = 9;

SideInfo Describe(const adapters::GbenchFile& file,
                  const std::vector<adapters::MetricSeries>& series) {
  SideInfo info;
  info.source = file.source;
  info.context = file.context;
  info.benchmarks = series.size();
  info.min_repetitions = series.empty() ? 0 : SIZE_MAX;
  for (const auto& s : series) {
    info.min_repetitions = std::min(info.min_repetitions, s.values.size());
    info.max_repetitions = std::max(info.max_repetitions, s.values.size());
    info.skipped += s.skipped;
  }
  return info;
}

std::string Percent(double fraction) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f%%", fraction * 100);
  return buffer;
}

// Warnings about one side's environment, without the file name.
std::vector<std::string> ContextWarnings(const SideInfo& side) {
  std::vector<std::string> warnings;
  const auto& c = side.context;
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
  if (side.skipped > 0) {
    warnings.push_back(std::to_string(side.skipped) +
                       " repetition(s) reported an error or were skipped and are left out");
  }
  return warnings;
}

// One line per warning, naming the side(s) it applies to.
void AddContextWarnings(const SideInfo& base, const SideInfo& contender,
                        std::vector<std::string>& out) {
  auto base_warnings = ContextWarnings(base);
  auto contender_warnings = ContextWarnings(contender);
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
}

}  // namespace

Result<double> ParseThreshold(std::string_view text) {
  std::string_view number = text;
  bool percent = false;
  if (!number.empty() && number.back() == '%') {
    percent = true;
    number.remove_suffix(1);
  }
  double value = 0;
  auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || end != number.data() + number.size() || number.empty() ||
      !std::isfinite(value) || value <= 0) {
    return InvalidArgument("'" + std::string(text) +
                               "' is not a positive percentage such as 5% or "
                               "a fraction such as 0.05",
                           "threshold");
  }
  if (!percent && value >= 1) {
    return InvalidArgument("'" + std::string(text) + "' is ambiguous: write " + std::string(text) +
                               "% for percent, or a fraction below 1",
                           "threshold");
  }
  return percent ? value / 100 : value;
}

Result<CompareReport> Compare(const adapters::GbenchFile& base,
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
      return !std::regex_search(s.benchmark, *filter);
    });
  };
  keep(*base_series);
  keep(*contender_series);

  CompareReport report;
  report.metric = options.metric;
  report.policy = options.policy;
  report.direction = options.direction.value_or(adapters::DefaultDirection(options.metric));
  report.base = Describe(base, *base_series);
  report.contender = Describe(contender, *contender_series);

  std::map<std::string, const adapters::MetricSeries*> by_name;
  for (const auto& s : *contender_series) by_name.emplace(s.benchmark, &s);
  std::set<std::string> paired;
  std::vector<stats::MetricInput> inputs;
  for (const auto& s : *base_series) {
    auto it = by_name.find(s.benchmark);
    if (it == by_name.end()) {
      report.only_in_base.push_back(s.benchmark);
      continue;
    }
    if (!paired.insert(s.benchmark).second) continue;
    if (report.unit.empty()) report.unit = s.unit;
    inputs.push_back({s.benchmark, report.direction, s.values, it->second->values, 0});
  }
  for (const auto& s : *contender_series) {
    if (!paired.count(s.benchmark)) report.only_in_contender.push_back(s.benchmark);
  }
  if (inputs.empty()) {
    return InvalidArgument("no benchmark with metric '" + options.metric + "' is in both " +
                           base.source + " and " + contender.source +
                           (filter ? " (after --filter)" : ""));
  }

  auto verdicts = stats::JudgeMetrics(inputs, options.policy);
  if (!verdicts) return tl::unexpected(verdicts.error());
  report.verdicts = std::move(*verdicts);

  AddContextWarnings(report.base, report.contender, report.warnings);
  if (!base.context.host_name.empty() && !contender.context.host_name.empty() &&
      base.context.host_name != contender.context.host_name) {
    report.warnings.push_back("the two files come from different hosts (" + base.context.host_name +
                              " and " + contender.context.host_name +
                              "): differences may be the machine, not the code");
  }
  if (base.context.library_build_type != contender.context.library_build_type &&
      !base.context.library_build_type.empty() && !contender.context.library_build_type.empty()) {
    report.warnings.push_back("the Google Benchmark library build types differ (" +
                              base.context.library_build_type + " vs " +
                              contender.context.library_build_type + ")");
  }

  // Too few repetitions: say how many power analysis asks for at this run's typical noise.
  std::vector<double> cvs;
  size_t too_few = 0;
  for (const auto& input : inputs) {
    double cv = stats::PooledCv(input.base, input.contender);
    if (std::isfinite(cv)) cvs.push_back(cv);
    if (std::min(input.base.size(), input.contender.size()) < kRecommendedMinRepetitions) {
      ++too_few;
    }
  }
  if (too_few > 0) {
    std::string warning = std::to_string(too_few) + " of " + std::to_string(inputs.size()) +
                          " benchmark(s) have fewer than " +
                          std::to_string(kRecommendedMinRepetitions) + " repetitions on a side";
    if (!cvs.empty()) {
      double typical_cv = stats::Median(cvs);
      int needed = stats::RecommendedRepetitions(options.policy, options.policy.threshold,
                                                 typical_cv, inputs.size());
      if (needed > 0) {
        warning += "; at the median noise of this comparison (CV " + Percent(typical_cv) +
                   ") power analysis asks for about " + std::to_string(needed) +
                   " per side to detect a " + Percent(options.policy.threshold) +
                   " change (--benchmark_repetitions=" + std::to_string(needed) + ")";
      }
    }
    report.warnings.push_back(warning);
  }
  if (!report.only_in_base.empty() || !report.only_in_contender.empty()) {
    report.warnings.push_back(std::to_string(report.only_in_base.size()) +
                              " benchmark(s) only in the base and " +
                              std::to_string(report.only_in_contender.size()) +
                              " only in the contender are not compared");
  }
  return report;
}

int ExitCode(const CompareReport& report) { return report.verdicts.regressions > 0 ? 1 : 0; }

}  // namespace perfgate::compare
