// SPDX-License-Identifier: Apache-2.0
// The configured admin token (admin_token / PERFWARDEN_ADMIN_TOKEN) through a real
// perfwarden-server and PostgreSQL: it cannot revoke itself, and a start whose configured token was
// revoked (here behind the server's back, in the database) says so in the log rather than starting
// silently with an admin token that every request is refused with.
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include <cstdint>
#include <memory>
#include <pqxx/pqxx>
#include <sstream>
#include <string>

#include "tests/testing/test_server.h"

namespace perfwarden {
namespace {

// Routes the default logger into `out` while alive.
class CapturedLog {
 public:
  explicit CapturedLog(std::ostringstream& out) : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(out);
    spdlog::set_default_logger(std::make_shared<spdlog::logger>("captured", sink));
  }
  ~CapturedLog() { spdlog::set_default_logger(previous_); }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

 private:
  std::shared_ptr<spdlog::logger> previous_;
};

class AdminTokenTest : public testing::ServerTest {
 protected:
  int64_t AdminTokenId() {
    pqxx::connection conn(dsn_);
    pqxx::nontransaction tx(conn);
    return tx.exec1("SELECT id FROM tokens WHERE 'admin' = ANY(scopes)")[0].as<int64_t>();
  }
};

TEST_F(AdminTokenTest, CannotRevokeItselfAndARevokedOneIsLoggedAtTheNextStart) {
  const int64_t id = AdminTokenId();
  auto refused = http_->Delete("/api/v1/tokens/" + std::to_string(id), admin_);
  EXPECT_EQ(refused.status, 409) << refused.body;
  EXPECT_EQ(refused.ErrorField(), "id");
  EXPECT_EQ(http_->Get("/api/v1/projects", admin_).status, 200);

  {
    pqxx::connection conn(dsn_);
    pqxx::nontransaction tx(conn);
    tx.exec_params("UPDATE tokens SET revoked_at = now() WHERE id = $1", id);
  }
  http_.reset();
  app_->Stop();
  app_.reset();

  std::ostringstream log;
  {
    CapturedLog capture(log);
    auto app = server::App::Start(testing::TestServerConfig(dsn_, admin_));
    ASSERT_TRUE(app.has_value()) << app.error().ToString();
    app_ = std::move(*app);
  }
  EXPECT_NE(log.str().find("the configured admin token (admin_token / PERFWARDEN_ADMIN_TOKEN, id " +
                           std::to_string(id) + ", " + admin_.substr(0, 8) + "...) was revoked"),
            std::string::npos)
      << log.str();
  http_ = std::make_unique<testing::HttpClient>(static_cast<std::uint16_t>(app_->port()));
  EXPECT_EQ(http_->Get("/api/v1/projects", admin_).status, 401);
}

}  // namespace
}  // namespace perfwarden
