// SPDX-License-Identifier: Apache-2.0
// The agent's loop: claim a step, measure its commits (a heartbeat renewing the lease meanwhile),
// report the measurement, post the measured commits; a workspace keeps the bisect's trees between
// its steps.
#include "runner/local_bisect/agent.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>

#include "runner/local_bisect/bisect_probe.h"
#include "runner/run/session.h"
#include "runner/run/temp_dir.h"
#include "wire/bisect.h"

namespace perfwarden::local_bisect {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

void Say(const std::string& line) { std::fprintf(stderr, "perfwarden agent: %s\n", line.c_str()); }

// Renews a step's lease every third of it while the step is measured; says when the claim is
// lost (the server gave the step to another agent after a missed renewal).
class Heartbeat {
 public:
  Heartbeat(const std::string& config_path, int64_t step_id, std::string token, int lease)
      : step_id_(step_id), token_(std::move(token)), lease_(lease) {
    auto client = run::OpenProjectClient(config_path);
    if (client) client_.emplace(std::move(*client));
    thread_ = std::thread([this] { Loop(); });
  }
  ~Heartbeat() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  bool lost() const { return lost_; }

 private:
  void Loop() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      wake_.wait_for(lock, std::chrono::seconds(std::max(1, lease_ / 3)));
      if (stop_ || !client_) break;
      lock.unlock();
      auto renewed = client_->RenewBisectStep(step_id_, {.token = token_, .lease_seconds = {}});
      lock.lock();
      if (!renewed && renewed.error().code == ErrorCode::kConflict) {
        lost_ = true;
        Say("the step's claim was lost (" + renewed.error().message + ")");
        break;
      }
    }
  }

  std::optional<client::ProjectClient> client_;
  int64_t step_id_;
  std::string token_;
  int lease_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stop_ = false;
  std::atomic<bool> lost_{false};
  std::thread thread_;
};

// The trees of the bisect the agent works on, kept between its steps (the ends are measured
// in every step and are built once).
struct Workspace {
  int64_t bisect_id = 0;
  std::string spec_key;
  std::unique_ptr<run::TempDir> dir;
  std::unique_ptr<Prober> prober;
};

class Agent {
 public:
  Agent(AgentOptions args, config::RunnerConfig config, git::Repository repo,
        client::ProjectClient client)
      : args_(std::move(args)),
        config_(std::move(config)),
        repo_(std::move(repo)),
        client_(std::move(client)) {}

  Result<void> Run() {
    Say(args_.name + " serving testbed " + args_.testbed + " from " + repo_.WorkDir());
    auto idle_since = Clock::now();
    while (true) {
      auto claimed = client_.ClaimBisectStep(
          {.testbed = args_.testbed, .agent = args_.name, .lease_seconds = args_.lease_seconds});
      if (!claimed) return tl::unexpected(claimed.error());
      if (*claimed) {
        if (auto done = Work(**claimed); !done) return tl::unexpected(done.error());
        if (args_.once) return {};
        idle_since = Clock::now();
        continue;
      }
      if (args_.once) {
        Say("no queued step for testbed " + args_.testbed);
        return {};
      }
      const double idle = std::chrono::duration<double>(Clock::now() - idle_since).count();
      if (args_.exit_when_idle > 0 && idle >= args_.exit_when_idle) {
        Say("idle for " + std::to_string(static_cast<int>(idle)) + " s; stopping");
        return {};
      }
      std::this_thread::sleep_for(std::chrono::duration<double>(args_.poll_seconds));
    }
  }

 private:
  // One step: measure, report, post. Errors returned are the agent's own (it stops); a step
  // that cannot be measured here is reported to the server as failed (it tries it elsewhere).
  Result<void> Work(const wire::ClaimedStep& step) {
    const int64_t id = step.id;
    const int64_t bisect_id = step.bisect_id;
    auto request = bisect::RequestFromJson(step.request);
    if (!request) return tl::unexpected(request.error());
    std::vector<git::CommitInfo> commits;
    std::string problem;
    for (const wire::StepCommit& c : step.commits) {
      auto info = repo_.Describe(c.sha);
      if (!info) {
        problem = "commit " + c.sha + " is not in " + repo_.WorkDir() +
                  " (fetch it): " + info.error().message;
        break;
      }
      commits.push_back(std::move(*info));
    }
    if (problem.empty() && !step.build.empty() && args_.build.empty() &&
        !args_.trust_queued_build) {
      problem = "the bisect asks to build with `" + step.build +
                "`, and this agent runs no build command from the server (start it with --build "
                "CMD, or --trust-queued-build)";
    }
    if (problem.empty() && commits.size() != request->targets.size()) {
      problem = "the step names " + std::to_string(commits.size()) + " commits for " +
                std::to_string(request->targets.size()) + " targets";
    }
    Say("step " + std::to_string(step.ordinal + 1) + " of bisect " + std::to_string(bisect_id) +
        " (attempt " + std::to_string(step.attempt) +
        "): " + std::to_string(request->targets.size()) + " commits x " +
        std::to_string(request->repetitions) + " repetitions");
    wire::StepReport result{.token = step.token};
    if (problem.empty()) {
      auto prober = ProberFor(bisect_id, step);
      if (!prober) return tl::unexpected(prober.error());
      const int builds = (*prober)->builds(), runs = (*prober)->runs();
      std::optional<Result<bisect::Measurement>> measured;
      bool lost = false;
      {
        Heartbeat heartbeat(args_.config, id, step.token, args_.lease_seconds);
        measured.emplace((*prober)->Measure(commits, request->repetitions));
        lost = heartbeat.lost();
      }
      if (lost) {
        Say("dropping the measurement of step " + std::to_string(id) +
            ": another agent has it now");
        return {};
      }
      if (*measured) {
        (*measured)->request = *request;
        result.measurement = bisect::MeasurementJson(**measured);
        result.builds = (*prober)->builds() - builds;
        result.runs = (*prober)->runs() - runs;
      } else {
        problem = (*measured).error().message;
      }
    }
    if (!problem.empty()) {
      Say("step " + std::to_string(id) + " failed here: " + problem);
      result.error = problem;
    }
    auto reported = client_.ReportBisectStep(id, result);
    if (!reported && reported.error().code == ErrorCode::kInvalidArgument && result.measurement) {
      // The server refused the measurement (its suite or metric is not the bisect's: this
      // host's perfwarden.yaml differs, say): report that as the step's failure, so that the step
      // goes back to the queue or, the third time, the bisect fails saying why.
      Say("the server refused the measurement of step " + std::to_string(id) + ": " +
          reported.error().ToString());
      reported = client_.ReportBisectStep(
          id,
          {.token = step.token,
           .measurement = std::nullopt,
           .builds = std::nullopt,
           .runs = std::nullopt,
           .error = "the server refused this agent's measurement: " + reported.error().ToString()});
    }
    if (!reported) {
      if (reported.error().code == ErrorCode::kConflict) {
        Say("step " + std::to_string(id) + " was taken over (" + reported.error().message +
            "); its measurement is dropped");
        return {};
      }
      return tl::unexpected(reported.error());
    }
    Say("reported step " + std::to_string(id) + "; bisect " + std::to_string(bisect_id) + " is " +
        reported->state +
        (reported->culprit ? " (culprit " + reported->culprit->substr(0, 12) + ")"
                           : std::string()));
    if (workspace_.prober) {
      std::vector<std::string> warnings;
      PostMeasured(config_, workspace_.prober->TakeMeasured(), &warnings);
      for (const std::string& w : warnings) Say("warning: " + w);
    }
    return {};
  }

  Result<Prober*> ProberFor(int64_t bisect_id, const wire::ClaimedStep& step) {
    ProbeSpec spec;
    spec.benchmarks = step.benchmarks;
    spec.suite = step.suite;
    spec.metric = step.metric;
    spec.build = !args_.build.empty() ? args_.build : step.build;
    if (spec.benchmarks.empty()) {
      return MakeError(ErrorCode::kUnavailable, "the server's step names no benchmark");
    }
    const std::string key = json{spec.benchmarks, spec.suite, spec.metric, spec.build}.dump();
    if (workspace_.prober && workspace_.bisect_id == bisect_id && workspace_.spec_key == key) {
      return workspace_.prober.get();
    }
    workspace_.prober.reset();
    workspace_.dir.reset();
    auto dir = run::TempDir::Make(config_.spool_dir.parent_path(), "agent-");
    if (!dir) return tl::unexpected(dir.error());
    workspace_.dir = std::make_unique<run::TempDir>(std::move(*dir));
    workspace_.prober =
        std::make_unique<Prober>(config_, std::move(spec), repo_, workspace_.dir->path());
    workspace_.bisect_id = bisect_id;
    workspace_.spec_key = key;
    return workspace_.prober.get();
  }

  AgentOptions args_;
  config::RunnerConfig config_;
  git::Repository repo_;
  client::ProjectClient client_;
  Workspace workspace_;
};

}  // namespace

Result<void> ServeBisectSteps(const AgentOptions& options, config::RunnerConfig config,
                              git::Repository repo, client::ProjectClient client) {
  Agent agent(options, std::move(config), std::move(repo), std::move(client));
  return agent.Run();
}

}  // namespace perfwarden::local_bisect
