// SPDX-License-Identifier: Apache-2.0
#include "runner/run/session.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>

#include "runner/client/spool.h"
#include "runner/run/suites.h"
#include "runner/run/upload.h"
#include "runner/telemetry/ci_env.h"
#include "runner/telemetry/gpu_sampler.h"
#include "runner/telemetry/host.h"
#include "runner/telemetry/nvml.h"

namespace perfwarden::run {
namespace {

namespace fs = std::filesystem;

void Progress(const std::string& line) { std::fprintf(stderr, "perfwarden: %s\n", line.c_str()); }

fs::path LastRunPath(const config::RunnerConfig& config) {
  return config.spool_dir.parent_path() / "last-run.json";
}

// The suite's GPU metrics (benchmark = the suite's name) and, when power or thermal caps slowed
// the GPUs, a warning: such a run measures the host's cooling or power budget, not the code.
void AddGpuTelemetry(const config::Suite& suite, const telemetry::GpuSummary& summary,
                     run::SuiteOutcome& outcome) {
  double samples_per_s = 0;
  for (const wire::ResultSeries& s : outcome.series) {
    if (s.key.metric == "samples_per_s" && !s.values.empty()) samples_per_s = s.values.back();
  }
  for (wire::ResultSeries& s :
       telemetry::GpuSeries(summary, suite.name, suite.name, samples_per_s)) {
    outcome.series.push_back(std::move(s));
  }
  if (summary.Throttled()) {
    outcome.warnings.push_back("suite " + suite.name + ": GPU " + summary.ThrottleNote() +
                               ": its timings measure the host's cooling or power cap, not the "
                               "code");
  }
}

}  // namespace

Result<config::RunnerConfig> LoadConfig(const std::string& path) {
  std::string chosen = path;
  if (chosen.empty()) {
    const char* env = std::getenv("PERFWARDEN_CONFIG");
    chosen = env != nullptr && *env != '\0' ? env : "perfwarden.yaml";
  }
  std::error_code ec;
  if (!fs::exists(chosen, ec)) {
    return InvalidArgument(
        "no " + chosen + " (write one: docs/config.md, \"perfwarden.yaml\"; or pass --config)",
        "config");
  }
  return config::LoadRunnerConfig(chosen);
}

Result<void> RequireServer(const config::RunnerConfig& config) {
  if (config.server.url.empty() || config.server.project.empty()) {
    return InvalidArgument("perfwarden.yaml has no server.url and server.project", "server");
  }
  if (config.server.token.empty()) {
    return InvalidArgument(
        "PERFWARDEN_TOKEN is not set (a project token with the ingest and "
        "read scopes)",
        "PERFWARDEN_TOKEN");
  }
  return {};
}

Result<client::ProjectClient> OpenProjectClient(const std::string& config_path) {
  auto config = LoadConfig(config_path);
  if (!config) return tl::unexpected(config.error());
  if (auto ok = RequireServer(*config); !ok) return tl::unexpected(ok.error());
  return client::ProjectClient::Open(config->server.url, config->server.project,
                                     config->server.token);
}

Result<Measured> MeasureAndSpool(const config::RunnerConfig& config,
                                 const MeasureRequest& request) {
  std::vector<const config::Suite*> suites;
  for (const std::string& name : request.suites) {
    const config::Suite* suite = config.FindSuite(name);
    if (suite == nullptr) return InvalidArgument("perfwarden.yaml has no suite " + name, "suite");
    suites.push_back(suite);
  }
  if (request.suites.empty()) {
    for (const config::Suite& suite : config.suites) {
      if (request.only.empty() || request.only.count(suite.name) != 0) suites.push_back(&suite);
    }
  }
  if (suites.empty()) return InvalidArgument("no suite to run", "suite");

  std::error_code ec;
  fs::path work = config.spool_dir.parent_path() / "work";
  fs::create_directories(work, ec);
  if (ec) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot create " + work.string() + ": " + ec.message());
  }

  Measured measured;
  run::UploadInputs inputs;
  inputs.started_at = run::NowRfc3339();
  inputs.branch = request.branch;
  inputs.target_branch = request.target_branch;
  inputs.ci = telemetry::DetectCi();
  inputs.host = telemetry::CaptureHost();
  // The GPUs, when NVML is there: their fingerprint, and telemetry around every suite.
  std::unique_ptr<telemetry::Nvml> nvml;
  if (auto loaded = telemetry::Nvml::Load(); loaded) {
    nvml = std::move(*loaded);
    const telemetry::GpuFingerprint gpus = nvml->Fingerprint();
    inputs.gpu_fingerprint_json = telemetry::ToJson(gpus);
    Progress("GPU telemetry: " + std::to_string(gpus.gpus.size()) + " x " +
             (gpus.gpus.empty() ? std::string("?") : gpus.gpus.front().name) + ", driver " +
             gpus.driver_version);
  } else if (std::any_of(suites.begin(), suites.end(), [](const config::Suite* s) {
               return s->type == config::SuiteType::kTrain;
             })) {
    Progress("no GPU telemetry: " + loaded.error().message);  // said once, then carry on
  }
  if (request.measured != nullptr) {
    inputs.results = *request.measured;
    suites.clear();
  }
  for (size_t i = 0; i < suites.size(); ++i) {
    const config::Suite& suite = *suites[i];
    Progress("[" + std::to_string(i + 1) + "/" + std::to_string(suites.size()) + "] suite " +
             suite.name + " (" + std::string(config::SuiteTypeName(suite.type)) + ")");
    run::SuiteOptions options;
    options.repetitions = request.repetitions;
    options.work_dir = work;
    options.skip_build = request.skip_build;
    if (auto it = request.only.find(suite.name); it != request.only.end()) {
      options.benchmarks = it->second;
    }
    std::optional<telemetry::GpuSampler> sampler;
    if (nvml) sampler.emplace(*nvml).Start();
    auto outcome = run::RunSuite(config, suite, options, Progress);
    if (!outcome) return tl::unexpected(outcome.error());
    if (sampler) AddGpuTelemetry(suite, sampler->Stop(), *outcome);
    if (!outcome->library_build_type.empty()) {
      inputs.host.library_build_type = outcome->library_build_type;
    }
    if (!outcome->compiler.empty()) inputs.host.compiler = outcome->compiler;
    for (const std::string& w : outcome->warnings) measured.warnings.push_back(w);
    for (auto& s : outcome->series) inputs.results.push_back(std::move(s));
  }
  inputs.finished_at = run::NowRfc3339();

  auto upload = run::BuildUpload(config, inputs, &measured.warnings);
  if (!upload) return tl::unexpected(upload.error());
  // The server applies the same rules; checking here keeps a bad upload out of the spool.
  const std::string text = wire::EncodeRunUpload(*upload);
  if (auto valid = wire::DecodeRunUpload(text); !valid) {
    return MakeError(ErrorCode::kInvalidArgument,
                     "the upload would be rejected: " + valid.error().ToString());
  }
  auto spool = client::Spool::Open(config.spool_dir.string());
  if (!spool) return tl::unexpected(spool.error());
  auto put = spool->Put(upload->id, text);
  if (!put) return tl::unexpected(put.error());
  nlohmann::json fingerprint =
      nlohmann::json::parse(upload->testbed.fingerprint_json, nullptr, false);
  if (!fingerprint.is_object()) fingerprint = nlohmann::json::object();
  const nlohmann::json last = {{"run_id", upload->id},
                               {"project", upload->project},
                               {"commit", upload->commit.sha},
                               {"branch", upload->branch},
                               {"target_branch", upload->target_branch},
                               {"merge_base", upload->merge_base.value_or("")},
                               {"testbed", upload->testbed.name},
                               {"testbed_fingerprint", std::move(fingerprint)}};
  if (request.record_last_run) std::ofstream(LastRunPath(config)) << last.dump() << "\n";
  Progress("run " + upload->id + " spooled (" + std::to_string(upload->SampleCount()) +
           " samples of " + std::to_string(upload->results.size()) + " series, commit " +
           upload->commit.sha.substr(0, 12) + " on " + upload->branch + ")");
  measured.upload = std::move(*upload);
  return measured;
}

Result<LastRun> ReadLastRun(const config::RunnerConfig& config) {
  std::ifstream in(LastRunPath(config));
  nlohmann::json json = nlohmann::json::parse(in, nullptr, false);
  if (!in || json.is_discarded() || !json.is_object() || !json.contains("run_id")) {
    return InvalidArgument("no run recorded in " + LastRunPath(config).string() +
                               ": run `perfwarden run` first, or pass --run ID",
                           "run");
  }
  LastRun last;
  last.run_id = json.value("run_id", "");
  last.project = json.value("project", "");
  last.commit = json.value("commit", "");
  last.branch = json.value("branch", "");
  last.target_branch = json.value("target_branch", "");
  last.merge_base = json.value("merge_base", "");
  last.testbed.name = json.value("testbed", "");
  if (auto it = json.find("testbed_fingerprint"); it != json.end() && it->is_object()) {
    last.testbed.fingerprint_json = it->dump();
  }
  return last;
}

Result<client::PushReport> PushSpool(const config::RunnerConfig& config) {
  if (auto ok = RequireServer(config); !ok) return tl::unexpected(ok.error());
  auto spool = client::Spool::Open(config.spool_dir.string());
  if (!spool) return tl::unexpected(spool.error());
  net::HttpClientOptions options;
  options.bearer_token = config.server.token;
  auto http = net::HttpClient::Create(options);
  if (!http) return tl::unexpected(http.error());
  net::RetryPolicy policy;
  client::PushOptions push_options;
  push_options.seed = std::random_device{}();
  return client::PushAll(
      *spool, *http, config.server.url, config.server.token, policy,
      [](const client::PushEvent& e) {
        switch (e.kind) {
          case client::PushEvent::Kind::kSent:
            Progress("posted run " + e.run_id);
            break;
          case client::PushEvent::Kind::kAlreadyPresent:
            Progress("run " + e.run_id + " was already stored");
            break;
          default:
            Progress("run " + e.run_id + ": " + e.message);
        }
      },
      push_options);
}

}  // namespace perfwarden::run
