// SPDX-License-Identifier: Apache-2.0
// Who reads the dashboard contract of migration 0010 (a real, migrated PostgreSQL): the role
// perfwarden_grafana_read reads the views and nothing else (no base table, no tokens, no writes), a
// least-privilege owner without CREATEROLE migrates all the same (the role is then made by hand,
// as documented), and every SQL query of docs/grafana/perfwarden-dashboard.json runs against the
// views as that role and returns rows, so the dashboard cannot rot.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "server/store/migrator.h"
#include "tests/testing/grafana_views_fixture.h"

namespace perfwarden::store {
namespace {

using nlohmann::json;
using views_testing::Contract;
using views_testing::GrafanaViewsTest;
using views_testing::kReadRole;

// Grafana's interpolation, for the variables and macros the dashboard uses: `${v:sqlstring}`
// quotes each value ('' for '), `$v`/`${v}` is the raw value (quoted and comma-joined for a
// multi-value variable), `$__timeFilter(col)` is `col BETWEEN 'from' AND 'to'`.
std::string Interpolate(std::string sql,
                        const std::map<std::string, std::vector<std::string>>& values,
                        const std::set<std::string>& multi) {
  auto quoted = [](const std::vector<std::string>& list) {
    std::string out;
    for (const std::string& v : list) {
      std::string q = "'";
      for (char c : v) q += c == '\'' ? std::string("''") : std::string(1, c);
      out += (out.empty() ? "" : ",") + q + "'";
    }
    return out;
  };
  auto replace_all = [&](const std::regex& pattern, auto make) {
    std::string out;
    auto begin = std::sregex_iterator(sql.begin(), sql.end(), pattern);
    size_t last = 0;
    for (auto it = begin; it != std::sregex_iterator(); ++it) {
      out += sql.substr(last, it->position() - last) + make(*it);
      last = it->position() + it->length();
    }
    sql = out + sql.substr(last);
  };
  auto value_of = [&](const std::string& name) -> const std::vector<std::string>& {
    static const std::vector<std::string> none;
    auto it = values.find(name);
    EXPECT_NE(it, values.end()) << "the dashboard uses an unknown variable " << name;
    return it == values.end() ? none : it->second;
  };
  replace_all(std::regex(R"(\$__timeFilter\(([^)]*)\))"), [](const std::smatch& m) {
    return m[1].str() + " BETWEEN '1970-01-01T00:00:00Z' AND '2100-01-01T00:00:00Z'";
  });
  replace_all(std::regex(R"(\$\{(\w+):sqlstring\})"),
              [&](const std::smatch& m) { return quoted(value_of(m[1].str())); });
  replace_all(std::regex(R"(\$\{(\w+)\}|\$(\w+))"), [&](const std::smatch& m) {
    const std::string name = m[1].matched ? m[1].str() : m[2].str();
    const std::vector<std::string>& v = value_of(name);
    return multi.count(name) != 0 ? quoted(v) : (v.empty() ? std::string() : v.front());
  });
  return sql;
}

TEST_F(GrafanaViewsTest, TheReadRoleReadsTheViewsAndNothingElse) {
  IngestExample();
  NewToken token;
  token.project_id = project_.id;
  token.name = "ci";
  token.token_hash = std::string(64, 'a');
  token.scopes = {"read"};
  ASSERT_TRUE(store_->CreateToken(token).has_value());

  pqxx::result role =
      Rows(std::string("SELECT rolcanlogin, rolsuper, rolcreaterole, "
                       "rolcreatedb, rolbypassrls FROM pg_roles WHERE rolname = '") +
           kReadRole + "'");
  ASSERT_EQ(role.size(), 1u);
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(role[0][i].as<bool>()) << i;

  for (const auto& [view, columns] : Contract()) {
    std::string error;
    auto r = AsReader("SELECT count(*) FROM perfwarden_views." + view, &error);
    ASSERT_TRUE(r.has_value()) << view << ": " << error;
    EXPECT_GT((*r)[0][0].as<int64_t>(), 0) << view;
  }
  // Every table and view outside the schema is closed to it, tokens first.
  std::string error;
  EXPECT_FALSE(AsReader("SELECT token_hash FROM tokens", &error).has_value());
  EXPECT_NE(error.find("permission denied"), std::string::npos) << error;
  int relations = 0;
  for (const auto& row :
       Rows("SELECT quote_ident(n.nspname) || '.' || quote_ident(c.relname) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' "
            "AND c.relkind IN ('r', 'v', 'm', 'p', 'f')")) {
    const std::string relation = row[0].as<std::string>();
    EXPECT_FALSE(AsReader("SELECT 1 FROM " + relation + " LIMIT 1").has_value()) << relation;
    ++relations;
  }
  EXPECT_GE(relations, 15);  // projects ... bisect_steps, the samples view, schema_migrations
  EXPECT_EQ(Int(std::string("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON "
                            "n.oid = c.relnamespace WHERE n.nspname = 'public' AND "
                            "has_table_privilege('") +
                kReadRole + "', c.oid, 'SELECT')"),
            0);
  // No writes, through the views or otherwise; no objects of its own.
  for (const std::string& sql : {
           std::string("INSERT INTO perfwarden_views.projects (project) VALUES ('x')"),
           std::string("UPDATE perfwarden_views.alerts SET state = 'resolved'"),
           std::string("DELETE FROM perfwarden_views.runs"),
           std::string("UPDATE projects SET public_read = true"),
           std::string("DELETE FROM tokens"),
           std::string("CREATE TABLE perfwarden_views.mine (v integer)"),
           std::string("CREATE TABLE public.mine (v integer)"),
           std::string("CREATE VIEW perfwarden_views.mine AS SELECT 1"),
       }) {
    EXPECT_FALSE(AsReader(sql).has_value()) << sql;
  }
  EXPECT_EQ(Int(std::string("SELECT count(*) FROM information_schema.table_privileges WHERE "
                            "grantee = '") +
                kReadRole + "' AND privilege_type <> 'SELECT'"),
            0);

  // The documented login: a user in the role connects and reads (docs/dashboards.md).
  static int logins = 0;
  const std::string user = "grafana_t" + std::to_string(++logins);
  Exec("DROP ROLE IF EXISTS " + user + "; CREATE ROLE " + user + " LOGIN PASSWORD 'secret-" + user +
       "' IN ROLE " + kReadRole);
  const std::string database = Rows("SELECT current_database()")[0][0].as<std::string>();
  pqxx::connection grafana("host=127.0.0.1 port=" + std::to_string(cluster_->server().port()) +
                           " user=" + user + " password=secret-" + user + " dbname=" + database);
  {
    pqxx::work tx(grafana);
    EXPECT_EQ(tx.exec("SELECT count(*) FROM perfwarden_views.runs")[0][0].as<int64_t>(), 8);
  }
  EXPECT_THROW(
      {
        pqxx::work tx(grafana);
        tx.exec("SELECT count(*) FROM runs");
      },
      pqxx::sql_error);
}

// A least-privilege owner (docs/operations.md) has no CREATEROLE: the migration still applies,
// creates the views and no role; after the documented commands the role reads them; and a
// database migrated once the role exists gets the grants from the migration itself.
TEST_F(GrafanaViewsTest, AnOwnerWithoutCreateRoleMigratesAndTheRoleIsMadeByHand) {
  static int owners = 0;
  const std::string owner = "owner_t" + std::to_string(++owners);
  auto superuser = [&](const std::string& database, const std::string& sql) {
    pqxx::connection conn(cluster_->server().DsnFor(database));
    pqxx::nontransaction tx(conn);
    tx.exec(sql);
  };
  auto owner_dsn = [&](const std::string& database) {
    return "host=127.0.0.1 port=" + std::to_string(cluster_->server().port()) + " user=" + owner +
           " password=pw dbname=" + database;
  };
  // The role is cluster-wide and this cluster's other databases made it: remove it first.
  if (Int(std::string("SELECT count(*) FROM pg_roles WHERE rolname = '") + kReadRole + "'") > 0) {
    for (const auto& row : Rows("SELECT datname FROM pg_database WHERE datallowconn")) {
      superuser(row[0].as<std::string>(), std::string("DROP OWNED BY ") + kReadRole);
    }
    superuser("postgres", std::string("DROP ROLE ") + kReadRole);
  }
  superuser("postgres", "CREATE ROLE " + owner + " LOGIN PASSWORD 'pw' NOCREATEROLE");
  superuser("postgres", "CREATE DATABASE " + owner + "_a OWNER " + owner);

  Result<MigrationReport> migrated = Migrate(owner_dsn(owner + "_a"));
  ASSERT_TRUE(migrated.has_value()) << migrated.error().ToString();
  EXPECT_NE(
      std::find(migrated->applied.begin(), migrated->applied.end(), "0010_create_grafana_views"),
      migrated->applied.end());
  EXPECT_EQ(Int(std::string("SELECT count(*) FROM pg_roles WHERE rolname = '") + kReadRole + "'"),
            0);
  {
    pqxx::connection conn(owner_dsn(owner + "_a"));
    pqxx::work tx(conn);
    EXPECT_EQ(tx.exec("SELECT count(*) FROM perfwarden_views.runs")[0][0].as<int64_t>(), 0);
    EXPECT_EQ(tx.exec("SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = "
                      "'perfwarden_views'")[0][0]
                  .as<std::string>(),
              owner);
  }

  // docs/dashboards.md, "The read role": a role with CREATEROLE makes it, the owner grants.
  superuser("postgres", std::string("CREATE ROLE ") + kReadRole + " NOLOGIN");
  {
    pqxx::connection conn(owner_dsn(owner + "_a"));
    pqxx::work tx(conn);
    tx.exec(std::string("GRANT USAGE ON SCHEMA perfwarden_views TO ") + kReadRole);
    tx.exec(std::string("GRANT SELECT ON ALL TABLES IN SCHEMA perfwarden_views TO ") + kReadRole);
    tx.exec(std::string("ALTER DEFAULT PRIVILEGES IN SCHEMA perfwarden_views GRANT SELECT ON "
                        "TABLES TO ") +
            kReadRole);
    tx.commit();
  }
  auto reads = [&](const std::string& database) {
    pqxx::connection conn(cluster_->server().DsnFor(database));
    pqxx::work tx(conn);
    tx.exec(std::string("SET LOCAL ROLE ") + kReadRole);
    for (const auto& [view, columns] : Contract())
      tx.exec("SELECT * FROM perfwarden_views." + view);
    // A view a later migration adds is readable through the default privileges.
    tx.exec("RESET ROLE");
    tx.exec("SET LOCAL ROLE " + owner);
    tx.exec("CREATE VIEW perfwarden_views.later AS SELECT 1 AS one");
    tx.exec(std::string("SET LOCAL ROLE ") + kReadRole);
    const bool later = tx.exec("SELECT one FROM perfwarden_views.later")[0][0].as<int>() == 1;
    tx.abort();
    return later;
  };
  EXPECT_TRUE(reads(owner + "_a"));

  superuser("postgres", "CREATE DATABASE " + owner + "_b OWNER " + owner);
  migrated = Migrate(owner_dsn(owner + "_b"));
  ASSERT_TRUE(migrated.has_value()) << migrated.error().ToString();
  EXPECT_TRUE(reads(owner + "_b"));
}

TEST_F(GrafanaViewsTest, EveryDashboardQueryRunsAgainstTheViewsAsTheReadRole) {
  IngestExample();
  std::ifstream in(std::string(PERFWARDEN_FIXTURES_DIR) +
                   "/../../docs/grafana/perfwarden-dashboard.json");
  ASSERT_TRUE(in.good());
  const json dashboard = json::parse(in);  // throws (fails the test) on invalid JSON

  // The shape Grafana imports: a PostgreSQL input named DS_PERFWARDEN that every query uses.
  ASSERT_TRUE(dashboard.contains("__inputs"));
  ASSERT_EQ(dashboard["__inputs"].size(), 1u);
  EXPECT_EQ(dashboard["__inputs"][0]["name"], "DS_PERFWARDEN");
  EXPECT_EQ(dashboard["__inputs"][0]["pluginId"], "grafana-postgresql-datasource");
  EXPECT_GE(dashboard["schemaVersion"].get<int>(), 39);
  EXPECT_FALSE(dashboard["uid"].get<std::string>().empty());

  std::map<std::string, std::vector<std::string>> values = {
      {"project", {"proj"}},           {"branch", {"main"}},      {"testbed", {"ci-1"}},
      {"benchmark", {"BM_A", "BM_B"}}, {"metric", {"real_time"}},
  };
  std::set<std::string> multi;
  std::vector<std::pair<std::string, std::string>> queries;  // (where, SQL)
  std::set<std::string> variables;
  for (const json& v : dashboard["templating"]["list"]) {
    const std::string name = v["name"];
    variables.insert(name);
    if (v.value("multi", false) || v.value("includeAll", false)) multi.insert(name);
    EXPECT_EQ(v["type"], "query") << name;
    const json& q = v["query"];
    queries.emplace_back("variable " + name, q.is_string()
                                                 ? q.get<std::string>()
                                                 : q.value("rawSql", q.value("query", "")));
  }
  EXPECT_EQ(variables,
            (std::set<std::string>{"project", "branch", "testbed", "benchmark", "metric"}));

  int datasources = 0;
  std::function<void(const json&, const std::string&)> walk = [&](const json& node,
                                                                  const std::string& where) {
    if (node.is_object()) {
      for (auto it = node.begin(); it != node.end(); ++it) {
        if (it.key() == "rawSql") {
          queries.emplace_back(where, it.value().get<std::string>());
        } else if (it.key() == "datasource" && it.value().is_object() &&
                   it.value().value("type", "") != "grafana") {
          EXPECT_EQ(it.value().value("type", ""), "grafana-postgresql-datasource") << where;
          EXPECT_EQ(it.value().value("uid", ""), "${DS_PERFWARDEN}") << where;
          ++datasources;
        } else {
          walk(it.value(), node.contains("title") ? node["title"].get<std::string>()
                           : node.contains("name") && node["name"].is_string()
                               ? node["name"].get<std::string>()
                               : where);
        }
      }
    } else if (node.is_array()) {
      for (const json& child : node) walk(child, where);
    }
  };
  walk(dashboard, "dashboard");
  EXPECT_GT(datasources, 10);
  // 5 variables, 2 annotation queries, 5 panels.
  EXPECT_EQ(queries.size(), 12u);

  std::map<std::string, pqxx::result> results;
  for (const auto& [where, sql] : queries) {
    const std::string interpolated = Interpolate(sql, values, multi);
    EXPECT_EQ(interpolated.find('$'), std::string::npos) << where << ": " << interpolated;
    std::string error;
    auto r = AsReader(interpolated, &error);
    ASSERT_TRUE(r.has_value()) << where << ": " << error << "\n" << interpolated;
    EXPECT_GT(r->size(), 0u) << where << ": no rows\n" << interpolated;
    results[where] = *r;
  }
  // The variables offer what was ingested.
  auto column = [&](const std::string& where) {
    std::vector<std::string> out;
    for (const auto& row : results.at(where)) out.push_back(row[0].as<std::string>());
    return out;
  };
  EXPECT_EQ(column("variable project"), std::vector<std::string>{"proj"});
  EXPECT_EQ(column("variable branch"), (std::vector<std::string>{"feature", "main"}));
  EXPECT_EQ(column("variable benchmark"), (std::vector<std::string>{"BM_A", "BM_B"}));

  // The main panel's median per commit is the history's point (both the pooled median).
  const pqxx::result* medians = nullptr;
  for (const auto& [where, r] : results) {
    if (where.rfind("Median per commit", 0) == 0) medians = &r;
  }
  ASSERT_NE(medians, nullptr);
  ASSERT_EQ(medians->size(), 12u);  // 6 commits x BM_A, BM_B
  std::multiset<std::pair<std::string, double>> from_panel, from_history;
  for (const auto& row : *medians) {
    from_panel.emplace(row["metric"].as<std::string>(), row["value"].as<double>());
  }
  for (const auto& row : Rows("SELECT suite || '/' || benchmark || ' (' || unit || ')', value "
                              "FROM perfwarden_views.history WHERE branch = 'main'")) {
    from_history.emplace(row[0].as<std::string>(), row[1].as<double>());
  }
  EXPECT_EQ(from_panel, from_history);
}

}  // namespace
}  // namespace perfwarden::store
