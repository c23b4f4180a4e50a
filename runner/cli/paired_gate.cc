// SPDX-License-Identifier: Apache-2.0
#include "runner/cli/paired_gate.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <random>

#include "runner/git/git_repo.h"
#include "runner/run/paired_session.h"
#include "runner/run/upload.h"
#include "runner/telemetry/host.h"

namespace perfwarden::cli {
namespace {

namespace fs = std::filesystem;

void Progress(const std::string& line) { std::fprintf(stderr, "perfwarden: %s\n", line.c_str()); }

bool Inside(const fs::path& path, const fs::path& root) {
  const fs::path relative = path.lexically_normal().lexically_relative(root.lexically_normal());
  return !relative.empty() && *relative.begin() != "..";
}

}  // namespace

std::string WhyNotPaired(const config::RunnerConfig& config, const run::BenchmarkSelection& gated) {
  auto repo = git::Repository::Open(config.base_dir.string());
  if (!repo) return "no git repository holds " + config.base_dir.string();
  const fs::path root = repo->WorkDir();
  for (const config::Suite& suite : config.suites) {
    if (!gated.empty() && gated.count(suite.name) == 0) continue;
    if (suite.type != config::SuiteType::kGbench) continue;
    if (suite.build.empty()) {
      return "suite " + suite.name + " has no build command, so the baseline cannot be built";
    }
    if (root.empty() || !Inside(suite.binary, root)) {
      return "suite " + suite.name + "'s binary " + suite.binary.string() +
             " is outside the repository, so both sides would run the same binary";
    }
  }
  return "";
}

Result<std::string> PairedBaselineCommit(const config::RunnerConfig& config,
                                         const run::LastRun& last) {
  if (!last.merge_base.empty()) return last.merge_base;
  auto repo = git::Repository::Open(config.base_dir.string());
  if (!repo) return tl::unexpected(repo.error());
  const std::string head = last.commit.empty() ? "HEAD" : last.commit;
  const std::string target = last.target_branch.empty() ? config.target_branch : last.target_branch;
  auto base = repo->MergeBase(head, target);
  if (!base) return tl::unexpected(base.error());
  auto head_sha = repo->ResolveSha(head);
  if (!head_sha) return tl::unexpected(head_sha.error());
  if (*base != *head_sha) return base;
  // A run of the target branch (or of a commit already merged into it): its first parent.
  auto info = repo->Describe(*head_sha);
  if (!info) return tl::unexpected(info.error());
  if (info->parents.empty()) {
    return InvalidArgument("commit " + head_sha->substr(0, 12) + " is on " + target +
                           " and has no parent to measure it against");
  }
  return info->parents.front();
}

Result<wire::PairedMeasurement> MeasureForGate(const config::RunnerConfig& config,
                                               const PairedGateRequest& request) {
  std::string baseline = request.baseline_commit;
  if (baseline.empty()) {
    auto found = PairedBaselineCommit(config, request.last);
    if (!found) return tl::unexpected(found.error());
    baseline = *found;
  }
  run::PairedRequest paired;
  paired.baseline_commit = baseline;
  paired.gated = request.gated;
  if (paired.gated.empty()) {
    for (const config::Suite& suite : config.suites) paired.gated[suite.name];
  }
  paired.testbed = request.last.testbed;
  if (paired.testbed.name.empty()) paired.testbed.name = config.testbed;
  if (paired.testbed.fingerprint_json.empty()) {
    paired.testbed.fingerprint_json = run::TestbedFingerprint(telemetry::CaptureHost());
  }
  paired.parameters = request.parameters;
  paired.parameters.contender_runs.clear();
  const config::GateSettings& s = request.settings;
  paired.design.repetitions = s.block_repetitions;
  paired.design.min_blocks = s.min_blocks;
  paired.design.max_blocks = s.max_blocks;
  paired.design.test = s.test;
  paired.design.spending = s.spending;
  paired.interleave = s.interleave == "repetition"  ? run::PairedOptions::Interleave::kRepetition
                      : s.interleave == "benchmark" ? run::PairedOptions::Interleave::kBenchmark
                                                    : run::PairedOptions::Interleave::kSuite;
  // A new order per gate, written into the measurement so that the verdict can be replayed.
  paired.design.seed = std::random_device{}() & 0x7fffffffu;
  paired.budget = std::chrono::seconds(s.time_budget_s);
  paired.baseline_cache = run::BaselineCacheOf(config, s);

  Progress("measuring side by side on this host: the baseline " + baseline.substr(0, 12) +
           " and this build, " + std::to_string(paired.gated.size()) + " suite(s), blocks of " +
           std::to_string(s.block_repetitions) + " repetitions of each side, " +
           std::to_string(s.min_blocks) + ".." + std::to_string(s.max_blocks) + " blocks");
  auto measured = run::MeasurePaired(config, paired, Progress);
  if (!measured) return tl::unexpected(measured.error());
  measured->amends = request.amends;
  return measured;
}

Result<void> SaveMeasurement(const wire::PairedMeasurement& measurement, const std::string& path) {
  std::ofstream out(path, std::ios::trunc);
  out << wire::EncodePairedMeasurement(measurement) << "\n";
  out.close();
  if (!out) return MakeError(ErrorCode::kUnavailable, "cannot write " + path, "save-measurement");
  return {};
}

tl::expected<wire::Verdict, PairedGateError> GatePaired(const config::RunnerConfig& config,
                                                        client::ProjectClient& server,
                                                        const PairedGateRequest& request,
                                                        const std::string& save) {
  auto measured = MeasureForGate(config, request);
  if (!measured) return tl::unexpected(PairedGateError{true, measured.error()});
  if (!save.empty()) {
    if (auto saved = SaveMeasurement(*measured, save); !saved) {
      return tl::unexpected(PairedGateError{false, saved.error()});
    }
  }
  auto verdict = server.PostPairedVerdict(request.run_id, *measured);
  if (!verdict) return tl::unexpected(PairedGateError{false, verdict.error()});
  return std::move(*verdict);
}

wire::VerdictRequest GateParameters(const config::RunnerConfig& config) {
  wire::VerdictRequest body;
  body.threshold = config::kDefaultThresholdPercent / 100;
  body.alpha = config::kDefaultAlpha;
  body.rules = config.thresholds;
  return body;
}

std::vector<wire::ResultSeries> HeadSeries(const wire::PairedMeasurement& measurement) {
  std::vector<wire::ResultSeries> out;
  out.reserve(measurement.series.size());
  for (const wire::PairedSeries& s : measurement.series) {
    wire::ResultSeries series{s.key, s.unit, s.direction, {}};
    for (const wire::PairedBlock& block : s.blocks) {
      series.values.insert(series.values.end(), block.head.begin(), block.head.end());
    }
    if (!series.values.empty()) out.push_back(std::move(series));
  }
  return out;
}

namespace {

fs::path KeptPath(const config::RunnerConfig& config) {
  return config.spool_dir.parent_path() / "paired-run.json";
}

// What `perfwarden gate` would measure with, as the measurement records it.
bool SameDesign(const wire::PairedDesign& d, const config::GateSettings& s) {
  return d.repetitions == s.block_repetitions && d.min_blocks == s.min_blocks &&
         d.max_blocks == s.max_blocks && d.test == s.test && d.spending == s.spending;
}

}  // namespace

std::string WhyNotMeasuredWith(const wire::PairedMeasurement& measurement,
                               const config::GateSettings& settings,
                               const wire::VerdictRequest& parameters) {
  if (!SameDesign(measurement.design, settings)) {
    return "it was measured with other gate settings (blocks, looks or test)";
  }
  if (!(measurement.parameters == parameters)) return "it was measured with other thresholds";
  return "";
}

Result<void> KeepPairedRun(const config::RunnerConfig& config, const std::string& run_id,
                           const wire::PairedMeasurement& measurement) {
  const fs::path path = KeptPath(config);
  const std::string text = "{\"run_id\":" + nlohmann::json(run_id).dump() +
                           ",\"measurement\":" + wire::EncodePairedMeasurement(measurement) + "}\n";
  std::ofstream out(path, std::ios::trunc);
  out << text;
  out.close();
  if (!out) return MakeError(ErrorCode::kUnavailable, "cannot write " + path.string());
  return {};
}

std::optional<wire::PairedMeasurement> KeptPairedRun(const config::RunnerConfig& config,
                                                     const std::string& run_id,
                                                     const config::GateSettings& settings,
                                                     const wire::VerdictRequest& parameters,
                                                     std::string* why) {
  why->clear();
  std::ifstream in(KeptPath(config));
  if (!in) return std::nullopt;
  const nlohmann::json kept = nlohmann::json::parse(in, nullptr, false);
  if (!kept.is_object() || kept.value("run_id", "") != run_id || !kept.contains("measurement")) {
    return std::nullopt;  // another run's, or unreadable: measure
  }
  auto measurement = wire::DecodePairedMeasurement(kept["measurement"].dump());
  if (!measurement) {
    *why = "the kept measurement is unreadable (" + measurement.error().ToString() + ")";
    return std::nullopt;
  }
  *why = WhyNotMeasuredWith(*measurement, settings, parameters);
  if (!why->empty()) return std::nullopt;
  return std::move(*measurement);
}

}  // namespace perfwarden::cli
