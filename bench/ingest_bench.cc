// SPDX-License-Identifier: Apache-2.0
// Ingest throughput of perfwarden-server, end to end: an in-process App (embedded PostgreSQL in
// a temp directory, or --database-url) receives N runs of B benchmarks x R repetitions from K
// concurrent keep-alive clients over loopback HTTP. The baseline, in the same process and the
// same database, is PostgreSQL's own COPY of the same number of rows into a samples-shaped
// scratch table; the ratio is what docs/performance.md records.
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "config/server_config.h"
#include "server/app.h"
#include "server/auth/tokens.h"
#include "server/store/embedded_pg.h"
#include "stats/descriptive.h"
#include "tests/testing/http_client.h"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int clients = 4;
  int runs = 40;
  int benchmarks = 500;
  int repetitions = 20;
  int threads = 0;  // server HTTP threads; 0 = hardware concurrency
  std::string database_url;
};

[[noreturn]] void Usage(const char* why) {
  std::fprintf(stderr,
               "ingest_bench: %s\nusage: ingest_bench [--clients K] [--runs N] [--benchmarks B]"
               " [--repetitions R] [--threads T] [--database-url DSN]\n",
               why);
  std::exit(2);
}

Options ParseArgs(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (i + 1 >= argc) Usage(("missing value for " + flag).c_str());
    const std::string value = argv[++i];
    auto number = [&]() {
      char* end = nullptr;
      const long parsed = std::strtol(value.c_str(), &end, 10);
      if (end == value.c_str() || *end != '\0' || parsed < 1 || parsed > 1'000'000) {
        Usage((flag + " wants a positive integer").c_str());
      }
      return static_cast<int>(parsed);
    };
    if (flag == "--clients") {
      options.clients = number();
    } else if (flag == "--runs") {
      options.runs = number();
    } else if (flag == "--benchmarks") {
      options.benchmarks = number();
    } else if (flag == "--repetitions") {
      options.repetitions = number();
    } else if (flag == "--threads") {
      options.threads = number();
    } else if (flag == "--database-url") {
      options.database_url = value;
    } else {
      Usage(("unknown flag " + flag).c_str());
    }
  }
  return options;
}

std::string Uuid(std::uint32_t session, int n) {
  char text[40];
  std::snprintf(text, sizeof(text), "%08x-0000-4000-8000-%012x", session, static_cast<unsigned>(n));
  return text;
}

std::string Body(const Options& options, const std::string& project, const std::string& id, int n,
                 std::mt19937_64& rng) {
  std::lognormal_distribution<double> noise(0.0, 0.02);
  nlohmann::json results = nlohmann::json::array();
  for (int b = 0; b < options.benchmarks; ++b) {
    std::vector<double> values;
    values.reserve(static_cast<std::size_t>(options.repetitions));
    const double center = 1000.0 * (1 + b % 97);
    for (int r = 0; r < options.repetitions; ++r) values.push_back(center * noise(rng));
    results.push_back({{"suite", "bench"},
                       {"benchmark", "BM_Workload/" + std::to_string(b)},
                       {"metric", "real_time"},
                       {"unit", "ns"},
                       {"direction", "lower"},
                       {"values", std::move(values)}});
  }
  char sha[48];
  std::snprintf(sha, sizeof(sha), "%040x", n + 1);
  return nlohmann::json{{"id", id},
                        {"project", project},
                        {"branch", "main"},
                        {"commit", {{"sha", sha}}},
                        {"testbed", {{"name", "bench-host"}}},
                        {"results", std::move(results)}}
      .dump();
}

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

}  // namespace

enum class CopyShape { kPerRow, kPacked };
struct CopyFigures {
  bool ok = false;
  double seconds = 0;
  long long samples = 0;  // samples found in the table afterwards
};

// COPY of the bench's samples (same count and shape of noise as the uploads) into a scratch
// table, K connections, one transaction per run. kPerRow: one row per sample, in a table
// shaped as perfwarden's samples table was before migration 0004 (primary key, series index,
// finite check; no foreign keys). kPacked: one row per series with its values as float8[],
// shaped as sample_sets (primary key and series index; no foreign keys or checks), which is
// the cheapest way PostgreSQL can take perfwarden's own rows.
CopyFigures CopyBaseline(const std::string& url, const Options& options, std::uint32_t session,
                         CopyShape shape) {
  CopyFigures figures;
  const std::string scratch = std::string("bench_copy_") +
                              (shape == CopyShape::kPerRow ? "rows_" : "sets_") +
                              std::to_string(session);
  try {
    pqxx::connection admin_conn(url);
    pqxx::nontransaction ddl(admin_conn);
    const std::string table = ddl.quote_name(scratch);
    if (shape == CopyShape::kPerRow) {
      ddl.exec("CREATE TABLE " + table +
               " (run_id uuid NOT NULL, benchmark_id bigint NOT NULL, metric_id bigint NOT NULL, "
               "repetition integer NOT NULL CHECK (repetition >= 0), value double precision NOT "
               "NULL CHECK (value > '-Infinity'::float8 AND value < 'Infinity'::float8), "
               "PRIMARY KEY (run_id, benchmark_id, metric_id, repetition))");
      ddl.exec("CREATE INDEX ON " + table + " (benchmark_id, metric_id, run_id) INCLUDE (value)");
    } else {
      ddl.exec("CREATE TABLE " + table +
               " (run_id uuid NOT NULL, benchmark_id bigint NOT NULL, metric_id bigint NOT NULL, "
               "vals float8[] NOT NULL, project_id bigint NOT NULL DEFAULT 1, "
               "PRIMARY KEY (project_id, run_id, benchmark_id, metric_id))");
      ddl.exec("CREATE INDEX ON " + table + " (benchmark_id, metric_id, run_id)");
    }
    std::atomic<int> next{0};
    std::atomic<int> failures{0};
    std::vector<std::thread> copiers;
    const auto start = Clock::now();
    for (int c = 0; c < options.clients; ++c) {
      copiers.emplace_back([&, c]() {
        try {
          pqxx::connection conn(url);
          std::mt19937_64 rng(static_cast<std::uint64_t>(c) + 7);
          std::lognormal_distribution<double> noise(0.0, 0.02);
          for (int n = next++; n < options.runs; n = next++) {
            pqxx::work tx(conn);
            const std::string run_id = Uuid(session ^ 0x5a5a5a5au, n);
            if (shape == CopyShape::kPerRow) {
              pqxx::stream_to stream(tx, scratch,
                                     std::vector<std::string>{"run_id", "benchmark_id", "metric_id",
                                                              "repetition", "value"});
              for (int b = 0; b < options.benchmarks; ++b) {
                for (int r = 0; r < options.repetitions; ++r) {
                  stream << std::make_tuple(run_id, static_cast<long long>(b + 1), 1LL, r,
                                            1000.0 * (1 + b % 97) * noise(rng));
                }
              }
              stream.complete();
            } else {
              pqxx::stream_to stream(
                  tx, scratch,
                  std::vector<std::string>{"run_id", "benchmark_id", "metric_id", "vals"});
              std::string vals;
              char buffer[32];
              for (int b = 0; b < options.benchmarks; ++b) {
                vals = "{";
                for (int r = 0; r < options.repetitions; ++r) {
                  if (r > 0) vals += ',';
                  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer),
                                                 1000.0 * (1 + b % 97) * noise(rng));
                  vals.append(buffer, end);
                }
                vals += '}';
                stream << std::make_tuple(run_id, static_cast<long long>(b + 1), 1LL, vals);
              }
              stream.complete();
            }
            tx.commit();
          }
        } catch (const std::exception& e) {
          if (failures++ == 0) std::fprintf(stderr, "COPY: %s\n", e.what());
        }
      });
    }
    for (std::thread& t : copiers) t.join();
    figures.seconds = Seconds(Clock::now() - start);
    const std::string count = shape == CopyShape::kPerRow
                                  ? "SELECT count(*) FROM " + table
                                  : "SELECT coalesce(sum(cardinality(vals)), 0) FROM " + table;
    figures.samples = ddl.exec(count)[0][0].as<long long>();
    ddl.exec("DROP TABLE " + table);
    figures.ok = failures == 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ingest_bench: baseline: %s\n", e.what());
  }
  return figures;
}

int main(int argc, char** argv) {
  const Options options = ParseArgs(argc, argv);
  spdlog::set_level(spdlog::level::warn);
  std::random_device entropy;
  const std::uint32_t session = entropy();
  const std::string project = "bench-" + std::to_string(session);
  const long long samples_per_run =
      static_cast<long long>(options.benchmarks) * options.repetitions;
  const long long total_samples = samples_per_run * options.runs;

  std::filesystem::path data_dir;
  perfwarden::config::ServerConfig config;
  config.listen.host = "127.0.0.1";
  config.listen.port = 0;
  config.threads = options.threads > 0
                       ? options.threads
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  config.pool_size = std::max(config.pool_size, options.clients);
  // The history worker (its costs: bench/history_bench.cc) would analyse these main-branch runs
  // beside what is measured here, as it did not when the figures in docs/performance.md were taken.
  config.history.enabled = false;
  config.database_url = options.database_url;
  if (config.database_url.empty()) {
    data_dir = perfwarden::store::MakeClusterTempDir("perfwarden-ingest-bench-")
                   .value_or(std::filesystem::path());
    if (data_dir.empty()) Usage("cannot make a data directory for PostgreSQL");
    config.data_dir = data_dir.string();
  }
  auto admin = perfwarden::auth::GenerateToken();
  if (!admin) Usage("token generation failed");
  config.admin_token = *admin;

  std::printf(
      "ingest_bench: %d runs x %d benchmarks x %d repetitions (%lld samples), "
      "%d clients, %d server threads, %s PostgreSQL\n",
      options.runs, options.benchmarks, options.repetitions, total_samples, options.clients,
      config.threads, config.database_url.empty() ? "embedded" : "external");
  auto started = perfwarden::server::App::Start(config);
  if (!started) {
    std::fprintf(stderr, "ingest_bench: server: %s\n", started.error().ToString().c_str());
    return 1;
  }
  std::unique_ptr<perfwarden::server::App> app = std::move(*started);
  const auto port = static_cast<std::uint16_t>(app->port());
  int status = 0;
  {
    perfwarden::testing::HttpClient setup(port);
    auto created = setup.Post("/api/v1/projects", nlohmann::json{{"name", project}}.dump(),
                              config.admin_token);
    if (created.status != 201) {
      std::fprintf(stderr, "create project: %d %s\n", created.status, created.body.c_str());
      return 1;
    }
    auto token_response = setup.Post(
        "/api/v1/projects/" + project + "/tokens",
        nlohmann::json{{"name", "bench"}, {"scopes", {"ingest"}}}.dump(), config.admin_token);
    if (token_response.status != 201) {
      std::fprintf(stderr, "create token: %d %s\n", token_response.status,
                   token_response.body.c_str());
      return 1;
    }
    const std::string token = token_response.Json()["token"].get<std::string>();

    // Bodies are made before the clock starts: the client's JSON encoding is not timed.
    std::mt19937_64 rng(20261122);
    std::vector<std::string> bodies;
    std::size_t body_bytes = 0;
    for (int n = 0; n < options.runs; ++n) {
      bodies.push_back(Body(options, project, Uuid(session, n), n, rng));
      body_bytes += bodies.back().size();
    }

    std::atomic<int> next{0};
    std::atomic<int> failures{0};
    std::vector<std::vector<double>> latencies(static_cast<std::size_t>(options.clients));
    const auto http_start = Clock::now();
    std::vector<std::thread> clients;
    for (int c = 0; c < options.clients; ++c) {
      clients.emplace_back([&, c]() {
        perfwarden::testing::HttpClient client(port, std::chrono::seconds(600));
        for (int n = next++; n < options.runs; n = next++) {
          const auto t0 = Clock::now();
          auto response = client.Post("/api/v1/projects/" + project + "/runs",
                                      bodies[static_cast<std::size_t>(n)], token);
          latencies[static_cast<std::size_t>(c)].push_back(Seconds(Clock::now() - t0));
          if (response.status != 201) {
            if (failures++ == 0) {
              std::fprintf(stderr, "POST run %d: %d %s\n", n, response.status,
                           response.body.substr(0, 300).c_str());
            }
          }
        }
      });
    }
    for (std::thread& t : clients) t.join();
    const double http_seconds = Seconds(Clock::now() - http_start);
    if (failures > 0) {
      std::fprintf(stderr, "ingest_bench: %d of %d posts failed\n", failures.load(), options.runs);
      status = 1;
    }
    std::vector<double> all;
    for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());

    // Baselines: PostgreSQL's COPY of the same samples into the same database, K connections,
    // one transaction per run; see CopyBaseline.
    CopyFigures per_row = CopyBaseline(app->database_url(), options, session, CopyShape::kPerRow);
    CopyFigures packed = CopyBaseline(app->database_url(), options, session, CopyShape::kPacked);
    for (const CopyFigures* figures : {&per_row, &packed}) {
      if (!figures->ok || figures->samples != total_samples) {
        std::fprintf(stderr, "ingest_bench: COPY stored %lld of %lld samples\n", figures->samples,
                     total_samples);
        status = 1;
      }
    }
    const double copy_seconds = per_row.seconds;
    const double http_rate = static_cast<double>(total_samples) / http_seconds;
    const double copy_rate =
        copy_seconds > 0 ? static_cast<double>(total_samples) / copy_seconds : 0;
    std::printf("\n| what | rows | time | rows/s | ratio |\n|---|---:|---:|---:|---:|\n");
    std::printf(
        "| perfwarden-server: POST /runs, %d clients, %d runs x %d samples (%.1f MB JSON) "
        "| %lld | %.2f s | %.0f | %.2f |\n",
        options.clients, options.runs, static_cast<int>(samples_per_run),
        static_cast<double>(body_bytes) / 1e6, total_samples, http_seconds, http_rate,
        copy_rate > 0 ? http_rate / copy_rate : 0);
    std::printf(
        "| PostgreSQL COPY (pqxx::stream_to), %d connections, one row per sample (the "
        "pre-0004 samples table) | %lld | %.2f s | %.0f | 1 |\n",
        options.clients, total_samples, copy_seconds, copy_rate);
    const double packed_rate =
        packed.seconds > 0 ? static_cast<double>(total_samples) / packed.seconds : 0;
    std::printf(
        "| PostgreSQL COPY (pqxx::stream_to), %d connections, one row per series (the "
        "sample_sets table's shape) | %lld | %.2f s | %.0f | %.2f |\n",
        options.clients, total_samples, packed.seconds, packed_rate,
        copy_rate > 0 ? packed_rate / copy_rate : 0);
    std::printf(
        "\nrequest latency (POST of one %d-sample run): p50 %.1f ms, p99 %.1f ms, "
        "max %.1f ms\n",
        static_cast<int>(samples_per_run), 1e3 * perfwarden::stats::Quantile(all, 0.50),
        1e3 * perfwarden::stats::Quantile(all, 0.99), 1e3 * perfwarden::stats::Quantile(all, 1.0));
    std::printf("server/COPY throughput ratio: %.2f\n", copy_rate > 0 ? http_rate / copy_rate : 0);
  }
  app->Stop();
  app.reset();
  if (!data_dir.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(data_dir, ec);
  }
  return status;
}
