// SPDX-License-Identifier: Apache-2.0
#include "server/store/embedded_pg.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <pqxx/pqxx>
#include <sstream>
#include <thread>
#include <vector>

#include "core/private_file.h"
#include "server/store/pg_command.h"
#include "server/store/pg_error.h"

namespace perfwarden::store {
namespace {

namespace fs = std::filesystem;

constexpr const char* kSuperuser = "perfwarden";
constexpr const char* kPasswordFile = "perfwarden.password";
constexpr const char* kAppPasswordFile = "perfwarden_app.password";
constexpr const char* kLogFile = "postgres.log";
// The port the cluster last listened on: the next start takes it again when it is free, so a
// second server pointed at this cluster keeps finding it across restarts.
constexpr const char* kPortFile = "perfwarden.port";
Result<int> FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return MakeError(ErrorCode::kUnavailable, "socket: " + std::string(strerror(errno)));
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t length = sizeof addr;
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &length) == 0;
  const int error = errno;
  close(fd);
  if (!ok)
    return MakeError(ErrorCode::kUnavailable, "bind 127.0.0.1:0: " + std::string(strerror(error)));
  return static_cast<int>(ntohs(addr.sin_port));
}

// Whether 127.0.0.1:port can be bound now.
bool LoopbackPortFree(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  const int yes = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  close(fd);
  return ok;
}

Result<std::string> RandomHex(size_t bytes) {
  std::ifstream urandom("/dev/urandom", std::ios::binary);
  std::string raw(bytes, '\0');
  if (!urandom.read(raw.data(), static_cast<std::streamsize>(bytes))) {
    return MakeError(ErrorCode::kInternal, "cannot read /dev/urandom");
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (char c : raw) {
    const auto byte = static_cast<unsigned char>(c);
    hex += kHex[byte >> 4];
    hex += kHex[byte & 0xf];
  }
  return hex;
}

// The (uid, gid) a private file is handed to: the cluster's system user when this process runs
// as root, none otherwise.
std::optional<std::pair<uid_t, gid_t>> FileOwner(const passwd* owner) {
  if (owner == nullptr) return std::nullopt;
  return std::make_pair(owner->pw_uid, owner->pw_gid);
}

std::string QuoteDsnValue(const std::string& value) {
  if (!value.empty() && value.find_first_of(" '\\") == std::string::npos) return value;
  std::string quoted = "'";
  for (char c : value) {
    if (c == '\'' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "'";
}

// The cluster's PostgreSQL major version (PG_VERSION), 0 when unknown.
int MajorVersion(const fs::path& data_dir) {
  std::ifstream in(data_dir / "PG_VERSION");
  int version = 0;
  in >> version;
  return version;
}

}  // namespace

Result<fs::path> FindPostgresBinDir(const fs::path& configured) {
  std::vector<fs::path> candidates;
  if (!configured.empty()) {
    candidates.push_back(configured);
  } else if (const char* env = std::getenv("PERFWARDEN_PG_BIN"); env != nullptr && *env != '\0') {
    candidates.push_back(env);
  } else {
    std::error_code ec;
    std::vector<std::pair<int, fs::path>> versions;
    for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
      const std::string name = entry.path().filename().string();
      if (!name.empty() && std::all_of(name.begin(), name.end(), ::isdigit)) {
        versions.emplace_back(std::stoi(name), entry.path() / "bin");
      }
    }
    std::sort(versions.rbegin(), versions.rend());
    for (auto& [version, path] : versions) candidates.push_back(path);
  }
  for (const fs::path& dir : candidates) {
    if (access((dir / "initdb").c_str(), X_OK) == 0 &&
        access((dir / "pg_ctl").c_str(), X_OK) == 0) {
      return dir;
    }
  }
  return MakeError(ErrorCode::kNotFound,
                   configured.empty()
                       ? "no PostgreSQL binaries (initdb, pg_ctl) in $PERFWARDEN_PG_BIN or "
                         "/usr/lib/postgresql/*/bin; install PostgreSQL or configure a database URL"
                       : "no initdb/pg_ctl in " + configured.string());
}

EmbeddedPostgres::EmbeddedPostgres(EmbeddedPostgresOptions options)
    : options_(std::move(options)), port_(options_.port) {
  std::error_code ec;
  data_dir_ = fs::absolute(options_.data_dir, ec).lexically_normal();
  if (ec) data_dir_ = options_.data_dir;
}

EmbeddedPostgres::~EmbeddedPostgres() {
  if (running_) (void)Stop();
}

std::string EmbeddedPostgres::DsnFor(const std::string& database) const {
  return "host=127.0.0.1 port=" + std::to_string(port_) + " user=" + kSuperuser +
         " password=" + QuoteDsnValue(password_) + " dbname=" + QuoteDsnValue(database);
}

Result<void> EmbeddedPostgres::ResolveBinaries() {
  if (!bin_dir_.empty()) return {};
  Result<fs::path> dir = FindPostgresBinDir(options_.bin_dir);
  if (!dir) return tl::unexpected(dir.error());
  bin_dir_ = *dir;
  return {};
}

Result<void> EmbeddedPostgres::InitCluster() {
  std::error_code ec;
  const passwd* owner = nullptr;
  if (geteuid() == 0) {
    owner = getpwnam(options_.system_user.c_str());
    if (owner == nullptr) {
      return MakeError(ErrorCode::kUnavailable,
                       "running as root, but there is no user " + options_.system_user +
                           " to run PostgreSQL as (PostgreSQL refuses to run as root)");
    }
  }
  if (fs::exists(data_dir_ / "PG_VERSION", ec)) return {};
  if (fs::exists(data_dir_, ec) && !fs::is_empty(data_dir_, ec)) {
    return MakeError(
        ErrorCode::kUnavailable,
        data_dir_.string() + " exists but holds no PostgreSQL cluster (no PG_VERSION)");
  }
  fs::create_directories(data_dir_, ec);
  if (ec) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot create " + data_dir_.string() + ": " + ec.message());
  }
  if (owner != nullptr && chown(data_dir_.c_str(), owner->pw_uid, owner->pw_gid) != 0) {
    return MakeError(ErrorCode::kUnavailable,
                     "chown " + data_dir_.string() + ": " + std::strerror(errno));
  }
  chmod(data_dir_.c_str(), 0700);

  Result<std::string> password = RandomHex(16);
  if (!password) return tl::unexpected(password.error());
  // initdb wants an empty directory, so the password file waits beside it until initdb is done.
  const fs::path pwfile =
      data_dir_.parent_path() / ("." + data_dir_.filename().string() + ".initpw");
  if (auto written = WritePrivateFile(pwfile, *password + "\n", FileOwner(owner)); !written)
    return written;
  std::vector<std::string> argv;
  std::vector<std::string> args = {"-D",
                                   data_dir_.string(),
                                   "-U",
                                   kSuperuser,
                                   "--pwfile=" + pwfile.string(),
                                   "--auth=scram-sha-256",
                                   "--encoding=UTF8",
                                   "--locale=C"};
  if (!options_.durable) args.push_back("--no-sync");
  Result<CommandOutput> out =
      RunPg(bin_dir_, "initdb", std::move(args), options_.system_user, &argv);
  fs::remove(pwfile, ec);
  if (!out) return tl::unexpected(out.error());
  if (out->exit_code != 0) {
    std::string hint;
    if (owner != nullptr) {
      hint = " (the " + options_.system_user + " user must be able to reach " + data_dir_.string() +
             ": every parent directory needs o+x)";
    }
    auto error = CommandFailed(argv, *out);
    error.value().message += hint;
    return error;
  }
  if (auto written =
          WritePrivateFile(data_dir_ / kPasswordFile, *password + "\n", FileOwner(owner));
      !written) {
    return written;
  }
  std::ofstream conf(data_dir_ / "postgresql.conf", std::ios::app);
  conf << "\n# perfwarden: loopback TCP only, no Unix socket (perfwarden connects to 127.0.0.1).\n"
       << "listen_addresses = '127.0.0.1'\n"
       << "unix_socket_directories = ''\n";
  if (!conf) {
    return MakeError(ErrorCode::kUnavailable,
                     "cannot append to " + (data_dir_ / "postgresql.conf").string());
  }
  return {};
}

// Whether the cluster answers on port_ (the password is known by then).
bool EmbeddedPostgres::AcceptsConnections() const {
  try {
    pqxx::connection conn(DsnFor("postgres") + " connect_timeout=2");
    return conn.is_open();
  } catch (const std::exception&) {
    return false;
  }
}

Result<void> EmbeddedPostgres::StartServer() {
  // A postmaster left running from this data directory (its server was killed): adopt it, but
  // only once it accepts connections. A postmaster killed with its server may still be in the
  // process table for a moment (pg_ctl status says "running") while it accepts nothing; wait
  // for it to go, then start the cluster again (PostgreSQL recovers from its WAL).
  std::vector<std::string> argv;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    Result<CommandOutput> status = RunPg(bin_dir_, "pg_ctl", {"status", "-D", data_dir_.string()},
                                         options_.system_user, &argv);
    if (!status) return tl::unexpected(status.error());
    if (status->exit_code != 0) break;  // nothing runs: start it below
    std::ifstream pid_file(data_dir_ / "postmaster.pid");
    std::string line;
    for (int i = 0; i < 4 && std::getline(pid_file, line); ++i) {
    }
    const int port = std::atoi(line.c_str());
    if (port > 0) {
      port_ = port;
      if (AcceptsConnections()) return {};
    }
    if (std::chrono::steady_clock::now() >= deadline) {
      return MakeError(ErrorCode::kUnavailable,
                       "a PostgreSQL server still runs from " + data_dir_.string() +
                           (port > 0 ? " on port " + std::to_string(port) : std::string()) +
                           " but accepts no connections after 20 s; stop it (pg_ctl stop -D " +
                           data_dir_.string() + ") and start again");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(250));
  }
  if (options_.port == 0 && port_ == 0) {
    std::ifstream port_file(data_dir_ / kPortFile);
    int kept = 0;
    if (port_file >> kept && kept > 0 && kept < 65536 && LoopbackPortFree(kept)) port_ = kept;
  }

  const bool may_change_port = options_.port == 0 && !running_ && dsn_.empty();
  for (int attempt = 0;; ++attempt) {
    if (port_ == 0) {
      Result<int> port = FreeLoopbackPort();
      if (!port) return tl::unexpected(port.error());
      port_ = *port;
    }
    std::string server_options = "-p " + std::to_string(port_);
    // After a crash (a killed postmaster), PostgreSQL syncs the data directory before replaying
    // its WAL; one syncfs() instead of an fsync per file (1,000+ after the migrations) takes
    // seconds off the supervisor's restart on a busy disk (PostgreSQL 14 and later).
    if (MajorVersion(data_dir_) >= 14) server_options += " -c recovery_init_sync_method=syncfs";
    if (!options_.durable) {
      server_options += " -c fsync=off -c synchronous_commit=off -c full_page_writes=off";
    }
    Result<CommandOutput> out =
        RunPg(bin_dir_, "pg_ctl",
              {"start", "-D", data_dir_.string(), "-l", (data_dir_ / kLogFile).string(), "-w", "-t",
               std::to_string(options_.start_timeout.count()), "-o", server_options},
              options_.system_user, &argv);
    if (!out) return tl::unexpected(out.error());
    if (out->exit_code == 0) {
      // Kept for the next start (and for whoever points a second server at this cluster); a
      // file that cannot be written only costs the port's stability.
      std::ofstream(data_dir_ / kPortFile, std::ios::trunc) << port_ << "\n";
      return {};
    }
    // Someone took the port between our probe and the postmaster's bind: try another.
    if (may_change_port && attempt < 2) {
      port_ = 0;
      continue;
    }
    std::ifstream log(data_dir_ / kLogFile);
    std::ostringstream log_text;
    log_text << log.rdbuf();
    auto error = CommandFailed(argv, *out);
    error.value().message += "\n" + (data_dir_ / kLogFile).string() + ": " + Tail(log_text.str());
    return error;
  }
}

Result<void> EmbeddedPostgres::EnsureDatabase() {
  try {
    pqxx::connection conn(DsnFor("postgres") + " connect_timeout=10");
    pqxx::nontransaction tx(conn);
    if (tx.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", options_.database).empty()) {
      tx.exec("CREATE DATABASE " + tx.quote_name(options_.database));
    }
  } catch (const std::exception& e) {
    PgFailure failure = MapPgException(e, "create database " + options_.database);
    // Two servers racing to create it: the loser finds it there.
    if (failure.error.code != ErrorCode::kConflict) {
      failure.error.code = ErrorCode::kUnavailable;
      return tl::unexpected(std::move(failure.error));
    }
  }
  return {};
}

Result<std::string> EmbeddedPostgres::Start() {
  if (running_) return dsn_;
  if (auto r = ResolveBinaries(); !r) return tl::unexpected(r.error());
  if (auto r = InitCluster(); !r) return tl::unexpected(r.error());
  std::ifstream pw(data_dir_ / kPasswordFile);
  if (!std::getline(pw, password_) || password_.empty()) {
    return MakeError(ErrorCode::kUnavailable, "cannot read the cluster password from " +
                                                  (data_dir_ / kPasswordFile).string());
  }
  if (auto r = StartServer(); !r) return tl::unexpected(r.error());
  running_ = true;
  if (auto r = EnsureDatabase(); !r) return tl::unexpected(r.error());
  dsn_ = DsnFor(options_.database);
  return dsn_;
}

Result<fs::path> MakeClusterTempDir(const std::string& prefix, const std::string& system_user) {
  std::string pattern = (fs::temp_directory_path() / (prefix + "XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    return MakeError(ErrorCode::kInternal, "mkdtemp " + pattern + " failed");
  }
  if (geteuid() == 0) {
    if (const passwd* user = getpwnam(system_user.c_str()); user != nullptr) {
      if (chown(pattern.c_str(), user->pw_uid, user->pw_gid) != 0) {
        return MakeError(ErrorCode::kInternal, "chown " + pattern + " failed");
      }
    }
  }
  return fs::path(pattern);
}

Result<std::string> EmbeddedPostgres::EnsureAppRole() {
  if (!running_)
    return MakeError(ErrorCode::kUnavailable, "the embedded PostgreSQL is not running");
  const fs::path file = data_dir_ / kAppPasswordFile;
  std::string password;
  {
    std::ifstream in(file);
    std::getline(in, password);
  }
  if (password.empty()) {
    Result<std::string> made = RandomHex(16);
    if (!made) return tl::unexpected(made.error());
    password = *made;
    const passwd* owner = geteuid() == 0 ? getpwnam(options_.system_user.c_str()) : nullptr;
    if (auto written = WritePrivateFile(file, password + "\n", FileOwner(owner)); !written) {
      return tl::unexpected(written.error());
    }
  }
  try {
    pqxx::connection conn(dsn_ + " connect_timeout=10");
    pqxx::work tx(conn);
    const std::string role = tx.quote_name(kAppRole);
    if (tx.exec_params("SELECT 1 FROM pg_roles WHERE rolname = $1", kAppRole).empty()) {
      tx.exec("CREATE ROLE " + role);
    }
    // Utility statements take no bound parameters; the password is hex and quoted anyway.
    tx.exec("ALTER ROLE " + role +
            " LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD " +
            tx.quote(password));
    tx.exec("GRANT CONNECT ON DATABASE " + tx.quote_name(options_.database) + " TO " + role);
    tx.exec("REVOKE CREATE ON SCHEMA public FROM PUBLIC");
    tx.exec("GRANT USAGE ON SCHEMA public TO " + role);
    tx.exec("GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO " + role);
    tx.exec("GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA public TO " + role);
    if (!tx.exec("SELECT to_regclass('schema_migrations')")[0][0].is_null()) {
      tx.exec("REVOKE INSERT, UPDATE, DELETE ON schema_migrations FROM " + role);
    }
    tx.commit();
  } catch (const std::exception& e) {
    PgFailure failure = MapPgException(e, std::string("set up role ") + kAppRole);
    failure.error.code = ErrorCode::kUnavailable;
    return tl::unexpected(std::move(failure.error));
  }
  app_dsn_ = "host=127.0.0.1 port=" + std::to_string(port_) + " user=" + kAppRole +
             " password=" + QuoteDsnValue(password) + " dbname=" + QuoteDsnValue(options_.database);
  return app_dsn_;
}

Result<void> EmbeddedPostgres::Restart() {
  if (bin_dir_.empty() || password_.empty()) {
    return MakeError(ErrorCode::kUnavailable, "the embedded PostgreSQL was never started");
  }
  if (auto r = StartServer(); !r) return r;
  running_ = true;
  return {};
}

int EmbeddedPostgres::LivePostmasterPid() const {
  std::ifstream pid_file(data_dir_ / "postmaster.pid");
  int pid = 0;
  if (!(pid_file >> pid) || pid <= 0) return 0;
  std::error_code ec;
  if (!fs::exists("/proc/self/stat", ec)) return kill(pid, 0) == 0 || errno == EPERM ? pid : 0;
  // "<pid> (<comm>) <state> ...": a zombie (Z, X) is dead; another name means the pid was reused.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  if (!std::getline(stat, text)) return 0;
  const size_t open = text.find('(');
  const size_t close = text.rfind(')');
  if (open == std::string::npos || close == std::string::npos || close + 2 >= text.size()) return 0;
  const std::string comm = text.substr(open + 1, close - open - 1);
  const char state = text[close + 2];
  if (comm != "postgres" || state == 'Z' || state == 'X') return 0;
  return pid;
}

Result<void> EmbeddedPostgres::Stop() {
  if (!running_) return {};
  std::vector<std::string> argv;
  Result<CommandOutput> out = RunPg(bin_dir_, "pg_ctl",
                                    {"stop", "-D", data_dir_.string(), "-m", "fast", "-w", "-t",
                                     std::to_string(options_.start_timeout.count())},
                                    options_.system_user, &argv);
  if (!out) return tl::unexpected(out.error());
  if (out->exit_code != 0) return CommandFailed(argv, *out);
  running_ = false;
  return {};
}

}  // namespace perfwarden::store
