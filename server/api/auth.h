// SPDX-License-Identifier: Apache-2.0
// Who is calling and what they may do: the bearer token is looked up by its SHA-256 hash, then
// small pure rules decide 401 (no/bad/unknown/revoked token) versus 403 (wrong project or
// scope), with the public_read exception for GETs. Kept apart from handlers so the whole
// matrix is testable without a socket.
#pragma once

#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"
#include "server/api/api.h"
#include "server/auth/tokens.h"
#include "server/http/router.h"
#include "server/http/types.h"
#include "server/store/store.h"

namespace perfwarden::server::api {

// A caller that presented a valid, unrevoked token.
struct Caller {
  store::TokenRecord token;
  auth::ScopeSet scopes;

  bool is_admin() const { return scopes.Allows(auth::Scope::kAdmin); }
};

// nullopt when the request has no Authorization header. kUnauthenticated (field
// "Authorization") for a malformed header or token, an unknown token or a revoked one; store
// failures (kUnavailable) pass through. Never puts the token in a message.
Result<std::optional<Caller>> Authenticate(store::TokenStore& tokens, const http::Request& request);

// The rule for an action needing `required` on `project` (nullptr: not about one project).
// `read_only` is true for GET requests: only they may use a public_read project without a token.
Result<void> CheckAccess(const std::optional<Caller>& caller, auth::Scope required,
                         const store::Project* project, bool read_only);

// Whether the project appears in GET /api/v1/projects for this caller.
bool CanList(const std::optional<Caller>& caller, const store::Project& project);

// Authenticates, looks the project up and checks access. A missing project is 404 only for
// admins; others get the 401/403 they would get anyway, so names do not leak. `caller_out`,
// when given, receives the caller.
Result<store::Project> AuthorizeProject(store::TokenStore& tokens, store::ProjectStore& projects,
                                        const http::Request& request, std::string_view project,
                                        auth::Scope required,
                                        std::optional<Caller>* caller_out = nullptr);

// The branches `project` protects: its own list, or `defaults` (the server's) when it has none.
const std::vector<std::string>& ProtectedBranches(const store::Project& project,
                                                  const std::vector<std::string>& defaults);
// Whether `branch` matches one of `patterns` (a name, or a shell pattern: "release/*").
bool MatchesBranch(const std::vector<std::string>& patterns, std::string_view branch);

// Which branches a caller may write runs and verdicts for: any with the ingest scope (or
// admin); with only ingest-pr, those the project does not protect.
class BranchGuard {
 public:
  BranchGuard(const std::optional<Caller>& caller, const store::Project& project,
              const std::vector<std::string>& defaults);
  // 403 PERMISSION_DENIED (field "branch") naming the rule when the caller may not write
  // `branch`.
  Result<void> Check(std::string_view branch) const;

 private:
  bool may_write_protected_;
  std::string project_;
  std::vector<std::string> protected_;
};

// The handler of a route under /api/v1/projects/{project}, called once the caller may act on
// the project with `required`.
using ProjectHandler = std::function<Result<http::Response>(
    const http::Request&, const http::PathParams&, const store::Project&)>;

// Handle() (query check, one error body) for a project route: authenticates, looks the project
// up and checks `required` before calling `handler`.
http::Handler HandleProject(const ApiDeps& deps,
                            std::initializer_list<std::string_view> allowed_query,
                            auth::Scope required, ProjectHandler handler);

// A route that writes a branch's runs or verdicts (ingest-pr at least): the handler checks the
// branch it writes with the guard before it stores anything.
using BranchWriteHandler = std::function<Result<http::Response>(
    const http::Request&, const http::PathParams&, const store::Project&, const BranchGuard&)>;
http::Handler HandleBranchWrite(const ApiDeps& deps, BranchWriteHandler handler);

}  // namespace perfwarden::server::api
