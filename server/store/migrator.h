// SPDX-License-Identifier: Apache-2.0
// Migrator: applies migrations/NNNN_verb_object.sql files that the database has not seen,
// in version order, each in its own transaction, under a PostgreSQL advisory lock so that
// servers starting at once apply every file exactly once. Applied files are recorded (version,
// name, SHA-256 of the text, time) in schema_migrations; editing an applied file is refused.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/result.h"

namespace perfwarden::store {

// The advisory lock key the migrator holds while it works ("perfward", the name's first eight
// letters, in ASCII).
inline constexpr int64_t kMigrationLockKey = 0x7065726677617264;

struct Migration {
  int version = 0;       // NNNN
  std::string name;      // the file name without ".sql", e.g. "0001_create_schema"
  std::string sql;       // the file text
  std::string checksum;  // SHA-256 of sql, lowercase hex
};

struct MigrationReport {
  std::vector<std::string> applied;  // names applied by this call, in order
  int version = 0;                   // the newest version in the database afterwards
};

struct MigratorOptions {
  std::filesystem::path dir = DefaultMigrationsDir();
  // How long to wait for another server's migrator to finish (lock_timeout).
  std::chrono::seconds lock_wait{120};
  int connect_timeout_s = 10;

  static std::filesystem::path DefaultMigrationsDir();
};

// Reads and validates the migration files of `dir`: every *.sql must be named
// NNNN_lowercase_words.sql, versions must be unique. Sorted by version.
Result<std::vector<Migration>> LoadMigrations(const std::filesystem::path& dir);

// Applies the pending migrations to the database at `dsn` (on a connection of its own, held
// for the whole run because the advisory lock belongs to the session). Errors:
// kInvalidArgument (bad files), kUnavailable (cannot connect, lock wait exceeded), kConflict
// (an applied file changed, or the database has a version this build does not know),
// kInternal (a migration failed: it was rolled back, the ones before it stay applied).
Result<MigrationReport> Migrate(const std::string& dsn, const MigratorOptions& options = {});

}  // namespace perfwarden::store
