// SPDX-License-Identifier: Apache-2.0
// The reliability scenario's load (bench/run_reliability.sh starts the server and its faults):
// N clients post run uploads and ask for verdicts against a perfwarden-server for S seconds, as
// the runner does (net::HttpClient, wire/'s run upload; an upload retried with backoff until the
// server acknowledges it, 200 or 201, as the spool is replayed), then drain: no new run is
// started and the ones in flight are retried until acknowledged. Then it counts from the
// database: posted, acknowledged, stored, lost (acknowledged, not stored), duplicated (a run of
// one commit and branch stored twice, sample sets beyond those posted, two verdicts of one run
// asked again after a failure), errors by status, p50/p99 latency of successful requests and the
// server's peak RSS (VmHWM of the pid in --server-pid-file, sampled every 100 ms, max over its
// lifetimes). Exits 1 when a run was lost, duplicated or never acknowledged, 2 on bad usage.
//
// Usage: reliability_load --url URL --project P [--token T] [--database-url DSN]
//          [--clients N] [--seconds S] [--drain-seconds D] [--server-pid-file F]
//          [--benchmarks B] [--repetitions R] [--post-twice-every K]
// The token and the DSN come from PERFWARDEN_TOKEN and PERFWARDEN_DATABASE_URL when the flags are
// absent (as the runner and the server read them), so that they stay off the command line.
// --post-twice-every K checks the counting itself: every K-th run is also posted under a second
// id, as a client without the spool's stable run id would after a lost answer; the run must then
// be counted as duplicated and the program exit 1.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "net/http_client.h"
#include "net/retry.h"
#include "stats/descriptive.h"
#include "wire/run_upload.h"

namespace {

using perfwarden::Result;
namespace net = perfwarden::net;
namespace wire = perfwarden::wire;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

struct Options {
  std::string url;  // http://127.0.0.1:PORT
  std::string project;
  std::string token;
  std::string database_url;
  std::string server_pid_file;
  int clients = 4;
  int seconds = 60;
  int drain_seconds = 120;
  int benchmarks = 20;
  int repetitions = 10;
  int post_twice_every = 0;  // 0: never (see --post-twice-every)
};

// Exits 0 after --help, 2 on bad usage.
Options ParseArgs(int argc, char** argv) {
  Options o;
  CLI::App app{"reliability_load: clients posting and gating through faults, then counted"};
  app.add_option("--url", o.url, "The server, http://127.0.0.1:PORT")->required();
  app.add_option("--project", o.project, "The project to post to")->required();
  app.add_option("--token", o.token, "An ingest and read token")
      ->envname("PERFWARDEN_TOKEN")
      ->required();
  app.add_option("--database-url", o.database_url, "The server's database, to count what it stored")
      ->envname("PERFWARDEN_DATABASE_URL")
      ->required();
  app.add_option("--server-pid-file", o.server_pid_file, "For the server's peak RSS");
  app.add_option("--clients", o.clients, "Concurrent clients")->check(CLI::PositiveNumber);
  app.add_option("--seconds", o.seconds, "Posting time")->check(CLI::PositiveNumber);
  app.add_option("--drain-seconds", o.drain_seconds, "At most, to get runs in flight acknowledged")
      ->check(CLI::PositiveNumber);
  app.add_option("--benchmarks", o.benchmarks, "Per run")->check(CLI::PositiveNumber);
  app.add_option("--repetitions", o.repetitions, "Per benchmark")->check(CLI::PositiveNumber);
  app.add_option("--post-twice-every", o.post_twice_every,
                 "Every K-th run also under a second id (checks the counting)")
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  return o;
}

// What all clients saw, under one lock (a few thousand requests: the lock is not the bottleneck).
struct Tally {
  std::mutex mu;
  std::map<std::string, size_t> errors;       // "503", "transport", ... -> count
  std::vector<double> upload_ms, verdict_ms;  // successful requests only
  size_t upload_requests = 0, verdict_requests = 0;
  std::map<std::string, size_t> posted;  // run id -> sample sets posted
  std::set<std::string> acknowledged, rejected, unacknowledged, pr_runs;
  size_t verdicts_answered = 0, verdicts_unanswered = 0;
  std::map<std::string, size_t> outcomes;  // of the answered verdicts: "pass", "no_baseline", ...
};

std::string Uuid(std::mt19937_64& rng) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string id;
  uint64_t hi = rng(), lo = rng();
  hi = (hi & ~0xF000ULL) | 0x4000ULL;                  // version 4
  lo = (lo & ~(0xC000ULL << 48)) | (0x8000ULL << 48);  // RFC 4122 variant
  for (int i = 0; i < 32; ++i) {
    const uint64_t word = i < 16 ? hi : lo;
    id += kHex[(word >> (4 * (15 - i % 16))) & 0xF];
    if (i == 7 || i == 11 || i == 15 || i == 19) id += '-';
  }
  return id;
}

std::string Sha(std::mt19937_64& rng) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string sha;
  for (int i = 0; i < 40; ++i) sha += kHex[rng() & 0xF];
  return sha;
}

class Client {
 public:
  Client(const Options& options, int index, Tally& tally, Clock::time_point load_end,
         Clock::time_point drain_end)
      : options_(options),
        index_(index),
        tally_(tally),
        load_end_(load_end),
        drain_end_(drain_end),
        rng_(std::random_device{}() ^ (0x9e3779b97f4a7c15ULL * index)) {}

  void Run() {
    net::HttpClientOptions http_options;
    http_options.bearer_token = options_.token;
    http_options.connect_timeout = 5s;
    http_options.total_timeout = 60s;
    auto http = net::HttpClient::Create(http_options);
    if (!http) {
      std::fprintf(stderr, "client %d: %s\n", index_, http.error().message.c_str());
      return;
    }
    http_ = &*http;
    for (int k = 0; Clock::now() < load_end_; ++k) {
      wire::RunUpload main_run = MakeRun("main", {});
      if (options_.post_twice_every > 0 && ++runs_ % options_.post_twice_every == 0) {
        wire::RunUpload copy = main_run;
        copy.id = Uuid(rng_);
        if (!PostUntilAcknowledged(copy)) return;
      }
      if (!PostUntilAcknowledged(main_run)) return;
      wire::RunUpload pr =
          MakeRun("pr-" + std::to_string(index_) + "-" + std::to_string(k), main_run.commit.sha);
      if (!PostUntilAcknowledged(pr)) return;
      Gate(pr.id);
    }
  }

 private:
  wire::RunUpload MakeRun(const std::string& branch, const std::string& merge_base) {
    wire::RunUpload run;
    run.id = Uuid(rng_);
    run.project = options_.project;
    run.branch = branch;
    run.commit.sha = Sha(rng_);
    if (!merge_base.empty()) {
      run.commit.parents = {merge_base};
      run.merge_base = merge_base;
      run.target_branch = "main";
      run.ancestry = {merge_base};
    }
    run.commit.subject = "reliability client " + std::to_string(index_);
    run.testbed.name = "reliability";
    std::normal_distribution<double> noise(1000.0, 10.0);
    for (int b = 0; b < options_.benchmarks; ++b) {
      wire::ResultSeries series;
      series.key = {"reliability", "BM_Load/" + std::to_string(b), "real_time"};
      series.unit = "ns";
      for (int r = 0; r < options_.repetitions; ++r) series.values.push_back(noise(rng_));
      run.results.push_back(std::move(series));
    }
    return run;
  }

  // One attempt; records its status (or "transport") and, when 2xx, its latency.
  Result<net::HttpResponse> Send(const net::HttpRequest& request, bool upload) {
    const auto start = Clock::now();
    auto answer = http_->Send(request);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    std::lock_guard lock(tally_.mu);
    ++(upload ? tally_.upload_requests : tally_.verdict_requests);
    if (!answer) {
      ++tally_.errors["transport"];
    } else if (answer->status / 100 == 2) {
      (upload ? tally_.upload_ms : tally_.verdict_ms).push_back(ms);
    } else {
      ++tally_.errors[std::to_string(answer->status)];
    }
    return answer;
  }

  // The spool's promise: posted again (same id, same body) until acknowledged. False when the
  // drain ended first (the run stays "unacknowledged": a runner would keep it spooled).
  bool PostUntilAcknowledged(const wire::RunUpload& run) {
    net::HttpRequest request;
    request.method = "POST";
    request.url = options_.url + "/api/v1/projects/" + options_.project + "/runs";
    request.body = wire::EncodeRunUpload(run);
    request.content_type = "application/json";
    {
      std::lock_guard lock(tally_.mu);
      tally_.posted[run.id] = run.results.size();
      if (run.merge_base) tally_.pr_runs.insert(run.id);
    }
    return Retry(request, /*upload=*/true, [&](int status, const std::string&) {
      std::lock_guard lock(tally_.mu);
      if (status == 200 || status == 201)
        tally_.acknowledged.insert(run.id);
      else if (status == 0)
        tally_.unacknowledged.insert(run.id);
      else
        tally_.rejected.insert(run.id);
    });
  }

  // The gate's question, asked again after a failure as a retried CI job would.
  void Gate(const std::string& run_id) {
    net::HttpRequest request;
    request.method = "POST";
    request.url =
        options_.url + "/api/v1/projects/" + options_.project + "/runs/" + run_id + "/verdict";
    request.body = "{}";
    request.content_type = "application/json";
    Retry(request, /*upload=*/false, [&](int status, const std::string& body) {
      const bool answered = status == 200 || status == 201;
      std::string outcome = "unreadable";
      if (answered) {
        const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
        if (json.is_object() && json.contains("verdict") && json["verdict"].is_object() &&
            json["verdict"].contains("outcome") && json["verdict"]["outcome"].is_string()) {
          outcome = json["verdict"]["outcome"].get<std::string>();
        }
      }
      std::lock_guard lock(tally_.mu);
      ++(answered ? tally_.verdicts_answered : tally_.verdicts_unanswered);
      if (answered) ++tally_.outcomes[outcome];
    });
  }

  // Sends until a final answer: 2xx, or a 4xx that is not worth repeating (status and body
  // given to `done`), or the drain's end (status 0). Waits per the runner's backoff (500 ms
  // doubling, full jitter), capped at 5 s so that a client notices a restarted server soon.
  template <typename Done>
  bool Retry(const net::HttpRequest& request, bool upload, Done done) {
    net::RetryPolicy policy;
    policy.max_delay = 5000ms;
    net::Backoff backoff(policy, rng_());
    while (true) {
      auto answer = Send(request, upload);
      if (answer && !net::IsRetryableStatus(answer->status)) {
        done(answer->status, answer->body);
        return true;
      }
      const auto wait = backoff.Next();
      if (Clock::now() + wait >= drain_end_) {
        done(0, std::string());
        return false;
      }
      std::this_thread::sleep_for(wait);
    }
  }

  const Options& options_;
  int index_;
  Tally& tally_;
  Clock::time_point load_end_, drain_end_;
  std::mt19937_64 rng_;
  net::HttpClient* http_ = nullptr;
  int runs_ = 0;
};

// Samples the server's VmHWM (KiB) through its pid file until `stop`; max over its lifetimes.
class RssSampler {
 public:
  explicit RssSampler(std::string pid_file) : pid_file_(std::move(pid_file)) {
    if (!pid_file_.empty()) thread_ = std::thread([this] { Loop(); });
  }
  ~RssSampler() { Stop(); }
  void Stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  long peak_kib() const { return peak_kib_; }
  size_t lifetimes() const { return pids_.size(); }

 private:
  void Loop() {
    while (!stop_) {
      std::ifstream pid_in(pid_file_);
      std::string pid;
      if (pid_in >> pid) {
        std::ifstream status("/proc/" + pid + "/status");
        std::string line;
        while (std::getline(status, line)) {
          if (line.rfind("VmHWM:", 0) == 0) {
            pids_.insert(pid);
            peak_kib_ = std::max(peak_kib_.load(), std::stol(line.substr(6)));
          }
        }
      }
      std::this_thread::sleep_for(100ms);
    }
  }
  std::string pid_file_;
  std::atomic<bool> stop_{false};
  std::atomic<long> peak_kib_{0};
  std::set<std::string> pids_;
  std::thread thread_;
};

struct Stored {
  size_t stored = 0, lost = 0, duplicated_runs = 0, extra_sets = 0, missing_sets = 0;
  size_t duplicated_verdicts = 0, stored_unposted = 0;
};

// The database's side: every row of the project, against what the clients posted.
Stored CountStored(const Options& options, const Tally& tally) {
  pqxx::connection db(options.database_url);
  pqxx::work tx(db);
  Stored s;
  std::map<std::string, size_t> runs_of_commit;  // "branch sha" -> rows
  const auto rows = tx.exec_params(
      "SELECT r.id::text, b.name, c.sha, "
      "  (SELECT count(*) FROM sample_sets s WHERE s.project_id = r.project_id"
      "   AND s.run_id = r.id), "
      "  (SELECT count(*) FROM verdicts v WHERE v.project_id = r.project_id"
      "   AND v.run_id = r.id) "
      "FROM runs r JOIN projects p ON p.id = r.project_id JOIN branches b ON b.id = r.branch_id "
      "JOIN commits c ON c.id = r.commit_id WHERE p.name = $1",
      options.project);
  std::set<std::string> present;
  for (const auto& row : rows) {
    const std::string id = row[0].as<std::string>();
    present.insert(id);
    ++runs_of_commit[row[1].as<std::string>() + " " + row[2].as<std::string>()];
    auto posted = tally.posted.find(id);
    if (posted == tally.posted.end()) {
      ++s.stored_unposted;
      continue;
    }
    ++s.stored;
    const size_t sets = row[3].as<size_t>();
    if (sets > posted->second) ++s.extra_sets;
    if (sets < posted->second) ++s.missing_sets;
    if (row[4].as<size_t>() > 1) ++s.duplicated_verdicts;
  }
  for (const auto& [key, count] : runs_of_commit) s.duplicated_runs += count > 1 ? count - 1 : 0;
  for (const std::string& id : tally.acknowledged) s.lost += present.count(id) == 0;
  return s;
}

double Quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  return perfwarden::stats::Quantile(values, q);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseArgs(argc, argv);
  Tally tally;
  RssSampler rss(options.server_pid_file);
  const auto start = Clock::now();
  const auto load_end = start + std::chrono::seconds(options.seconds);
  const auto drain_end = load_end + std::chrono::seconds(options.drain_seconds);
  std::vector<std::thread> threads;
  for (int c = 0; c < options.clients; ++c) {
    threads.emplace_back([&, c] { Client(options, c, tally, load_end, drain_end).Run(); });
  }
  for (auto& t : threads) t.join();
  const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  rss.Stop();

  Stored s;
  try {
    s = CountStored(options, tally);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "reliability_load: counting in the database failed: %s\n", e.what());
    return 1;
  }
  const size_t duplicated = s.duplicated_runs + s.extra_sets + s.duplicated_verdicts;
  std::vector<double> all = tally.upload_ms;
  all.insert(all.end(), tally.verdict_ms.begin(), tally.verdict_ms.end());
  std::string errors;
  for (const auto& [status, count] : tally.errors) {
    errors += (errors.empty() ? "" : ", ") + status + ": " + std::to_string(count);
  }
  std::printf("reliability: %d clients, %d s of load, %.0f s with the drain\n", options.clients,
              options.seconds, elapsed);
  std::printf("  %-22s %zu\n", "posted", tally.posted.size());
  std::printf("  %-22s %zu\n", "acknowledged", tally.acknowledged.size());
  std::printf("  %-22s %zu\n", "stored", s.stored);
  std::printf("  %-22s %zu\n", "lost", s.lost);
  std::printf(
      "  %-22s %zu (runs of one commit stored twice %zu, sample sets beyond those "
      "posted %zu, runs with two verdicts %zu)\n",
      "duplicated", duplicated, s.duplicated_runs, s.extra_sets, s.duplicated_verdicts);
  std::printf("  %-22s %zu\n", "not acknowledged", tally.unacknowledged.size());
  std::printf("  %-22s %zu\n", "rejected (4xx)", tally.rejected.size());
  std::printf("  %-22s %zu\n", "incomplete", s.missing_sets);
  std::printf("  %-22s %zu\n", "stored, never posted", s.stored_unposted);
  std::string outcomes;
  for (const auto& [outcome, count] : tally.outcomes) {
    outcomes += (outcomes.empty() ? "" : ", ") + outcome + " " + std::to_string(count);
  }
  std::printf("  %-22s %zu answered (%s), %zu not (of %zu pull-request runs)\n", "verdicts",
              tally.verdicts_answered, outcomes.c_str(), tally.verdicts_unanswered,
              tally.pr_runs.size());
  std::printf("  %-22s uploads %zu, verdicts %zu\n", "requests", tally.upload_requests,
              tally.verdict_requests);
  std::printf("  %-22s %s\n", "errors by status", errors.empty() ? "none" : errors.c_str());
  std::printf(
      "  %-22s uploads p50 %.1f p99 %.1f; verdicts p50 %.1f p99 %.1f; all p50 %.1f "
      "p99 %.1f\n",
      "latency of 2xx (ms)", Quantile(tally.upload_ms, 0.5), Quantile(tally.upload_ms, 0.99),
      Quantile(tally.verdict_ms, 0.5), Quantile(tally.verdict_ms, 0.99), Quantile(all, 0.5),
      Quantile(all, 0.99));
  if (!options.server_pid_file.empty()) {
    std::printf("  %-22s %.1f MiB (max VmHWM over %zu server processes)\n", "server peak RSS",
                static_cast<double>(rss.peak_kib()) / 1024.0, rss.lifetimes());
  }
  bool ok = true;
  const auto fail = [&](const char* why) {
    std::printf("FAIL: %s\n", why);
    ok = false;
  };
  if (s.lost > 0) fail("acknowledged runs were lost");
  if (duplicated > 0) fail("runs were stored more than once");
  if (!tally.unacknowledged.empty()) fail("runs were never acknowledged (the server stayed down)");
  if (!tally.rejected.empty() || s.missing_sets > 0 || s.stored_unposted > 0) {
    fail("runs were rejected, stored incomplete or stored without being posted");
  }
  if (tally.acknowledged.empty()) fail("no run was acknowledged");
  if (ok) std::printf("OK: 0 lost, 0 duplicated\n");
  return ok ? 0 : 1;
}
