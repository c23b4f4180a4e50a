// Fixture for tests of PgStore: a fresh, migrated database (PgTest), a connection pool, the
// store, and a project named "proj".
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "server/store/migrator.h"
#include "server/store/pg_stores.h"
#include "tests/pg/pg_cluster.h"

namespace perfgate::testing {

class PgStoreTest : public PgTest {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    Result<store::MigrationReport> migrated = store::Migrate(dsn_);
    ASSERT_TRUE(migrated.has_value()) << migrated.error().ToString();
    store::PoolOptions options;
    options.dsn = dsn_;
    options.max_size = 10;
    pool_ = std::make_unique<store::ConnectionPool>(options);
    store_ = std::make_unique<store::PgStore>(*pool_);
    Result<store::Project> project = store_->CreateProject("proj", false);
    ASSERT_TRUE(project.has_value()) << project.error().ToString();
    project_ = *project;
  }

  std::unique_ptr<store::ConnectionPool> pool_;
  std::unique_ptr<store::PgStore> store_;
  store::Project project_;
};

}  // namespace perfgate::testing
