// SPDX-License-Identifier: Apache-2.0
#include "runner/run/process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <thread>

#include "config/secret_env.h"

extern char** environ;

namespace perfwarden::run {
namespace {

using Clock = std::chrono::steady_clock;

// Whether the child inherits the runner's variable `name`.
bool Inherited(const std::string& name, const ProcessOptions& options) {
  switch (config::ClassifyEnv(name)) {
    case config::SecretEnv::kNone:
      return true;
    case config::SecretEnv::kSecretLike:
      return std::find(options.pass_env.begin(), options.pass_env.end(), name) !=
             options.pass_env.end();
    case config::SecretEnv::kCredential:
      return false;
  }
  return false;
}

std::vector<std::string> Environment(const ProcessOptions& options) {
  const std::map<std::string, std::string>& extra = options.env;
  std::vector<std::string> out;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (extra.count(name) == 0 && Inherited(name, options)) out.push_back(std::move(entry));
  }
  for (const auto& [name, value] : extra) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

}  // namespace

Result<ProcessResult> RunProcess(const ProcessOptions& options) {
  if (options.argv.empty()) return InvalidArgument("no command to run");
  std::vector<std::string> argv = options.argv;
  std::vector<std::string> envp = Environment(options);
  std::vector<char*> argv_ptrs = Pointers(argv);
  std::vector<char*> envp_ptrs = Pointers(envp);

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (!options.output_file.empty()) {
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, options.output_file.c_str(),
                                     O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&actions, STDOUT_FILENO, STDERR_FILENO);
  } else {
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
  }
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (!options.cwd.empty()) {
    // glibc 2.29+: the child changes directory before exec.
    posix_spawn_file_actions_addchdir_np(&actions, options.cwd.c_str());
  }
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  // Its own process group, so that a timeout kills the benchmark and whatever it started.
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
  posix_spawnattr_setpgroup(&attr, 0);

  const Clock::time_point start = Clock::now();
  pid_t pid = -1;
  const int spawned =
      posix_spawnp(&pid, argv[0].c_str(), &actions, &attr, argv_ptrs.data(), envp_ptrs.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  if (spawned != 0) {
    return MakeError(
        ErrorCode::kNotFound,
        "cannot run " + argv[0] + ": " + std::strerror(spawned) +
            (options.cwd.empty() ? std::string() : " (in " + options.cwd.string() + ")"));
  }

  ProcessResult result;
  int status = 0;
  bool killed = false;
  Clock::time_point kill_at = Clock::time_point::max();
  for (;;) {
    const pid_t done = waitpid(pid, &status, options.timeout.count() > 0 ? WNOHANG : 0);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) {
      return MakeError(ErrorCode::kUnavailable, "waitpid: " + std::string(std::strerror(errno)));
    }
    if (done == 0) {
      const Clock::time_point now = Clock::now();
      if (!killed && now - start > options.timeout) {
        result.timed_out = true;
        killed = true;
        kill(-pid, SIGTERM);
        kill_at = now + std::chrono::seconds(5);
      } else if (killed && now > kill_at) {
        kill(-pid, SIGKILL);
        kill_at = Clock::time_point::max();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  result.wall = Clock::now() - start;
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

std::string FileText(const std::filesystem::path& path) {
  return FileTail(path, std::numeric_limits<size_t>::max());
}

std::string FileTail(const std::filesystem::path& path, size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "";
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size <= 0) return "";
  // Compared unsigned, so that max_bytes may be any size_t (FileText asks for all).
  const size_t take = std::min(static_cast<size_t>(size), max_bytes);
  in.seekg(size - static_cast<std::streamoff>(take));
  std::string text(take, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  return text;
}

std::string ShellQuote(const std::vector<std::string>& argv) {
  std::string out;
  for (const std::string& arg : argv) {
    if (!out.empty()) out += ' ';
    const bool plain = !arg.empty() && arg.find_first_not_of(
                                           "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                           "0123456789_-./=:,+@%") == std::string::npos;
    if (plain) {
      out += arg;
      continue;
    }
    out += '\'';
    for (char c : arg) {
      if (c == '\'') {
        out += "'\\''";
      } else {
        out += c;
      }
    }
    out += '\'';
  }
  return out;
}

}  // namespace perfwarden::run
