// SPDX-License-Identifier: Apache-2.0
#include "server/api/auth.h"

#include <fnmatch.h>

#include "server/api/json_util.h"

namespace perfwarden::server::api {
namespace {

constexpr std::string_view kAuthHeader = "Authorization";

tl::unexpected<Error> Unauthenticated(std::string message) {
  return MakeError(ErrorCode::kUnauthenticated, std::move(message), std::string(kAuthHeader));
}

}  // namespace

Result<std::optional<Caller>> Authenticate(store::TokenStore& tokens,
                                           const http::Request& request) {
  auto header = request.headers.Get(kAuthHeader);
  if (!header) return std::optional<Caller>();
  auto token = auth::ParseBearer(*header);
  if (!token) return tl::unexpected(token.error());
  if (token->empty() || !auth::IsWellFormedToken(*token)) {
    return Unauthenticated("malformed bearer token");
  }
  auto hash = auth::HashToken(*token);
  if (!hash) return tl::unexpected(hash.error());
  auto record = tokens.FindTokenByHash(*hash);
  if (!record) {
    if (record.error().code == ErrorCode::kNotFound) return Unauthenticated("unknown token");
    return tl::unexpected(record.error());
  }
  if (record->revoked) return Unauthenticated("the token was revoked");
  auto scopes = auth::ScopeSet::FromNames(record->scopes);
  // A stored token with an unknown scope is a data problem, not the caller's: it gets nothing.
  Caller caller{std::move(*record), scopes ? *scopes : auth::ScopeSet()};
  return std::optional<Caller>(std::move(caller));
}

Result<void> CheckAccess(const std::optional<Caller>& caller, auth::Scope required,
                         const store::Project* project, bool read_only) {
  bool public_read =
      project != nullptr && project->public_read && read_only && required == auth::Scope::kRead;
  if (!caller) {
    if (public_read) return {};
    return Unauthenticated("a bearer token is required (Authorization: Bearer pwt_...)");
  }
  if (caller->is_admin() || public_read) return {};
  if (required == auth::Scope::kAdmin) {
    return MakeError(ErrorCode::kPermissionDenied, "this needs a token with the admin scope");
  }
  if (project != nullptr && caller->token.project_id != project->id) {
    return MakeError(ErrorCode::kPermissionDenied, "the token is not valid for this project",
                     "project");
  }
  if (!caller->scopes.Allows(required)) {
    return MakeError(ErrorCode::kPermissionDenied,
                     "the token lacks the " + std::string(auth::ScopeName(required)) + " scope");
  }
  return {};
}

bool CanList(const std::optional<Caller>& caller, const store::Project& project) {
  if (project.public_read) return true;
  if (!caller) return false;
  return caller->is_admin() || caller->token.project_id == project.id;
}

Result<store::Project> AuthorizeProject(store::TokenStore& tokens, store::ProjectStore& projects,
                                        const http::Request& request, std::string_view project,
                                        auth::Scope required, std::optional<Caller>* caller_out) {
  auto caller = Authenticate(tokens, request);
  if (!caller) return tl::unexpected(caller.error());
  if (caller_out != nullptr) *caller_out = *caller;
  const bool read_only = request.method == "GET" || request.method == "HEAD";
  auto found = projects.GetProject(std::string(project));
  if (!found) {
    if (found.error().code != ErrorCode::kNotFound) return tl::unexpected(found.error());
    // Only an admin learns that a name does not exist; for anyone else it looks like any
    // project they may not touch.
    if (*caller && (*caller)->is_admin()) {
      return MakeError(ErrorCode::kNotFound, "no project \"" + std::string(project) + "\"",
                       "project");
    }
    if (auto access = CheckAccess(*caller, required, nullptr, read_only); !access) {
      return tl::unexpected(access.error());
    }
    return MakeError(ErrorCode::kPermissionDenied, "the token is not valid for this project",
                     "project");
  }
  if (auto access = CheckAccess(*caller, required, &*found, read_only); !access) {
    return tl::unexpected(access.error());
  }
  return found;
}

const std::vector<std::string>& ProtectedBranches(const store::Project& project,
                                                  const std::vector<std::string>& defaults) {
  return project.protected_branches ? *project.protected_branches : defaults;
}

bool MatchesBranch(const std::vector<std::string>& patterns, std::string_view branch) {
  const std::string name(branch);
  for (const std::string& pattern : patterns) {
    // No FNM_PATHNAME: "release/*" covers "release/1.2/rc1" too, as a branch rule should.
    if (pattern == name || fnmatch(pattern.c_str(), name.c_str(), 0) == 0) return true;
  }
  return false;
}

BranchGuard::BranchGuard(const std::optional<Caller>& caller, const store::Project& project,
                         const std::vector<std::string>& defaults)
    : may_write_protected_(caller && caller->scopes.Allows(auth::Scope::kIngest)),
      project_(project.name),
      protected_(ProtectedBranches(project, defaults)) {}

Result<void> BranchGuard::Check(std::string_view branch) const {
  if (may_write_protected_ || !MatchesBranch(protected_, branch)) return {};
  std::string list;
  for (const std::string& pattern : protected_) list += (list.empty() ? "" : ", ") + pattern;
  return MakeError(ErrorCode::kPermissionDenied,
                   "branch \"" + std::string(branch) + "\" is protected in project \"" + project_ +
                       "\" (protected branches: " + list +
                       "): a token with the ingest-pr scope writes only unprotected branches; "
                       "the target branch's job needs a token with the ingest scope",
                   "branch");
}

http::Handler HandleBranchWrite(const ApiDeps& deps, BranchWriteHandler handler) {
  return Handle(
      {},
      [deps, handler = std::move(handler)](
          const http::Request& request, const http::PathParams& params) -> Result<http::Response> {
        std::optional<Caller> caller;
        auto project = AuthorizeProject(*deps.tokens, *deps.projects, request, params.at("project"),
                                        auth::Scope::kIngestPr, &caller);
        if (!project) return tl::unexpected(project.error());
        const BranchGuard guard(caller, *project, deps.protected_branches);
        return handler(request, params, *project, guard);
      });
}

http::Handler HandleProject(const ApiDeps& deps,
                            std::initializer_list<std::string_view> allowed_query,
                            auth::Scope required, ProjectHandler handler) {
  return Handle(
      allowed_query,
      [deps, required, handler = std::move(handler)](
          const http::Request& request, const http::PathParams& params) -> Result<http::Response> {
        auto project =
            AuthorizeProject(*deps.tokens, *deps.projects, request, params.at("project"), required);
        if (!project) return tl::unexpected(project.error());
        return handler(request, params, *project);
      });
}

}  // namespace perfwarden::server::api
