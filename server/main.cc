// SPDX-License-Identifier: Apache-2.0
// perfwarden-server: the composition root. Reads the configuration (defaults < server.yaml <
// environment < flags), starts the App (embedded or external PostgreSQL, migrations, HTTP),
// and shuts down gracefully on SIGTERM/SIGINT. `perfwarden-server migrate` only migrates.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "config/logging.h"
#include "config/server_config.h"
#include "core/version.h"
#include "server/admin_token_file.h"
#include "server/app.h"

namespace {

constexpr int kExitUsage = 2;
constexpr int kExitInfrastructure = 3;

int Fail(const perfwarden::Error& error, int code) {
  std::cerr << "perfwarden-server: error: " << perfwarden::config::RedactSecrets(error.ToString())
            << "\n";
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App cli{
      "perfwarden-server: stores benchmark runs in PostgreSQL and serves the REST API.\n"
      "Without --database-url it runs its own PostgreSQL under --data-dir."};
  cli.set_version_flag("--version", "perfwarden-server " + std::string(perfwarden::Version()));
  std::string config_file;
  std::vector<perfwarden::config::Override> flags;
  auto flag = [&](const std::string& name, const std::string& key, const std::string& help) {
    cli.add_option_function<std::string>(
        name,
        [&flags, key, name](const std::string& v) {
          flags.push_back({key, v, name});
        },
        help);
  };
  cli.add_option("--config", config_file, "server.yaml (see docs/config.md)");
  flag("--listen", "listen", "HOST:PORT to listen on (default 127.0.0.1:8080)");
  flag("--data-dir", "data_dir", "Directory of the embedded PostgreSQL (default ./.perfwarden)");
  flag("--database-url", "database_url", "PostgreSQL DSN; empty: the embedded PostgreSQL");
  flag("--web-root", "web_root",
       "Serve the dashboard's files from this directory (default: the copy built in)");
  flag("--threads", "threads", "HTTP worker threads");
  flag("--log-format", "log.format", "plain or json");
  flag("--log-level", "log.level", "trace, debug, info, warn, error");
  CLI::App* migrate = cli.add_subcommand("migrate", "Apply pending migrations and exit");
  try {
    cli.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = cli.exit(e);
    return code == 0 ? 0 : kExitUsage;
  }

  auto config = config_file.empty() ? perfwarden::Result<perfwarden::config::ServerConfig>(
                                          perfwarden::config::DefaultServerConfig())
                                    : perfwarden::config::LoadServerConfig(config_file);
  if (!config) return Fail(config.error(), kExitUsage);
  if (auto env =
          perfwarden::config::ApplyEnvironment(*config, perfwarden::config::ProcessEnvironment());
      !env) {
    return Fail(env.error(), kExitUsage);
  }
  if (auto applied = perfwarden::config::ApplyOverrides(*config, flags); !applied) {
    return Fail(applied.error(), kExitUsage);
  }
  if (auto logging = perfwarden::config::SetupLogging(config->log); !logging) {
    return Fail(logging.error(), kExitUsage);
  }

  if (migrate->parsed()) {
    auto applied = perfwarden::server::MigrateOnly(*config);
    if (!applied) return Fail(applied.error(), kExitInfrastructure);
    std::printf("perfwarden-server: %d migration(s) applied\n", *applied);
    return 0;
  }

  // Block the shutdown signals in every thread (the HTTP threads inherit this mask); this
  // thread waits for them with sigwait and shuts down outside any handler.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  auto app = perfwarden::server::App::Start(*config);
  if (!app) return Fail(app.error(), kExitInfrastructure);
  if (!(*app)->new_admin_token().empty()) {
    // Not to the log or the terminal: under systemd both are the journal, readable by more
    // than the server's owner.
    auto file =
        perfwarden::server::WriteAdminTokenFile(config->data_dir, (*app)->new_admin_token());
    if (!file) {
      spdlog::error(
          "the admin token created now cannot be shown; configure one of your own "
          "(admin_token / PERFWARDEN_ADMIN_TOKEN, a pwt_ token) and start again");
      (*app)->Stop();
      return Fail(file.error(), kExitInfrastructure);
    }
    spdlog::warn(
        "created the admin token; it is in {} (mode 0600): keep it secret, and delete "
        "the file once it is stored elsewhere",
        *file);
    std::printf("perfwarden-server: created the admin token, written to %s (mode 0600)\n",
                file->c_str());
  }
  std::printf(
      "perfwarden-server: listening on http://%s:%d (Ctrl-C to stop); the dashboard is at /, "
      "the API under /api/v1\n",
      config->listen.host.c_str(), (*app)->port());
  std::fflush(stdout);

  int received = 0;
  sigwait(&signals, &received);
  spdlog::info("received {}, shutting down", received == SIGINT ? "SIGINT" : "SIGTERM");
  (*app)->Stop();
  spdlog::info("stopped");
  return 0;
}
