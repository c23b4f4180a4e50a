// SPDX-License-Identifier: Apache-2.0
// Spool: the runner's on-disk queue of run uploads not yet acknowledged by the server. A run is
// written here (atomically, fsynced) before any attempt to post it, so no result is lost when
// the server is down; `perfwarden push` and every later `perfwarden run` drain it. Uploads the
// server rejects for good move to rejected/ with the reason beside them, never silently deleted.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace perfwarden::client {

struct SpooledRun {
  std::string run_id;
  std::filesystem::path path;  // <dir>/<run_id>.json (or rejected/<run_id>.json)
  std::filesystem::file_time_type mtime;
};

// Holds the spool's advisory lock (flock on <dir>/.lock) until destroyed.
class SpoolLock {
 public:
  SpoolLock(SpoolLock&& other) noexcept;
  SpoolLock& operator=(SpoolLock&& other) noexcept;
  SpoolLock(const SpoolLock&) = delete;
  SpoolLock& operator=(const SpoolLock&) = delete;
  ~SpoolLock();

 private:
  friend class Spool;
  explicit SpoolLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

class Spool {
 public:
  // Temp files of an interrupted Put older than this are deleted by Open and CleanStaleTemp.
  static constexpr std::chrono::seconds kStaleTempAge{3600};

  // Opens the spool at `dir`, creating it (mode 0700: uploads may name private code) when
  // missing, and cleans stale temp files. kUnavailable when the directory cannot be made.
  static Result<Spool> Open(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }

  // Writes `upload_json` as <run_id>.json: to a temp file ".tmp-<run_id>.<unique>" in the same
  // directory, fsync, rename, fsync of the directory; a reader never sees a partial file and a
  // crash leaves either the old state or the whole new file. An existing file of the same run is
  // replaced. Returns the path. kInvalidArgument (field "run_id") when run_id is not a safe
  // file name: 1-128 of [A-Za-z0-9_-] (run ids are UUIDs).
  Result<std::string> Put(const std::string& run_id, const std::string& upload_json);

  // The queued runs, oldest first (by modification time, then name); temp files, the lock and
  // rejected/ are not listed.
  Result<std::vector<SpooledRun>> List() const;
  // The rejected runs (rejected/<run_id>.json), in the same order.
  Result<std::vector<SpooledRun>> ListRejected() const;

  // The upload text of a queued run; kNotFound when it is not queued.
  Result<std::string> Read(const std::string& run_id) const;

  // Deletes a queued run (the server acknowledged it); kNotFound when it is not queued.
  Result<void> Remove(const std::string& run_id);

  // Moves a queued run to rejected/<run_id>.json with `reason` in rejected/<run_id>.error.txt,
  // for uploads the server refused for good: the queue moves on, the data stays for a human.
  // The reason is written first, so a crash in between leaves the run queued (it will be posted
  // and rejected again). kNotFound when the run is not queued.
  Result<void> MarkRejected(const std::string& run_id, const std::string& reason);

  // Deletes temp files older than `max_age` (left by a Put that was killed); returns how many.
  Result<size_t> CleanStaleTemp(std::chrono::seconds max_age = kStaleTempAge);

  // Takes the spool's exclusive advisory lock, so that two runners sharing a spool do not post
  // the same file at once: one non-blocking try, then retries until `timeout`. kUnavailable when
  // another process still holds it then. Locks are per open file, so two Spool objects of one
  // process exclude each other too.
  Result<SpoolLock> Lock(std::chrono::milliseconds timeout) const;

 private:
  explicit Spool(std::filesystem::path dir) : dir_(std::move(dir)) {}

  std::filesystem::path dir_;
};

// Whether `run_id` may name a spool file (see Spool::Put).
bool IsValidSpoolRunId(const std::string& run_id);

}  // namespace perfwarden::client
