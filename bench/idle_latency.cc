// SPDX-License-Identifier: Apache-2.0
// A normal request's latency while idle connections hold the server (bench/run_idle_latency.sh;
// docs/performance.md, "Idle connections"): first the baseline with none, then with N idle TCP
// connections held open for the whole measurement (a connection the server closes, over its cap
// or at its header timeout, is opened again at once, so N stay open or connecting). Each phase
// sends R requests, alternately GET /healthz and an authenticated GET of the project's runs, in
// two ways: on one keep-alive connection opened before the idle ones (a runner's libcurl handle)
// and on a new connection per request (a new `perfwarden` process). Prints requests, failures
// (no answer, or an answer other than 200), p50/p99/max of the answered ones, and how many idle
// connections were open at the end and how often they were opened again.
//
// Usage: idle_latency --port P --project NAME [--token T] [--idle N] [--requests R]
//                     [--idle-kind silent|keepalive] [--timeout-seconds S] [--phase-seconds P]
//   silent: the idle connections connect and send nothing (cut at limits.header_timeout_ms);
//   keepalive: each sends one GET /healthz first, reads the answer and then sits idle (cut at
//   limits.idle_timeout_ms). S bounds each request (default 15 s) and P each line (default 60 s:
//   a line stopped early says so), so that a phase of refused or queued connections ends. The
//   token comes from PERFWARDEN_TOKEN when --token is absent (off the command line).
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "stats/descriptive.h"
#include "tests/testing/http_client.h"
#include "wire/run_upload.h"

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using perfwarden::testing::HttpClient;

struct Options {
  uint16_t port = 0;
  std::string project;
  std::string token;
  int idle = 2000;
  int requests = 2000;
  bool keepalive_idle = false;
  int timeout_seconds = 15;
  int phase_seconds = 60;
};

// Exits 0 after --help, 2 on bad usage.
Options ParseArgs(int argc, char** argv) {
  Options o;
  std::string idle_kind = "silent";
  CLI::App app{"idle_latency: a normal request's latency with idle connections held open"};
  app.add_option("--port", o.port, "The server's port on 127.0.0.1")
      ->required()
      ->check(CLI::Range(1, 65535));
  app.add_option("--project", o.project, "A project with runs")->required();
  app.add_option("--token", o.token, "A read token")->envname("PERFWARDEN_TOKEN")->required();
  app.add_option("--idle", o.idle, "Idle connections to hold")->check(CLI::NonNegativeNumber);
  app.add_option("--requests", o.requests, "Requests per line")->check(CLI::PositiveNumber);
  app.add_option("--idle-kind", idle_kind, "silent or keepalive")
      ->check(CLI::IsMember({"silent", "keepalive"}));
  app.add_option("--timeout-seconds", o.timeout_seconds, "Per request")->check(CLI::PositiveNumber);
  app.add_option("--phase-seconds", o.phase_seconds, "At most per line")
      ->check(CLI::PositiveNumber);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  o.keepalive_idle = idle_kind == "keepalive";
  return o;
}

// Connections opened and kept open by a thread of their own: every 20 ms the closed ones are
// opened again (non-blocking connects; one still connecting counts as held).
class IdleConnections {
 public:
  IdleConnections(uint16_t port, int count, bool keepalive) : port_(port), keepalive_(keepalive) {
    fds_.assign(static_cast<size_t>(count), -1);
    for (int& fd : fds_) fd = Open();
    if (keepalive_) SendHealthzOnEach();
    thread_ = std::thread([this] { Keep(); });
  }
  ~IdleConnections() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    for (int fd : fds_) ::close(fd);
  }
  // Open (connected, not closed by the server) at the last look.
  int open() const { return open_; }
  long reopened() const { return reopened_; }
  int keepalive_answered() const { return answered_; }

 private:
  int Open() {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    if (fd < 0) return -1;
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port_);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0 &&
        errno != EINPROGRESS) {
      ::close(fd);
      return -1;
    }
    return fd;
  }

  // One request on each, its answer read: the connection is then an idle keep-alive one.
  void SendHealthzOnEach() {
    const std::string request = "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    std::vector<pollfd> polls;
    for (int fd : fds_) polls.push_back({fd, POLLOUT, 0});
    std::vector<bool> sent(fds_.size(), false), done(fds_.size(), false);
    const auto deadline = Clock::now() + 10s;
    int pending = static_cast<int>(fds_.size());
    while (pending > 0 && Clock::now() < deadline) {
      if (::poll(polls.data(), polls.size(), 100) <= 0) continue;
      for (size_t i = 0; i < polls.size(); ++i) {
        if (done[i] || polls[i].revents == 0) continue;
        if (!sent[i] && (polls[i].revents & POLLOUT)) {
          sent[i] = ::send(fds_[i], request.data(), request.size(), MSG_NOSIGNAL) ==
                    static_cast<ssize_t>(request.size());
          polls[i].events = POLLIN;
          if (!sent[i]) done[i] = true, --pending;
        } else if (polls[i].revents & (POLLIN | POLLERR | POLLHUP)) {
          char buffer[4096];
          const ssize_t n = ::recv(fds_[i], buffer, sizeof(buffer), 0);
          if (n > 0 &&
              std::string(buffer, static_cast<size_t>(n)).find("\r\n\r\n") != std::string::npos) {
            ++answered_;
          }
          done[i] = true;
          --pending;
        }
      }
    }
  }

  void Keep() {
    std::vector<pollfd> polls(fds_.size());
    while (!stop_) {
      for (size_t i = 0; i < fds_.size(); ++i) polls[i] = {fds_[i], POLLIN | POLLRDHUP, 0};
      ::poll(polls.data(), polls.size(), 0);
      int open = 0;
      for (size_t i = 0; i < fds_.size(); ++i) {
        bool closed = fds_[i] < 0 || (polls[i].revents & (POLLERR | POLLHUP | POLLRDHUP));
        if (!closed && (polls[i].revents & POLLIN)) {
          char buffer[4096];
          const ssize_t n = ::recv(fds_[i], buffer, sizeof(buffer), 0);
          closed = n == 0 || (n < 0 && errno != EAGAIN && errno != ENOTCONN);
        }
        if (closed) {
          if (fds_[i] >= 0) ::close(fds_[i]);
          fds_[i] = Open();
          ++reopened_;
        } else {
          ++open;
        }
      }
      open_ = open;
      std::this_thread::sleep_for(20ms);
    }
  }

  uint16_t port_;
  bool keepalive_;
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<int> open_{0};
  std::atomic<long> reopened_{0};
  int answered_ = 0;
  std::thread thread_;
};

struct Phase {
  std::vector<double> ms;  // answered 200
  int failed = 0;
  std::string first_failure;
  bool stopped = false;  // by --phase-seconds
};

// R requests, alternately /healthz and the project's runs; on `kept` or, when null, each on a
// new connection.
Phase Measure(const Options& options, HttpClient* kept) {
  Phase phase;
  const std::string runs = "/api/v1/projects/" + options.project + "/runs";
  const auto end = Clock::now() + std::chrono::seconds(options.phase_seconds);
  for (int i = 0; i < options.requests; ++i) {
    if (Clock::now() >= end) {
      phase.stopped = true;
      break;
    }
    const bool healthz = i % 2 == 0;
    HttpClient fresh(options.port, std::chrono::seconds(options.timeout_seconds));
    HttpClient& client = kept != nullptr ? *kept : fresh;
    const auto start = Clock::now();
    const auto answer = healthz ? client.Get("/healthz") : client.Get(runs, options.token);
    const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (answer.status == 200) {
      phase.ms.push_back(ms);
    } else {
      if (phase.failed++ == 0) {
        phase.first_failure =
            answer.status == 0 ? answer.body : "HTTP " + std::to_string(answer.status);
      }
    }
  }
  return phase;
}

void Print(const char* phase_name, const char* mode, const Phase& phase) {
  std::vector<double> sorted = phase.ms;
  std::sort(sorted.begin(), sorted.end());
  const auto q = [&](double p) {
    return sorted.empty() ? 0.0 : perfwarden::stats::QuantileSorted(sorted, p);
  };
  const auto slow = std::count_if(sorted.begin(), sorted.end(), [](double ms) { return ms > 100; });
  std::printf("  %-26s %-15s %6zu %6d %6td %9.2f %9.2f %9.2f%s%s%s\n", phase_name, mode,
              phase.ms.size() + static_cast<size_t>(phase.failed), phase.failed, slow, q(0.5),
              q(0.99), sorted.empty() ? 0.0 : sorted.back(),
              phase.stopped ? "  (stopped at --phase-seconds)" : "",
              phase.failed > 0 ? "  first failure: " : "", phase.first_failure.c_str());
}

// A few runs, so that the GET of runs reads a real page.
bool SeedRuns(const Options& options) {
  HttpClient client(options.port);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20; ++i) {
    perfwarden::wire::RunUpload run;
    char id[40];
    std::snprintf(id, sizeof(id), "00000000-0000-4000-8000-%012d", i + 1);
    run.id = id;
    run.project = options.project;
    run.branch = "main";
    run.commit.sha = std::string(39, 'a') + "0123456789abcdef"[i % 16];
    run.testbed.name = "idle-latency";
    for (int b = 0; b < 10; ++b) {
      perfwarden::wire::ResultSeries series;
      series.key = {"idle", "BM_" + std::to_string(b), "real_time"};
      series.unit = "ns";
      for (int r = 0; r < 5; ++r) series.values.push_back(1000.0 + static_cast<double>(rng() % 50));
      run.results.push_back(std::move(series));
    }
    const auto answer = client.Post("/api/v1/projects/" + options.project + "/runs",
                                    perfwarden::wire::EncodeRunUpload(run), options.token);
    if (answer.status != 200 && answer.status != 201) {
      std::fprintf(stderr, "idle_latency: seeding runs: HTTP %d %s\n", answer.status,
                   answer.body.c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = ParseArgs(argc, argv);
  rlimit limit{};
  ::getrlimit(RLIMIT_NOFILE, &limit);
  limit.rlim_cur = limit.rlim_max;
  ::setrlimit(RLIMIT_NOFILE, &limit);
  if (limit.rlim_cur < static_cast<rlim_t>(options.idle) + 64) {
    std::fprintf(stderr, "idle_latency: descriptor limit %llu too low for %d idle connections\n",
                 static_cast<unsigned long long>(limit.rlim_cur), options.idle);
    return 2;
  }
  if (!SeedRuns(options)) return 1;

  HttpClient kept(options.port, std::chrono::seconds(options.timeout_seconds));
  const Phase base_kept = Measure(options, &kept);
  const Phase base_fresh = Measure(options, nullptr);

  IdleConnections idle(options.port, options.idle, options.keepalive_idle);
  std::this_thread::sleep_for(500ms);  // the server accepts (or refuses) them
  const int open_before = idle.open();
  const Phase idle_kept = Measure(options, &kept);
  const Phase idle_fresh = Measure(options, nullptr);
  const int open_after = idle.open();

  std::printf("%d requests per line (GET /healthz and GET .../runs alternately), latency in ms\n",
              options.requests);
  std::printf("  %-26s %-15s %6s %6s %6s %9s %9s %9s\n", "phase", "connection", "sent", "failed",
              ">100ms", "p50", "p99", "max");
  Print("no idle connections", "keep-alive", base_kept);
  Print("no idle connections", "new per request", base_fresh);
  const std::string held =
      std::to_string(options.idle) + (options.keepalive_idle ? " idle keep-alive" : " idle silent");
  Print(held.c_str(), "keep-alive", idle_kept);
  Print(held.c_str(), "new per request", idle_fresh);
  std::printf(
      "idle connections: %d asked, %d open before the measurement, %d after, %ld "
      "opened again after the server closed them (held: open or connecting)",
      options.idle, open_before, open_after, idle.reopened());
  if (options.keepalive_idle)
    std::printf(", %d answered their first request", idle.keepalive_answered());
  std::printf("\n");
  return 0;
}
