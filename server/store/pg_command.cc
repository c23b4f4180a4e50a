// SPDX-License-Identifier: Apache-2.0
#include "server/store/pg_command.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace perfwarden::store {

namespace {

constexpr size_t kTailBytes = 2000;

}  // namespace

std::string Tail(const std::string& text) {
  std::string tail =
      text.size() > kTailBytes ? "..." + text.substr(text.size() - kTailBytes) : text;
  while (!tail.empty() && (tail.back() == '\n' || tail.back() == ' ')) tail.pop_back();
  return tail;
}

std::string Join(const std::vector<std::string>& argv) {
  std::string joined;
  for (const std::string& arg : argv) joined += (joined.empty() ? "" : " ") + arg;
  return joined;
}

Result<CommandOutput> RunCommand(const std::vector<std::string>& argv) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) {
    return MakeError(ErrorCode::kUnavailable, std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, fds[1], 2);
  posix_spawn_file_actions_addchdir_np(&actions, "/");
  std::vector<char*> args;
  for (const std::string& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (rc != 0) {
    close(fds[0]);
    return MakeError(ErrorCode::kUnavailable,
                     "cannot run " + Join(argv) + ": " + std::strerror(rc));
  }
  CommandOutput result;
  char buffer[4096];
  for (;;) {
    const ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n > 0) {
      result.output.append(buffer, static_cast<size_t>(n));
    } else if (n == 0 || errno != EINTR) {
      break;
    }
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

tl::unexpected<Error> CommandFailed(const std::vector<std::string>& argv,
                                    const CommandOutput& out) {
  return MakeError(
      ErrorCode::kUnavailable,
      Join(argv) + " failed (exit " + std::to_string(out.exit_code) + "): " + Tail(out.output));
}

Result<CommandOutput> RunPg(const std::filesystem::path& bin_dir, const std::string& program,
                            std::vector<std::string> args, const std::string& system_user,
                            std::vector<std::string>* argv_out) {
  std::vector<std::string> argv;
  if (geteuid() == 0) {
    std::string runuser = "runuser";
    for (const char* candidate : {"/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser"}) {
      if (access(candidate, X_OK) == 0) {
        runuser = candidate;
        break;
      }
    }
    argv = {runuser, "-u", system_user, "--"};
  }
  argv.push_back((bin_dir / program).string());
  for (std::string& arg : args) argv.push_back(std::move(arg));
  if (argv_out != nullptr) *argv_out = argv;
  return RunCommand(argv);
}

}  // namespace perfwarden::store
