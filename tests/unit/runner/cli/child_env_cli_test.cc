// SPDX-License-Identifier: Apache-2.0
// `perfwarden run` as a CI job starts it, with the job's secrets in its environment: the suites'
// build, command and Google Benchmark binary (scripts that write down their environment) see
// none of the credentials, nor a secret-looking variable their suite does not pass; nor can they
// read the token from the runner's /proc/<pid>/environ. The runner still posts the run with its
// token, kept in memory (a stand-in server on loopback records the request and refuses it).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/testing/bisect_repo.h"
#include "tests/testing/shell.h"

namespace perfwarden {
namespace {

namespace fs = std::filesystem;

// Google Benchmark's command line in, its JSON out (two repetitions of BM_X), and its
// environment, and its parent's (the runner's) as /proc shows it, written down.
constexpr const char* kBench = R"(#!/bin/sh
env > gbench.env
tr '\000' '\n' < /proc/$PPID/environ > runner.env
for arg in "$@"; do
  case "$arg" in --benchmark_out=*) out="${arg#--benchmark_out=}" ;; esac
done
cat > "$out" <<'EOF'
{"context": {"date": "2026-01-01T00:00:00+00:00", "host_name": "t", "executable": "bench",
 "num_cpus": 1, "mhz_per_cpu": 1000, "cpu_scaling_enabled": false,
 "library_build_type": "release"},
 "benchmarks": [
  {"name": "BM_X", "run_name": "BM_X", "run_type": "iteration", "repetitions": 2,
   "repetition_index": 0, "threads": 1, "iterations": 10, "real_time": 100.0,
   "cpu_time": 100.0, "time_unit": "ns"},
  {"name": "BM_X", "run_name": "BM_X", "run_type": "iteration", "repetitions": 2,
   "repetition_index": 1, "threads": 1, "iterations": 10, "real_time": 101.0,
   "cpu_time": 101.0, "time_unit": "ns"}]}
EOF
)";

// A loopback "server" that records the first request's head and answers 401 to every request.
class RefusingServer {
 public:
  RefusingServer() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), size) != 0 || ::listen(fd_, 4) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size) != 0) {
      return;
    }
    port_ = ntohs(address.sin_port);
    thread_ = std::thread([this] { Serve(); });
  }
  ~RefusingServer() {
    Stop();
    ::close(fd_);
  }

  int port() const { return port_; }
  // Stops serving; the first request's line and headers ("" when none came).
  std::string Stop() {
    ::shutdown(fd_, SHUT_RDWR);  // wakes accept
    if (thread_.joinable()) thread_.join();
    return head_;
  }

 private:
  void Serve() {
    for (;;) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      std::string head;
      char buffer[4096];
      while (head.find("\r\n\r\n") == std::string::npos) {
        const ssize_t n = ::recv(client, buffer, sizeof buffer, 0);
        if (n <= 0) break;
        head.append(buffer, static_cast<size_t>(n));
      }
      if (head_.empty()) head_ = head.substr(0, head.find("\r\n\r\n"));
      const std::string answer =
          "HTTP/1.1 401 Unauthorized\r\nContent-Type: application/json\r\nContent-Length: 2\r\n"
          "Connection: close\r\n\r\n{}";
      (void)::send(client, answer.data(), answer.size(), MSG_NOSIGNAL);
      ::close(client);
    }
  }

  int fd_;
  int port_ = 0;
  std::string head_;
  std::thread thread_;
};

std::string Read(const fs::path& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ChildEnvCli, SuitesNeverSeeTheTokensTheRunnerPostsWith) {
  RefusingServer server;
  ASSERT_GT(server.port(), 0);
  testing::SyntheticRepo repo("child-env");
  ASSERT_TRUE(repo.ok());
  const fs::path dir = repo.path();
  std::ofstream(dir / "bench.sh") << kBench;
  fs::permissions(dir / "bench.sh", fs::perms::owner_exec, fs::perm_options::add);
  std::ofstream(dir / "perfwarden.yaml")
      << "version: 1\nserver: {url: \"http://127.0.0.1:" << server.port()
      << "\", project: proj}\ntarget_branch: main\ntestbed: t\nsuites:\n"
      << "  - {name: micro, type: gbench, binary: ./bench.sh, repetitions: 2,\n"
      << "     pass_env: [HF_TOKEN]}\n"
      << "  - name: cmd\n    type: command\n    build: env > build.env\n"
      << "    command: env > command.env\n    repetitions: 2\n    warmup: 0\n"
      << "    env: {SET_IN_YAML: from-yaml}\n    pass_env: [HF_TOKEN]\n";
  ASSERT_EQ(repo.Git("add -A").exit_code, 0);
  ASSERT_EQ(repo.Git("commit -q -m base").exit_code, 0);

  const testing::ShellOutcome run = testing::RunShell(
      "cd " + dir.string() + " && PERFWARDEN_TOKEN=pwt_cred_s3kr1t GITHUB_TOKEN=ghs_cred_s3kr1t" +
      " CI_JOB_TOKEN=job_cred_s3kr1t" +
      " CI_REPOSITORY_URL=https://gitlab-ci-token:job_cred_s3kr1t@gitlab.example/g/p.git" +
      " HF_TOKEN=hf_passed OPENAI_API_KEY=sk_unpassed_s3kr1t" + testing::AsanEnv() + " " +
      PERFWARDEN_BIN_DIR + "/perfwarden run");
  // Measured and spooled; then the stand-in server refused the token: a usage error.
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("the server refused the token"), std::string::npos) << run.output;
  const std::string request = server.Stop();
  EXPECT_NE(request.find("\r\nAuthorization: Bearer pwt_cred_s3kr1t"), std::string::npos)
      << request;

  for (const char* file : {"build.env", "command.env", "gbench.env"}) {
    const std::string env = "\n" + Read(dir / file);
    ASSERT_GT(env.size(), 1u) << file << " not written:\n" << run.output;
    EXPECT_EQ(env.find("s3kr1t"), std::string::npos) << file << ":\n" << env;
    EXPECT_EQ(env.find("PERFWARDEN_TOKEN"), std::string::npos) << file;
    EXPECT_NE(env.find("\nHF_TOKEN=hf_passed\n"), std::string::npos) << file << ":\n" << env;
    EXPECT_NE(env.find("PATH="), std::string::npos) << file;
  }
  EXPECT_NE(("\n" + Read(dir / "command.env")).find("\nSET_IN_YAML=from-yaml\n"),
            std::string::npos);
  // Same user, so a suite can read the runner's starting environment: the values are gone.
  const std::string runner = Read(dir / "runner.env");
  ASSERT_NE(runner.find("PATH="), std::string::npos) << runner;
  EXPECT_EQ(runner.find("cred_s3kr1t"), std::string::npos) << runner;
}

}  // namespace
}  // namespace perfwarden
