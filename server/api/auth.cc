#include "server/api/auth.h"

#include "server/api/json_util.h"

namespace perfgate::server::api {
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
    return Unauthenticated("a bearer token is required (Authorization: Bearer pgt_...)");
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
                                        auth::Scope required) {
  auto caller = Authenticate(tokens, request);
  if (!caller) return tl::unexpected(caller.error());
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

}  // namespace perfgate::server::api
