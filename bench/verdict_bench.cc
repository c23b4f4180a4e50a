// SPDX-License-Identifier: Apache-2.0
// Verdict latency of perfwarden-server: a pull-request run of B benchmark metrics judged
// against a baseline of 5 runs x 20 repetitions at its merge-base, with K concurrent gate
// requests (POST .../runs/{id}/verdict, each for its own run). Reports p50/p99/max request
// latency next to the same judgement done in-process by the stats engine (Judge, one thread),
// measured in the same run: the ratio is the server's whole overhead (HTTP, PostgreSQL reads of
// the sample sets, storing the verdict) and its queueing on this machine's cores.
// Usage: verdict_bench [--clients K] [--rounds R] [--benchmarks B] [--threads T]
//                      [--baseline-cache-bytes N]  (0: no prepared baselines kept)
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "config/server_config.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "server/gate/verdict.h"
#include "server/store/embedded_pg.h"
#include "stats/descriptive.h"
#include "tests/testing/http_client.h"

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

struct Options {
  int clients = 16;
  int rounds = 5;  // verdict requests per client
  int benchmarks = 500;
  int baseline_runs = 5;
  int repetitions = 20;
  int threads = 0;
  long long baseline_cache_bytes = -1;  // -1: the server's default
};

[[noreturn]] void Usage(const std::string& why) {
  std::fprintf(stderr,
               "verdict_bench: %s\nusage: verdict_bench [--clients K] [--rounds R] "
               "[--benchmarks B] [--threads T] [--baseline-cache-bytes N]\n",
               why.c_str());
  std::exit(2);
}

// Exits 0 after --help, 2 on bad usage.
Options ParseArgs(int argc, char** argv) {
  Options o;
  CLI::App app{"verdict_bench: verdict latency under concurrent gate requests"};
  app.add_option("--clients", o.clients, "Concurrent gate requests")->check(CLI::PositiveNumber);
  app.add_option("--rounds", o.rounds, "Verdict requests per client")->check(CLI::PositiveNumber);
  app.add_option("--benchmarks", o.benchmarks, "Benchmark metrics per run")
      ->check(CLI::PositiveNumber);
  app.add_option("--threads", o.threads, "The server's I/O threads")->check(CLI::PositiveNumber);
  app.add_option("--baseline-cache-bytes", o.baseline_cache_bytes,
                 "limits.baseline_cache_bytes (0: keep none; default: the server's)")
      ->check(CLI::NonNegativeNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  return o;
}

std::string Uuid(int kind, int n) {
  char text[40];
  std::snprintf(text, sizeof(text), "00000000-0000-4000-%04x-%012x", 0x8000 + kind,
                static_cast<unsigned>(n));
  return text;
}

std::string Sha(int n) {
  char text[48];
  std::snprintf(text, sizeof(text), "%040x", n + 0x51);
  return text;
}

// A run's series: benchmark b centred on 1000*(1 + b%97), lognormal noise of 2%; `slower`
// benchmarks are 10% slower.
json Results(const Options& o, std::mt19937_64& rng, int slower) {
  std::lognormal_distribution<double> noise(0.0, 0.02);
  json results = json::array();
  for (int b = 0; b < o.benchmarks; ++b) {
    std::vector<double> values;
    const double center = 1000.0 * (1 + b % 97) * (b < slower ? 1.10 : 1.0);
    for (int r = 0; r < o.repetitions; ++r) values.push_back(center * noise(rng));
    results.push_back({{"suite", "bench"},
                       {"benchmark", "BM_" + std::to_string(b)},
                       {"metric", "real_time"},
                       {"unit", "ns"},
                       {"direction", "lower"},
                       {"values", values}});
  }
  return results;
}

// counts.regression of a verdict body, read without parsing ~200 KB of JSON on the cores the
// server shares with this client (a real gate parses it on its own machine).
int RegressionCount(const std::string& body) {
  const size_t counts = body.find("\"counts\":{");
  const size_t key = body.find("\"regression\":", counts);
  if (counts == std::string::npos || key == std::string::npos) return 0;
  return std::atoi(body.c_str() + key + std::string("\"regression\":").size());
}

// The stats engine alone on the same shapes: one judgement, in this thread.
double InProcessSeconds(const Options& o, std::mt19937_64& rng) {
  std::lognormal_distribution<double> noise(0.0, 0.02);
  std::vector<perfwarden::store::SampleSet> base, contender;
  for (int b = 0; b < o.benchmarks; ++b) {
    perfwarden::store::SampleSet set;
    set.key = {"bench", "BM_" + std::to_string(b), "real_time"};
    set.unit = "ns";
    const double center = 1000.0 * (1 + b % 97);
    for (int r = 0; r < o.repetitions * o.baseline_runs; ++r) {
      set.values.push_back(center * noise(rng));
    }
    base.push_back(set);
    set.values.clear();
    for (int r = 0; r < o.repetitions; ++r) set.values.push_back(center * noise(rng));
    contender.push_back(set);
  }
  double best = 1e9;
  for (int i = 0; i < 5; ++i) {
    const auto t0 = Clock::now();
    auto prepared = perfwarden::server::gate::PrepareBaseline(base, SIZE_MAX);
    auto judged = perfwarden::server::gate::Judge(contender, prepared.get(), {});
    const double s = std::chrono::duration<double>(Clock::now() - t0).count();
    if (!judged) Usage("in-process judge failed: " + judged.error().message);
    best = std::min(best, s);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  const Options o = ParseArgs(argc, argv);
  spdlog::set_level(spdlog::level::warn);
  const std::filesystem::path data_dir =
      perfwarden::store::MakeClusterTempDir("perfwarden-verdict-bench-")
          .value_or(std::filesystem::path());
  if (data_dir.empty()) Usage("cannot make a data directory for PostgreSQL");
  perfwarden::config::ServerConfig config;
  config.listen.host = "127.0.0.1";
  config.listen.port = 0;
  config.threads = o.threads > 0
                       ? o.threads
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  config.pool_size = std::max(config.pool_size, config.threads + 2);
  // The history worker (its costs: bench/history_bench.cc) would analyse these main-branch runs
  // beside what is measured here, as it did not when the figures in docs/performance.md were taken.
  config.history.enabled = false;
  // Its K clients share one token: all of them are measured, none turned away with a 429.
  config.limits.heavy_requests_per_caller =
      std::max(config.limits.heavy_requests_per_caller, o.clients);
  config.limits.heavy_requests = std::max(config.limits.heavy_requests, o.clients);
  config.data_dir = data_dir.string();
  if (o.baseline_cache_bytes >= 0) {
    config.limits.baseline_cache_bytes = static_cast<std::size_t>(o.baseline_cache_bytes);
  }
  auto admin = perfwarden::auth::GenerateToken();
  if (!admin) Usage("token generation failed");
  config.admin_token = *admin;
  auto started = perfwarden::server::App::Start(config);
  if (!started) Usage("server: " + started.error().ToString());
  std::unique_ptr<perfwarden::server::App> app = std::move(*started);
  const auto port = static_cast<std::uint16_t>(app->port());
  int status = 0;
  {
    perfwarden::testing::HttpClient setup(port);
    if (setup.Post("/api/v1/projects", json{{"name", "bench"}}.dump(), config.admin_token).status !=
        201) {
      Usage("create project failed");
    }
    auto t =
        setup.Post("/api/v1/projects/bench/tokens",
                   json{{"name", "ci"}, {"scopes", {"ingest", "read"}}}.dump(), config.admin_token);
    const std::string token = t.Json()["token"].get<std::string>();
    std::mt19937_64 rng(20261122);
    auto post = [&](const json& upload) {
      auto r = setup.Post("/api/v1/projects/bench/runs", upload.dump(), token);
      if (r.status != 201) Usage("post run: " + r.body.substr(0, 300));
    };
    for (int i = 0; i < o.baseline_runs; ++i) {
      post({{"id", Uuid(0, i)},
            {"project", "bench"},
            {"branch", "main"},
            {"commit", {{"sha", Sha(0)}}},
            {"testbed", {{"name", "tb"}}},
            {"results", Results(o, rng, 0)}});
    }
    // One pull-request run per client and round, 10 of its benchmarks 10% slower.
    const int runs = o.clients * o.rounds;
    for (int i = 0; i < runs; ++i) {
      post({{"id", Uuid(1, i)},
            {"project", "bench"},
            {"branch", "pr-" + std::to_string(i)},
            {"target_branch", "main"},
            {"merge_base", Sha(0)},
            {"commit", {{"sha", Sha(1 + i)}}},
            {"testbed", {{"name", "tb"}}},
            {"results", Results(o, rng, 10)}});
    }
    std::printf(
        "verdict_bench: %d benchmark metrics, baseline %d runs x %d repetitions, "
        "%d concurrent clients x %d requests, %d server threads\n",
        o.benchmarks, o.baseline_runs, o.repetitions, o.clients, o.rounds, config.threads);

    std::vector<std::vector<double>> latencies(static_cast<size_t>(o.clients));
    std::atomic<int> failures{0};
    std::atomic<int> regressions_seen{0};
    const auto start = Clock::now();
    std::vector<std::thread> clients;
    for (int c = 0; c < o.clients; ++c) {
      clients.emplace_back([&, c]() {
        perfwarden::testing::HttpClient http(port, std::chrono::seconds(600));
        for (int r = 0; r < o.rounds; ++r) {
          const std::string run = Uuid(1, c * o.rounds + r);
          const auto t0 = Clock::now();
          auto response = http.Post("/api/v1/projects/bench/runs/" + run + "/verdict", "{}", token);
          latencies[static_cast<size_t>(c)].push_back(
              std::chrono::duration<double>(Clock::now() - t0).count());
          if (response.status != 201) {
            if (failures++ == 0) std::fprintf(stderr, "verdict: %s\n", response.body.c_str());
          } else {
            regressions_seen += RegressionCount(response.body);
          }
        }
      });
    }
    for (std::thread& client : clients) client.join();
    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> all;
    for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
    // The first round meets a fresh server (its baseline was prepared in the background when
    // its runs were stored, unless --baseline-cache-bytes 0 keeps none); later rounds run with
    // 16 requests always waiting.
    std::vector<double> first, later;
    for (const auto& l : latencies) {
      for (size_t r = 0; r < l.size(); ++r) (r == 0 ? first : later).push_back(l[r]);
    }
    // The same runs read back: GET .../verdict answers the stored verdict (what a PR page, a
    // dashboard or a re-run job asks for once the gate has computed it).
    std::vector<std::vector<double>> get_latencies(static_cast<size_t>(o.clients));
    clients.clear();
    for (int c = 0; c < o.clients; ++c) {
      clients.emplace_back([&, c]() {
        perfwarden::testing::HttpClient http(port, std::chrono::seconds(600));
        for (int r = 0; r < o.rounds; ++r) {
          const std::string run = Uuid(1, c * o.rounds + r);
          const auto t0 = Clock::now();
          auto response = http.Get("/api/v1/projects/bench/runs/" + run + "/verdict", token);
          get_latencies[static_cast<size_t>(c)].push_back(
              std::chrono::duration<double>(Clock::now() - t0).count());
          if (response.status != 200) failures++;
        }
      });
    }
    for (std::thread& client : clients) client.join();
    std::vector<double> gets;
    for (const auto& l : get_latencies) gets.insert(gets.end(), l.begin(), l.end());
    const double in_process = InProcessSeconds(o, rng);
    if (failures > 0) status = 1;
    std::printf(
        "\n| what | p50 | p99 | max | per verdict (throughput) |\n|---|---:|---:|---:|---:|\n");
    std::printf(
        "| POST .../verdict, %d concurrent | %.1f ms | %.1f ms | %.1f ms | %.1f ms |\n", o.clients,
        1e3 * perfwarden::stats::Quantile(all, 0.5), 1e3 * perfwarden::stats::Quantile(all, 0.99),
        1e3 * perfwarden::stats::Quantile(all, 1.0), 1e3 * wall / static_cast<double>(all.size()));
    std::printf(
        "| POST, first round (a fresh server) | %.1f ms | %.1f ms | "
        "%.1f ms | |\n",
        1e3 * perfwarden::stats::Quantile(first, 0.5),
        1e3 * perfwarden::stats::Quantile(first, 0.99),
        1e3 * perfwarden::stats::Quantile(first, 1.0));
    if (!later.empty()) {
      std::printf("| POST, later rounds | %.1f ms | %.1f ms | %.1f ms | |\n",
                  1e3 * perfwarden::stats::Quantile(later, 0.5),
                  1e3 * perfwarden::stats::Quantile(later, 0.99),
                  1e3 * perfwarden::stats::Quantile(later, 1.0));
    }
    std::printf("| GET .../verdict (stored), %d concurrent | %.1f ms | %.1f ms | %.1f ms | |\n",
                o.clients, 1e3 * perfwarden::stats::Quantile(gets, 0.5),
                1e3 * perfwarden::stats::Quantile(gets, 0.99),
                1e3 * perfwarden::stats::Quantile(gets, 1.0));
    std::printf(
        "| stats engine alone (in-process Judge, one thread, best of 5) | %.1f ms | | | "
        "|\n",
        1e3 * in_process);
    std::printf(
        "\nserver time per verdict / in-process judge: %.2f; requests failed: %d; "
        "regressions found per verdict: %.1f (10 planted)\n",
        wall / static_cast<double>(all.size()) / in_process, failures.load(),
        static_cast<double>(regressions_seen) / static_cast<double>(all.size()));
  }
  app->Stop();
  app.reset();
  std::error_code ec;
  std::filesystem::remove_all(data_dir, ec);
  return status;
}
