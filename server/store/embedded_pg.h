// SPDX-License-Identifier: Apache-2.0
// EmbeddedPostgres: perfwarden-server's own PostgreSQL cluster when no DSN is configured.
// It creates the cluster with initdb on first use (superuser "perfwarden" with a generated
// password kept in the data directory), starts it with pg_ctl on a free 127.0.0.1 port with
// no Unix socket, creates the perfwarden database and hands back its DSN. When running as root
// the binaries run as the postgres user (runuser), since PostgreSQL refuses to run as root.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>

#include "core/result.h"

namespace perfwarden::store {

struct EmbeddedPostgresOptions {
  std::filesystem::path data_dir = ".perfwarden/pg";  // the cluster (PGDATA)
  // Directory of initdb/pg_ctl; empty: $PERFWARDEN_PG_BIN, else the highest
  // /usr/lib/postgresql/<version>/bin.
  std::filesystem::path bin_dir;
  std::string database = "perfwarden";
  int port = 0;  // 0: a free port, picked at the first Start and kept for restarts
  // The account that owns and runs the cluster when this process is root.
  std::string system_user = "postgres";
  std::chrono::seconds start_timeout{60};
  // false: no fsync (initdb --no-sync, fsync=off): for throwaway test clusters only.
  bool durable = true;
};

class EmbeddedPostgres {
 public:
  explicit EmbeddedPostgres(EmbeddedPostgresOptions options = {});
  // Stops the cluster if this object started it.
  ~EmbeddedPostgres();
  EmbeddedPostgres(const EmbeddedPostgres&) = delete;
  EmbeddedPostgres& operator=(const EmbeddedPostgres&) = delete;

  // Creates the cluster if data_dir has none, starts it (or adopts one already running from
  // this data_dir, e.g. left by a killed server, once it accepts connections; a postmaster
  // killed with its server that lingers without accepting is waited for, up to 20 s, and the
  // cluster started again), makes sure the database exists, and returns its DSN. The port is
  // kept in <data_dir>/perfwarden.port and taken again at the next start when it is free. Errors:
  // kNotFound (no PostgreSQL binaries), kUnavailable (a command failed; the message names it and
  // ends with its output).
  Result<std::string> Start();
  // The least-privileged role the server runs as (after migrations, which need the owner):
  // creates role kAppRole if missing (password in <data_dir>/perfwarden_app.password), lets it
  // connect and read/write the rows of every table and view of the database, and nothing
  // else (no DDL, no changes to schema_migrations). Call it after each Migrate: tables made
  // by a migration get their grants here. Returns the role's DSN.
  Result<std::string> EnsureAppRole();
  static constexpr const char* kAppRole = "perfwarden_app";

  // pg_ctl stop -m fast. A later Start reuses the cluster and the port.
  Result<void> Stop();

  // After Start, for the supervisor (embedded_supervisor.h): starts the cluster again on the same
  // data directory and port (a stale postmaster.pid is PostgreSQL's to clear; a crashed cluster
  // recovers from its WAL while pg_ctl waits). Never runs initdb. Errors as Start's, ending with
  // the tail of postgres.log. Not thread-safe: one caller at a time, none concurrent with Stop.
  Result<void> Restart();
  // The pid of the postmaster that serves data_dir when one is alive (postmaster.pid names it
  // and /proc shows a live "postgres" process under that pid, not a zombie or a reused pid);
  // 0 when none is. Only reads files: safe from any thread.
  int LivePostmasterPid() const;

  bool running() const { return running_; }
  int port() const { return port_; }
  const std::string& dsn() const { return dsn_; }
  // The DSN of another database of the same cluster (tests create one per test).
  std::string DsnFor(const std::string& database) const;
  // The application role's DSN (EnsureAppRole), "" before it.
  const std::string& app_dsn() const { return app_dsn_; }
  const std::filesystem::path& data_dir() const { return data_dir_; }

 private:
  Result<void> ResolveBinaries();
  Result<void> InitCluster();
  Result<void> StartServer();
  bool AcceptsConnections() const;
  Result<void> EnsureDatabase();

  EmbeddedPostgresOptions options_;
  std::filesystem::path data_dir_;  // absolute
  std::filesystem::path bin_dir_;
  std::string password_;
  int port_ = 0;
  bool running_ = false;
  std::string dsn_;
  std::string app_dsn_;
};

// A new directory under the temp directory (named prefix + random), usable by the cluster's
// system user when this process is root (chowned to it), for a cluster's data or scratch
// files: what tests and benchmarks put an EmbeddedPostgres in. kInternal when it cannot be made.
Result<std::filesystem::path> MakeClusterTempDir(const std::string& prefix,
                                                 const std::string& system_user = "postgres");

// The PostgreSQL bin directory that EmbeddedPostgres would use (see bin_dir). kNotFound when
// none is installed.
Result<std::filesystem::path> FindPostgresBinDir(const std::filesystem::path& configured = {});

}  // namespace perfwarden::store
