// SPDX-License-Identifier: Apache-2.0
#include "bisect/report.h"

namespace perfwarden::bisect {

using nlohmann::json;
using nlohmann::ordered_json;

ordered_json ReportJson(const Report& r) {
  ordered_json culprits = ordered_json::array();
  for (const Culprit& c : r.culprits) {
    culprits.push_back({{"sha", c.sha},
                        {"author", c.author},
                        {"subject", c.subject},
                        {"exact", c.exact},
                        {"candidates", c.candidates},
                        {"magnitude", c.magnitude},
                        {"ci", {c.ci_low, c.ci_high}},
                        {"share", c.share}});
  }
  ordered_json probes = ordered_json::array();
  for (const ProbeRecord& p : r.probes) {
    probes.push_back({{"position", p.position},
                      {"sha", p.sha},
                      {"subject", p.subject},
                      {"n", p.n},
                      {"median", p.median},
                      {"verdict", p.verdict},
                      {"reason", p.reason}});
  }
  return {{"good", r.good_sha},
          {"bad", r.bad_sha},
          {"suite", r.suite},
          {"benchmarks", r.benchmarks},
          {"metric", r.metric},
          {"commits", r.commits},
          {"endpoints",
           {{"reproduced", r.endpoints.reproduced},
            {"outcome", std::string(ReproductionName(r.endpoints.outcome))},
            {"change", r.endpoints.change},
            {"ci", {r.endpoints.ci_low, r.endpoints.ci_high}},
            {"confidence", r.endpoints.confidence},
            {"p_value", r.endpoints.p_value},
            {"repetitions", r.endpoints.repetitions},
            {"repetitions_needed", r.endpoints.repetitions_needed},
            {"reason", r.endpoints.reason}}},
          {"culprits", culprits},
          {"probes", probes},
          {"expected_probes", r.expected_probes},
          {"measurements", r.measurements},
          {"builds", r.builds},
          {"runs", r.runs},
          {"resumed", r.resumed},
          {"resumed_measurements", r.resumed_measurements},
          {"posted", r.posted},
          {"warnings", r.warnings}};
}

Result<Report> ReportFromJson(const json& j) {
  if (!j.is_object()) return InvalidArgument("must be an object", "report");
  Report r;
  std::string field;
  try {
    field = "good";
    r.good_sha = j.at("good").get<std::string>();
    field = "bad";
    r.bad_sha = j.at("bad").get<std::string>();
    field = "suite";
    r.suite = j.value("suite", "");
    field = "metric";
    r.metric = j.value("metric", "");
    field = "benchmarks";
    r.benchmarks = j.value("benchmarks", std::vector<std::string>{});
    field = "commits";
    r.commits = j.value("commits", std::size_t{0});
    field = "endpoints";
    const json& e = j.value("endpoints", json::object());
    r.endpoints.reproduced = e.value("reproduced", false);
    // A report written before "outcome" existed knew only reproduced or not.
    const std::string outcome = e.value(
        "outcome",
        std::string(ReproductionName(r.endpoints.reproduced ? Reproduction::kReproduced
                                                            : Reproduction::kNotReproduced)));
    const auto parsed = ParseReproduction(outcome);
    if (!parsed || (*parsed == Reproduction::kReproduced) != r.endpoints.reproduced) {
      return InvalidArgument(
          "must be reproduced, not_reproduced or undecided, and agree with "
          "endpoints.reproduced",
          "endpoints.outcome");
    }
    r.endpoints.outcome = *parsed;
    r.endpoints.change = e.value("change", 0.0);
    const std::vector<double> ends_ci = e.value("ci", std::vector<double>{0, 0});
    if (ends_ci.size() == 2) {
      r.endpoints.ci_low = ends_ci[0];
      r.endpoints.ci_high = ends_ci[1];
    }
    r.endpoints.confidence = e.value("confidence", 0.0);
    r.endpoints.p_value = e.value("p_value", 1.0);
    r.endpoints.repetitions = e.value("repetitions", 0);
    r.endpoints.repetitions_needed = e.value("repetitions_needed", 0);
    r.endpoints.reason = e.value("reason", "");
    field = "culprits";
    for (const json& c : j.value("culprits", json::array())) {
      Culprit culprit;
      culprit.sha = c.at("sha").get<std::string>();
      culprit.author = c.value("author", "");
      culprit.subject = c.value("subject", "");
      culprit.exact = c.value("exact", true);
      culprit.candidates = c.value("candidates", std::vector<std::string>{});
      culprit.magnitude = c.value("magnitude", 0.0);
      const std::vector<double> ci = c.value("ci", std::vector<double>{0, 0});
      if (ci.size() == 2) {
        culprit.ci_low = ci[0];
        culprit.ci_high = ci[1];
      }
      culprit.share = c.value("share", 1.0);
      r.culprits.push_back(std::move(culprit));
    }
    field = "probes";
    for (const json& p : j.value("probes", json::array())) {
      r.probes.push_back({p.value("position", std::size_t{0}), p.value("sha", ""),
                          p.value("subject", ""), p.value("n", 0), p.value("median", 0.0),
                          p.value("verdict", ""), p.value("reason", "")});
    }
    field = "expected_probes";
    r.expected_probes = j.value("expected_probes", std::size_t{0});
    field = "measurements";
    r.measurements = j.value("measurements", std::size_t{0});
    field = "builds";
    r.builds = j.value("builds", 0);
    field = "runs";
    r.runs = j.value("runs", 0);
    field = "resumed";
    r.resumed = j.value("resumed", false);
    field = "resumed_measurements";
    r.resumed_measurements = j.value("resumed_measurements", std::size_t{0});
    field = "posted";
    r.posted = j.value("posted", 0);
    field = "warnings";
    r.warnings = j.value("warnings", std::vector<std::string>{});
  } catch (const json::exception&) {
    return InvalidArgument("is missing or has the wrong type", field);
  }
  return r;
}

}  // namespace perfwarden::bisect
