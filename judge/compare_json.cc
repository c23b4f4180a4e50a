// SPDX-License-Identifier: Apache-2.0
#include "judge/compare_json.h"

#include <cmath>
#include <nlohmann/json.hpp>

namespace perfwarden::judge {
namespace {

nlohmann::json Number(double value) {
  if (!std::isfinite(value)) return nullptr;  // JSON has no NaN or infinity
  return value;
}

}  // namespace

std::string CompareReportJson(const CompareReport& report) {
  nlohmann::json root;
  root["metric"] = report.metric;
  root["unit"] = report.unit;
  root["direction"] = std::string(DirectionName(report.direction));
  root["threshold"] = report.policy.threshold;
  root["alpha"] = report.policy.alpha;
  root["test"] = std::string(stats::VerdictTestName(report.policy.test));
  root["confidence"] = report.policy.confidence;
  root["algorithm"] = std::string(stats::kVerdictAlgorithmVersion);
  root["benchmarks"] = nlohmann::json::array();
  for (const auto& m : report.verdicts.metrics) {
    nlohmann::json b;
    b["name"] = m.name;
    b["base"] = {{"n", m.base.n}, {"median", Number(m.base.median)}, {"cv", Number(m.base.cv)}};
    b["contender"] = {{"n", m.contender.n},
                      {"median", Number(m.contender.median)},
                      {"cv", Number(m.contender.cv)}};
    b["change"] = Number(m.change);
    b["change_ci"] = {Number(m.change_ci.lower), Number(m.change_ci.upper)};
    b["p_welch"] = Number(m.p_welch);
    b["p_welch_log"] = Number(m.p_welch_log);
    b["p_utest"] = Number(m.p_utest);
    b["p_adjusted"] = Number(m.p_adjusted);
    b["verdict"] = std::string(stats::VerdictName(m.verdict));
    b["hodges_lehmann"] = Number(m.hodges_lehmann);
    b["cohens_d"] = Number(m.cohens_d);
    b["repetitions_needed"] = m.repetitions_needed;
    b["reason"] = m.reason;
    root["benchmarks"].push_back(std::move(b));
  }
  const auto& suite = report.verdicts.suite;
  root["suite"] = {{"geomean_ratio", Number(suite.geomean_ratio)},
                   {"ci", {Number(suite.ci.lower), Number(suite.ci.upper)}},
                   {"count", suite.count}};
  root["counts"] = {{"regression", report.verdicts.regressions},
                    {"improvement", report.verdicts.improvements},
                    {"equivalent", report.verdicts.equivalent},
                    {"inconclusive", report.verdicts.inconclusive}};
  root["only_in_base"] = report.only_in_base;
  root["only_in_contender"] = report.only_in_contender;
  root["warnings"] = report.warnings;
  return root.dump(2) + "\n";
}

}  // namespace perfwarden::judge
