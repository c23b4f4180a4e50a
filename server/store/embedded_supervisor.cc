// SPDX-License-Identifier: Apache-2.0
#include "server/store/embedded_supervisor.h"

#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/statvfs.h>
#include <sys/wait.h>

#include <algorithm>
#include <cctype>
#include <fstream>
#include <sstream>
#include <utility>

#include "server/store/pg_command.h"

namespace perfwarden::store {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

// Before a restart counts the postmaster as gone, it is looked for once more after this: an
// operator's `pg_ctl restart` leaves a moment without a postmaster.pid.
constexpr milliseconds kConfirmGone{200};
constexpr const char* kNoSpace = "no space left on device";

std::string Lower(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return text;
}

std::string LogTail(const std::filesystem::path& data_dir) {
  std::ifstream log(data_dir / "postgres.log");
  if (!log) return "";
  log.seekg(0, std::ios::end);
  const std::streamoff size = log.tellg();
  log.seekg(std::max<std::streamoff>(0, size - 4000));
  std::ostringstream text;
  text << log.rdbuf();
  return Tail(text.str());
}

// "0.5", "4", "30": a wait in seconds, for messages.
std::string Seconds(milliseconds wait) {
  const long long ms = std::max<long long>(0, wait.count());
  const long long tenths = (ms + 99) / 100;
  if (tenths % 10 == 0) return std::to_string(tenths / 10);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10);
}

std::uint64_t FreeBytes(const std::filesystem::path& dir) {
  struct statvfs fs {};
  if (statvfs(dir.c_str(), &fs) != 0) return UINT64_MAX;
  return static_cast<std::uint64_t>(fs.f_bavail) * fs.f_frsize;
}

// Reaps this process's exited children that are postgres processes (a killed postmaster and its
// backends, adopted through AdoptOrphanedPostmasters: left unreaped, pg_ctl and PostgreSQL take
// the postmaster's zombie for a live one) and says how `pid` ended when it was among them ("was
// killed by signal 9"), else "". Other children (pg_ctl, runuser) are RunCommand's to reap.
std::string ReapPostgresZombies(int pid) {
  siginfo_t info{};
  if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) return "";
  std::string how;
  const std::string self = std::to_string(getpid());
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::all_of(name.begin(), name.end(), ::isdigit)) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string text;
    if (!std::getline(stat, text)) continue;
    // "<pid> (<comm>) <state> <ppid> ..."
    const size_t open = text.find('(');
    const size_t close = text.rfind(')');
    if (open == std::string::npos || close == std::string::npos) continue;
    std::istringstream rest(text.substr(close + 1));
    std::string state, ppid;
    rest >> state >> ppid;
    if (ppid != self || state != "Z" || text.substr(open + 1, close - open - 1) != "postgres") {
      continue;
    }
    const int child = std::stoi(name);
    int status = 0;
    if (waitpid(child, &status, WNOHANG) != child || child != pid) continue;
    if (WIFSIGNALED(status)) how = "was killed by signal " + std::to_string(WTERMSIG(status));
    if (WIFEXITED(status)) how = "exited with status " + std::to_string(WEXITSTATUS(status));
  }
  return how;
}

}  // namespace

void AdoptOrphanedPostmasters() {
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    spdlog::warn("prctl(PR_SET_CHILD_SUBREAPER) failed: a killed postmaster is reaped by init");
  }
}

std::string SummarizeStartFailure(const std::string& output, const std::string& fallback) {
  const std::string text = Lower(output);
  auto has = [&](const char* needle) { return text.find(needle) != std::string::npos; };
  if (has("no space left on device") || has("could not extend file") || has("disk full")) {
    return kNoSpace;
  }
  if (has("could not bind") || has("address already in use")) {
    return "its port is taken by another process";
  }
  if (has("pre-existing shared memory block")) {
    return "the old postmaster's processes still hold its shared memory";
  }
  if (has("lock file") && has("already exists")) {
    return "another postmaster holds the data directory's lock file";
  }
  if (has("permission denied")) return "permission denied in its data directory";
  if (has("out of memory") || has("could not fork")) return "out of memory or processes";
  return fallback;
}

EmbeddedSupervisor::EmbeddedSupervisor(EmbeddedPostgres& cluster, SupervisorOptions options)
    : cluster_(cluster), options_(std::move(options)) {}

EmbeddedSupervisor::~EmbeddedSupervisor() { Stop(); }

void EmbeddedSupervisor::Start() {
  std::lock_guard lock(mu_);
  if (thread_.joinable() || stopping_) return;
  up_since_ = Clock::now();
  thread_ = std::thread([this] { Loop(); });
}

void EmbeddedSupervisor::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  wake_.notify_all();
  if (thread_.joinable()) thread_.join();
  // A postmaster killed just now, unreaped, would hold up the cluster's pg_ctl stop.
  (void)ReapPostgresZombies(0);
}

bool EmbeddedSupervisor::SleepFor(milliseconds wait) {
  std::unique_lock lock(mu_);
  return !wake_.wait_for(lock, wait, [this] { return stopping_; });
}

milliseconds EmbeddedSupervisor::Backoff() const {
  if (backoff_steps_ == 0) return milliseconds(0);
  milliseconds wait = options_.initial_backoff;
  for (int i = 1; i < backoff_steps_ && wait < options_.max_backoff; ++i) wait *= 2;
  return std::min(wait, options_.max_backoff);
}

void EmbeddedSupervisor::Loop() {
  for (;;) {
    if (const int pid = cluster_.LivePostmasterPid(); pid != 0) {
      last_pid_ = pid;
      (void)ReapPostgresZombies(0);  // backends of a postmaster killed before
    } else {
      if (!SleepFor(kConfirmGone)) return;
      if (cluster_.LivePostmasterPid() == 0) Recover();
    }
    CheckDisk();
    std::unique_lock lock(mu_);
    if (stopping_) return;
    if (up_ && backoff_steps_ > 0 && Clock::now() - up_since_ >= options_.healthy_reset) {
      backoff_steps_ = 0;
      spdlog::info("embedded PostgreSQL: up for {} s since its restart; restart backoff reset",
                   Seconds(options_.healthy_reset));
    }
    if (wake_.wait_for(lock, options_.probe_interval, [this] { return stopping_; })) return;
  }
}

void EmbeddedSupervisor::Recover() {
  const auto down_since = Clock::now();
  const std::string how = ReapPostgresZombies(std::exchange(last_pid_, 0));
  const std::string log_tail = LogTail(cluster_.data_dir());
  {
    std::lock_guard lock(mu_);
    up_ = false;
    attempt_ = 0;
    reason_ = "the postmaster " + (how.empty() ? std::string("exited") : how);
    if (std::string why = SummarizeStartFailure(log_tail, ""); !why.empty()) {
      reason_ += " (" + why + ")";
    }
  }
  spdlog::error("embedded PostgreSQL: the postmaster of {} is gone ({}); restarting it. {}: {}",
                cluster_.data_dir().string(), how.empty() ? "exited" : how,
                (cluster_.data_dir() / "postgres.log").string(), log_tail);
  bool disk_bound = false;  // the last attempt failed for want of space
  for (;;) {
    milliseconds wait;
    {
      std::lock_guard lock(mu_);
      wait = Backoff();
      next_attempt_ = Clock::now() + wait;
    }
    // A start that failed for want of space is tried again as soon as there is room.
    const auto until = Clock::now() + wait;
    while (Clock::now() < until) {
      const auto left = std::chrono::duration_cast<milliseconds>(until - Clock::now());
      if (!SleepFor(std::min(left, options_.probe_interval))) return;
      if (disk_bound && FreeBytes(cluster_.data_dir()) >= options_.min_free_bytes) break;
    }
    (void)ReapPostgresZombies(0);  // the old backends, as they exit
    if (cluster_.LivePostmasterPid() != 0) {
      // Someone else (an operator's pg_ctl start) brought it back meanwhile.
      std::lock_guard lock(mu_);
      up_ = true;
      up_since_ = Clock::now();
      reason_.clear();
      spdlog::warn("embedded PostgreSQL: a postmaster runs again (not started by the server)");
      return;
    }
    int attempt = 0;
    {
      std::lock_guard lock(mu_);
      if (stopping_) return;
      attempt = ++attempt_;
      attempting_ = true;
    }
    Result<void> started = cluster_.Restart();
    std::unique_lock lock(mu_);
    attempting_ = false;
    ++backoff_steps_;
    if (started) {
      up_ = true;
      up_since_ = Clock::now();
      reason_.clear();
      ++restarts_;
      const double down_s = std::chrono::duration<double>(Clock::now() - down_since).count();
      lock.unlock();
      spdlog::warn("embedded PostgreSQL: restarted (attempt {}, down {:.1f} s)", attempt, down_s);
      if (options_.on_restart) options_.on_restart(true);
      return;
    }
    ++failed_restarts_;
    reason_ = SummarizeStartFailure(started.error().message, "pg_ctl start failed");
    disk_bound = reason_ == kNoSpace;
    const milliseconds next = Backoff();
    lock.unlock();
    spdlog::error("embedded PostgreSQL: restart attempt {} failed (next in {} s): {}", attempt,
                  Seconds(next), started.error().message);
    if (options_.on_restart) options_.on_restart(false);
  }
}

void EmbeddedSupervisor::CheckDisk() {
  const std::uint64_t free_bytes = FreeBytes(cluster_.data_dir());
  if (free_bytes == UINT64_MAX) return;  // statvfs failed: nothing known
  const bool full = free_bytes < options_.min_free_bytes;
  bool was_full = false;
  {
    std::lock_guard lock(mu_);
    was_full = disk_full_;
    disk_full_ = full;
    free_bytes_ = free_bytes;
  }
  if (full && !was_full) {
    spdlog::error(
        "embedded PostgreSQL: the filesystem of {} has {} KiB free (under {} MiB): writes fail "
        "until space is freed",
        cluster_.data_dir().string(), free_bytes >> 10, options_.min_free_bytes >> 20);
  } else if (!full && was_full) {
    spdlog::warn("embedded PostgreSQL: the filesystem of {} has {} MiB free again",
                 cluster_.data_dir().string(), free_bytes >> 20);
  }
}

std::string EmbeddedSupervisor::DownReason() const {
  std::lock_guard lock(mu_);
  if (!up_) {
    if (attempting_) {
      return "embedded PostgreSQL restarting (attempt " + std::to_string(attempt_) +
             " under way): " + reason_;
    }
    const auto left = std::max(
        milliseconds(0), std::chrono::duration_cast<milliseconds>(next_attempt_ - Clock::now()));
    return "embedded PostgreSQL restarting (attempt " + std::to_string(attempt_ + 1) +
           ", next in " + Seconds(left) + " s): " + reason_;
  }
  if (disk_full_) {
    return "embedded PostgreSQL's disk is full (" + std::to_string(free_bytes_ >> 10) +
           " KiB free, " + std::to_string(options_.min_free_bytes >> 20) + " MiB needed)";
  }
  return "";
}

SupervisorStats EmbeddedSupervisor::Stats() const {
  std::lock_guard lock(mu_);
  return SupervisorStats{up_, disk_full_, restarts_, failed_restarts_};
}

}  // namespace perfwarden::store
