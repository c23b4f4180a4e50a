// SPDX-License-Identifier: Apache-2.0
// PgStore: projects and tokens. Runs live in pg_run_store.cc, series in pg_series_store.cc.
#include "server/store/pg_stores.h"

#include "server/store/pg_util.h"

namespace perfwarden::store {
namespace {

using pgutil::Rfc3339Sql;

std::string ProjectColumns() {
  return "id, name, public_read, " + Rfc3339Sql("created_at") + ", protected_branches";
}

Project ReadProject(const pqxx::row& row) {
  Project p;
  p.id = row[0].as<int64_t>();
  p.name = row[1].as<std::string>();
  p.public_read = row[2].as<bool>();
  p.created_at = row[3].as<std::string>();
  if (!row[4].is_null()) p.protected_branches = pgutil::ParseArray(row[4].as<std::string>());
  return p;
}

// The bound text of a protected_branches value: NULL (the server's default) or an array.
std::optional<std::string> BranchesParam(const std::optional<std::vector<std::string>>& list) {
  if (!list) return std::nullopt;
  return pgutil::TextArray(*list);
}

// libpqxx 6 binds a null const char* as SQL NULL.
const char* Nullable(const std::optional<std::string>& text) {
  return text ? text->c_str() : nullptr;
}

// Columns of a token row `t` joined with its project `p`.
std::string TokenColumns() {
  return "t.id, t.project_id, coalesce(p.name, ''), t.name, t.prefix, t.scopes, " +
         Rfc3339Sql("t.created_at") + ", t.revoked_at IS NOT NULL";
}

TokenRecord ReadToken(const pqxx::row& row) {
  TokenRecord t;
  t.id = row[0].as<int64_t>();
  if (!row[1].is_null()) t.project_id = row[1].as<int64_t>();
  t.project = row[2].as<std::string>();
  t.name = row[3].as<std::string>();
  t.prefix = row[4].as<std::string>();
  t.scopes = pgutil::ParseArray(row[5].as<std::string>());
  t.created_at = row[6].as<std::string>();
  t.revoked = row[7].as<bool>();
  return t;
}

}  // namespace

Result<Project> PgStore::CreateProject(
    const std::string& name, bool public_read,
    const std::optional<std::vector<std::string>>& protected_branches) {
  return pool_.WithTransaction<Project>([&](pqxx::work& tx) -> Result<Project> {
    pqxx::result r = tx.exec_params(
        "INSERT INTO projects (name, public_read, protected_branches) VALUES ($1, $2, $3::text[]) "
        "ON CONFLICT (name) DO NOTHING RETURNING " +
            ProjectColumns(),
        name, public_read, Nullable(BranchesParam(protected_branches)));
    if (r.empty()) {
      return MakeError(ErrorCode::kConflict, "project " + name + " already exists", "name");
    }
    return ReadProject(r[0]);
  });
}

Result<Project> PgStore::UpdateProject(const std::string& name, const ProjectUpdate& update) {
  const std::optional<std::string> branches =
      update.protected_branches ? BranchesParam(*update.protected_branches) : std::nullopt;
  return pool_.WithTransaction<Project>([&](pqxx::work& tx) -> Result<Project> {
    // $2/$4: whether to change the column; the values are bound either way.
    pqxx::result r = tx.exec_params(
        "UPDATE projects SET "
        "public_read = CASE WHEN $2 THEN $3 ELSE public_read END, "
        "protected_branches = CASE WHEN $4 THEN $5::text[] ELSE protected_branches END "
        "WHERE name = $1 RETURNING " +
            ProjectColumns(),
        name, update.public_read.has_value(), update.public_read.value_or(false),
        update.protected_branches.has_value(), Nullable(branches));
    if (r.empty()) return MakeError(ErrorCode::kNotFound, "no project " + name, "project");
    return ReadProject(r[0]);
  });
}

Result<std::vector<Project>> PgStore::ListProjects() {
  return pool_.WithTransaction<std::vector<Project>>(
      [&](pqxx::work& tx) -> Result<std::vector<Project>> {
        std::vector<Project> out;
        for (const pqxx::row& row :
             tx.exec("SELECT " + ProjectColumns() + " FROM projects ORDER BY name")) {
          out.push_back(ReadProject(row));
        }
        return out;
      });
}

Result<Project> PgStore::GetProject(const std::string& name) {
  return pool_.WithStatements<Project>([&](pqxx::transaction_base& tx) -> Result<Project> {
    pqxx::result r =
        tx.exec_params("SELECT " + ProjectColumns() + " FROM projects WHERE name = $1", name);
    if (r.empty()) return MakeError(ErrorCode::kNotFound, "no project " + name, "project");
    return ReadProject(r[0]);
  });
}

Result<TokenRecord> PgStore::CreateToken(const NewToken& token) {
  return pool_.WithTransaction<TokenRecord>([&](pqxx::work& tx) -> Result<TokenRecord> {
    const std::string project_id =
        token.project_id ? std::to_string(*token.project_id) : std::string();
    pqxx::result r = tx.exec_params(
        "WITH t AS (INSERT INTO tokens (project_id, name, prefix, token_hash, scopes) "
        "VALUES ($1::bigint, $2, $3, $4, $5::text[]) RETURNING *) "
        "SELECT " +
            TokenColumns() + " FROM t LEFT JOIN projects p ON p.id = t.project_id",
        token.project_id ? project_id.c_str() : nullptr, token.name, token.prefix, token.token_hash,
        pgutil::TextArray(token.scopes));
    return ReadToken(r[0]);
  });
}

Result<TokenRecord> PgStore::FindTokenByHash(const std::string& token_hash) {
  return pool_.WithStatements<TokenRecord>([&](pqxx::transaction_base& tx) -> Result<TokenRecord> {
    pqxx::result r = tx.exec_params("SELECT " + TokenColumns() +
                                        " FROM tokens t LEFT JOIN projects p ON p.id = "
                                        "t.project_id WHERE t.token_hash = $1",
                                    token_hash);
    if (r.empty()) return MakeError(ErrorCode::kNotFound, "no such token");
    TokenRecord record = ReadToken(r[0]);
    // The WHERE skips the write (and its row lock) when the last one is recent.
    tx.exec_params(
        "UPDATE tokens SET last_used_at = now() WHERE id = $1 AND "
        "(last_used_at IS NULL OR last_used_at < now() - interval '1 minute')",
        record.id);
    return record;
  });
}

Result<std::vector<TokenRecord>> PgStore::ListTokens(std::optional<int64_t> project_id) {
  return pool_.WithTransaction<std::vector<TokenRecord>>(
      [&](pqxx::work& tx) -> Result<std::vector<TokenRecord>> {
        const std::string id = project_id ? std::to_string(*project_id) : std::string();
        std::vector<TokenRecord> out;
        for (const pqxx::row& row : tx.exec_params(
                 "SELECT " + TokenColumns() +
                     " FROM tokens t LEFT JOIN projects p ON p.id = t.project_id "
                     "WHERE $1::bigint IS NULL OR t.project_id = $1::bigint ORDER BY t.id",
                 project_id ? id.c_str() : nullptr)) {
          out.push_back(ReadToken(row));
        }
        return out;
      });
}

Result<bool> PgStore::RevokeToken(int64_t id) {
  return pool_.WithTransaction<bool>([&](pqxx::work& tx) -> Result<bool> {
    pqxx::result r = tx.exec_params(
        "UPDATE tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id",
        id);
    return !r.empty();
  });
}

Result<bool> PgStore::HasAdminToken() {
  return pool_.WithTransaction<bool>([&](pqxx::work& tx) -> Result<bool> {
    return tx
        .exec(
            "SELECT EXISTS (SELECT 1 FROM tokens WHERE revoked_at IS NULL "
            "AND 'admin' = ANY (scopes))")[0][0]
        .as<bool>();
  });
}

}  // namespace perfwarden::store
