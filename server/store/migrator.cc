// SPDX-License-Identifier: Apache-2.0
#include "server/store/migrator.h"

#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>

#include "server/store/pg_error.h"
#include "server/store/pg_util.h"
#include "server/store/pool.h"

#ifndef PERFWARDEN_MIGRATIONS_DIR
#define PERFWARDEN_MIGRATIONS_DIR "migrations"
#endif

namespace perfwarden::store {
namespace {

constexpr const char* kCreateTable = R"sql(
CREATE TABLE IF NOT EXISTS schema_migrations (
  version    integer PRIMARY KEY,
  name       text NOT NULL,
  checksum   text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
))sql";

struct Applied {
  std::string name;
  std::string checksum;
};

}  // namespace

std::filesystem::path MigratorOptions::DefaultMigrationsDir() {
  // Installed (the Debian package: /usr/bin/perfwarden-server and
  // /usr/share/perfwarden-server/migrations), the files beside the program; else the source
  // tree's, which a build uses in place.
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    std::filesystem::path installed =
        exe.parent_path().parent_path() / "share" / "perfwarden-server" / "migrations";
    if (std::filesystem::is_directory(installed, ec)) return installed;
  }
  return PERFWARDEN_MIGRATIONS_DIR;
}

Result<std::vector<Migration>> LoadMigrations(const std::filesystem::path& dir) {
  static const std::regex kName(R"(^([0-9]{4})_[a-z0-9]+(_[a-z0-9]+)*\.sql$)");
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    return InvalidArgument("migrations directory " + dir.string() + " does not exist",
                           "migrations_dir");
  }
  std::vector<Migration> migrations;
  std::map<int, std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (entry.path().extension() != ".sql") continue;
    std::smatch match;
    if (!std::regex_match(file, match, kName)) {
      return InvalidArgument("migration file " + file + " is not named NNNN_verb_object.sql",
                             "migrations_dir");
    }
    const int version = std::stoi(match[1].str());
    if (auto [it, inserted] = seen.emplace(version, file); !inserted) {
      return InvalidArgument(
          "migrations " + it->second + " and " + file + " share version " + match[1].str(),
          "migrations_dir");
    }
    std::ifstream in(entry.path(), std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in) return InvalidArgument("cannot read " + entry.path().string(), "migrations_dir");
    Migration m;
    m.version = version;
    m.name = file.substr(0, file.size() - 4);
    m.sql = text.str();
    m.checksum = pgutil::Sha256Hex(m.sql);
    migrations.push_back(std::move(m));
  }
  if (ec) return InvalidArgument("cannot list " + dir.string() + ": " + ec.message());
  std::sort(migrations.begin(), migrations.end(),
            [](const Migration& a, const Migration& b) { return a.version < b.version; });
  return migrations;
}

Result<MigrationReport> Migrate(const std::string& dsn, const MigratorOptions& options) {
  Result<std::vector<Migration>> migrations = LoadMigrations(options.dir);
  if (!migrations) return tl::unexpected(migrations.error());

  std::string step = "connect";
  try {
    pqxx::connection conn(WithConnectTimeout(dsn, options.connect_timeout_s));

    // Session-level lock: it spans the per-migration transactions below and is released when
    // the connection ends, even if this process dies.
    step = "take the migration lock";
    {
      pqxx::nontransaction nt(conn);
      nt.exec("SET lock_timeout = " +
              nt.quote(std::to_string(options.lock_wait.count() * 1000) + "ms"));
      nt.exec_params("SELECT pg_advisory_lock($1)", kMigrationLockKey);
      nt.exec("SET lock_timeout = 0");
    }

    step = "read schema_migrations";
    std::map<int, Applied> applied;
    {
      pqxx::work tx(conn);
      // Only when missing: a server whose role may not create tables (docs/operations.md,
      // least privilege) reads an up-to-date database without any DDL.
      if (tx.exec("SELECT to_regclass('schema_migrations') IS NULL")[0][0].as<bool>()) {
        tx.exec(kCreateTable);
      }
      for (const auto& row : tx.exec("SELECT version, name, checksum FROM schema_migrations")) {
        applied[row[0].as<int>()] = Applied{row[1].as<std::string>(), row[2].as<std::string>()};
      }
      tx.commit();
    }

    MigrationReport report;
    std::map<int, const Migration*> known;
    for (const Migration& m : *migrations) known[m.version] = &m;
    for (const auto& [version, record] : applied) {
      auto it = known.find(version);
      if (it == known.end()) {
        return MakeError(ErrorCode::kConflict, "the database has migration " + record.name +
                                                   " applied, which this build does not have (" +
                                                   options.dir.string() +
                                                   "); run a newer perfwarden-server");
      }
      if (it->second->checksum != record.checksum) {
        return MakeError(ErrorCode::kConflict,
                         "migration " + record.name + " was changed after it was applied " +
                             "(checksum " + record.checksum.substr(0, 12) + " in the database, " +
                             it->second->checksum.substr(0, 12) +
                             " on disk); migrations are forward-only: restore the file and "
                             "put the change in a new migration");
      }
      report.version = std::max(report.version, version);
    }

    for (const Migration& m : *migrations) {
      if (applied.count(m.version) != 0) continue;
      step = "apply migration " + m.name;
      pqxx::work tx(conn);
      tx.exec(m.sql);
      tx.exec_params("INSERT INTO schema_migrations (version, name, checksum) VALUES ($1, $2, $3)",
                     m.version, m.name, m.checksum);
      tx.commit();
      report.applied.push_back(m.name);
      report.version = std::max(report.version, m.version);
    }

    step = "release the migration lock";
    pqxx::nontransaction nt(conn);
    nt.exec_params("SELECT pg_advisory_unlock($1)", kMigrationLockKey);
    return report;
  } catch (const std::exception& e) {
    PgFailure failure = MapPgException(e, step);
    // A failing migration is a defect of the file (or of the database), not bad client input.
    if (step.rfind("apply", 0) == 0 && failure.error.code != ErrorCode::kUnavailable) {
      failure.error.code = ErrorCode::kInternal;
    }
    return tl::unexpected(std::move(failure.error));
  }
}

}  // namespace perfwarden::store
