// SPDX-License-Identifier: Apache-2.0
// One perfwarden-server child process (the built binary, PERFWARDEN_BIN_DIR) on a database DSN and
// a loopback port it picks, with extra flags (--config ...), or with arguments of its own (its
// embedded cluster); SIGTERM and the exit status on Stop(). For tests of the process as an
// operator runs it: several servers on one database, shutdown, the embedded cluster's supervisor.
#pragma once

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace perfwarden::testing {

// How to start the server: its arguments after the binary's name, where its stderr goes ("":
// inherited) and, for an LSan build, suppressions for the child (written to a file beside the
// log).
struct ServerLaunch {
  std::vector<std::string> args;
  std::string stderr_log;
  std::string lsan_suppressions;
};

class ServerProcess {
 public:
  // Forks and execs the server on `dsn`; Port() then waits for its "listening on" line.
  ServerProcess(const std::string& dsn, const std::string& admin_token,
                const std::vector<std::string>& extra_args = {})
      : ServerProcess(DsnLaunch(dsn, extra_args), admin_token) {}

  ServerProcess(ServerLaunch launch, const std::string& admin_token) {
    int out[2];
    if (::pipe(out) != 0) return;
    std::vector<std::string> args = {std::string(PERFWARDEN_BIN_DIR) + "/perfwarden-server"};
    args.insert(args.end(), launch.args.begin(), launch.args.end());
    std::vector<char*> argv;
    for (std::string& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    std::string lsan_options;
    if (!launch.lsan_suppressions.empty() && !launch.stderr_log.empty()) {
      const std::string file = launch.stderr_log + ".lsan.supp";
      if (std::FILE* supp = std::fopen(file.c_str(), "w"); supp != nullptr) {
        std::fputs(launch.lsan_suppressions.c_str(), supp);
        std::fclose(supp);
        lsan_options = "suppressions=" + file;
      }
    }
    pid_ = ::fork();
    if (pid_ == 0) {
      ::dup2(out[1], STDOUT_FILENO);
      if (!launch.stderr_log.empty()) {
        const int err = ::open(launch.stderr_log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (err >= 0) ::dup2(err, STDERR_FILENO);
      }
      ::close(out[0]);
      ::close(out[1]);
      ::setenv("PERFWARDEN_ADMIN_TOKEN", admin_token.c_str(), 1);
      if (!lsan_options.empty()) ::setenv("LSAN_OPTIONS", lsan_options.c_str(), 1);
      ::execv(argv[0], argv.data());
      std::perror("exec perfwarden-server");
      ::_exit(127);
    }
    ::close(out[1]);
    stdout_ = ::fdopen(out[0], "r");
  }
  ~ServerProcess() { Stop(); }
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  // The port from the server's "listening on http://127.0.0.1:PORT" line; 0 when it exited first.
  int Port() {
    if (port_ != 0 || stdout_ == nullptr) return port_;
    std::array<char, 1024> line{};
    while (std::fgets(line.data(), static_cast<int>(line.size()), stdout_) != nullptr) {
      const std::string text(line.data());
      const std::string marker = "listening on http://127.0.0.1:";
      if (auto at = text.find(marker); at != std::string::npos) {
        port_ = std::atoi(text.c_str() + at + marker.size());
        break;
      }
    }
    return port_;
  }

  // Sends SIGTERM without waiting.
  void Terminate() {
    if (pid_ > 0) ::kill(pid_, SIGTERM);
  }

  // SIGTERM and wait; the exit status (0: a graceful stop), -1 when not running or killed.
  int Stop() {
    if (pid_ <= 0) return -1;
    Terminate();
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    if (stdout_ != nullptr) std::fclose(stdout_);
    stdout_ = nullptr;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  }

 private:
  static ServerLaunch DsnLaunch(const std::string& dsn, const std::vector<std::string>& extra) {
    ServerLaunch launch;
    launch.args = {"--database-url", dsn, "--listen",    "127.0.0.1:0",
                   "--threads",      "4", "--log-level", "warn"};
    launch.args.insert(launch.args.end(), extra.begin(), extra.end());
    return launch;
  }

  pid_t pid_ = -1;
  FILE* stdout_ = nullptr;
  int port_ = 0;
};

}  // namespace perfwarden::testing
