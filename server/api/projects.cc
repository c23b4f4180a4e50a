// SPDX-License-Identifier: Apache-2.0
// Projects and their tokens: POST/GET /api/v1/projects, GET/PATCH /api/v1/projects/{project},
// POST/GET /api/v1/projects/{project}/tokens, DELETE /api/v1/tokens/{id}.
#include <charconv>

#include "server/api/auth.h"
#include "server/api/json_util.h"
#include "server/api/routes.h"
#include "server/http/errors.h"

namespace perfwarden::server::api {
namespace {

using nlohmann::json;

// Characters of the token kept for recognition: "pwt_" and 8 random ones (48 bits: enough to
// tell tokens apart in a list, far too few to guess the rest).
constexpr size_t kShownPrefix = 12;

Result<void> OnlyKeys(const json& body, std::initializer_list<std::string_view> allowed) {
  for (const auto& [key, value] : body.items()) {
    bool known = false;
    for (std::string_view a : allowed) known = known || a == key;
    if (!known) return InvalidArgument("unknown field \"" + key + "\"", key);
  }
  return {};
}

// protected_branches: null (the server's default) or an array of up to 64 branch names or
// shell patterns ("release/*"), each 1..255 characters without control characters.
Result<std::optional<std::vector<std::string>>> DecodeProtectedBranches(const json& value) {
  const std::string kField = "protected_branches";
  if (value.is_null()) return std::optional<std::vector<std::string>>();
  if (!value.is_array()) {
    return InvalidArgument("expected an array of branch names or patterns, or null", kField);
  }
  if (value.size() > 64) return InvalidArgument("at most 64 entries", kField);
  std::vector<std::string> list;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string field = kField + "[" + std::to_string(i) + "]";
    if (!value[i].is_string()) return InvalidArgument("expected a string", field);
    std::string entry = value[i].get<std::string>();
    if (entry.empty() || entry.size() > 255) {
      return InvalidArgument("must be 1..255 characters", field);
    }
    for (unsigned char c : entry) {
      // Git refuses these in a branch name (git check-ref-format).
      if (c < 0x20 || c == 0x7f || c == '\\') {
        return InvalidArgument("holds a character no branch name has", field);
      }
    }
    list.push_back(std::move(entry));
  }
  return std::optional<std::vector<std::string>>(std::move(list));
}

// The settings a project is created or changed with: public_read and protected_branches, each
// absent when the body does not name it.
Result<store::ProjectUpdate> DecodeSettings(const json& body, bool null_public_read_is_absent) {
  store::ProjectUpdate settings;
  if (auto flag = body.find("public_read");
      flag != body.end() && !(flag->is_null() && null_public_read_is_absent)) {
    if (!flag->is_boolean()) return InvalidArgument("expected true or false", "public_read");
    settings.public_read = flag->get<bool>();
  }
  if (auto branches = body.find("protected_branches"); branches != body.end()) {
    auto list = DecodeProtectedBranches(*branches);
    if (!list) return tl::unexpected(list.error());
    settings.protected_branches = std::move(*list);
  }
  return settings;
}

Result<store::Project> DecodeNewProject(const json& body) {
  if (auto keys = OnlyKeys(body, {"name", "public_read", "protected_branches"}); !keys) {
    return tl::unexpected(keys.error());
  }
  auto name = body.find("name");
  if (name == body.end()) return InvalidArgument("missing required field", "name");
  if (!name->is_string()) return InvalidArgument("expected a string", "name");
  store::Project project;
  project.name = name->get<std::string>();
  if (!IsProjectName(project.name)) {
    return InvalidArgument("must be 1..200 characters from [A-Za-z0-9._-]", "name");
  }
  // They would name the current and the parent folder in every URL and path built from it.
  if (project.name == "." || project.name == "..") {
    return InvalidArgument("\"" + project.name + "\" is not a valid project name", "name");
  }
  auto settings = DecodeSettings(body, /*null_public_read_is_absent=*/true);
  if (!settings) return tl::unexpected(settings.error());
  project.public_read = settings->public_read.value_or(false);
  project.protected_branches = settings->protected_branches.value_or(std::nullopt);
  return project;
}

Result<store::ProjectUpdate> DecodeProjectUpdate(const json& body) {
  if (auto keys = OnlyKeys(body, {"public_read", "protected_branches"}); !keys) {
    return tl::unexpected(keys.error());
  }
  auto update = DecodeSettings(body, /*null_public_read_is_absent=*/false);
  if (!update) return tl::unexpected(update.error());
  if (!update->public_read && !update->protected_branches) {
    return InvalidArgument("nothing to change (public_read, protected_branches)", "");
  }
  return update;
}

struct TokenRequest {
  std::string name;
  std::vector<std::string> scopes;
};

Result<TokenRequest> DecodeNewToken(const json& body) {
  if (auto keys = OnlyKeys(body, {"name", "scopes"}); !keys) return tl::unexpected(keys.error());
  TokenRequest request;
  auto name = body.find("name");
  if (name == body.end()) return InvalidArgument("missing required field", "name");
  if (!name->is_string()) return InvalidArgument("expected a string", "name");
  request.name = name->get<std::string>();
  if (request.name.empty() || request.name.size() > 200) {
    return InvalidArgument("must be 1..200 characters", "name");
  }
  auto scopes = body.find("scopes");
  if (scopes == body.end()) return InvalidArgument("missing required field", "scopes");
  if (!scopes->is_array() || scopes->empty()) {
    return InvalidArgument("expected a non-empty array of scope names", "scopes");
  }
  std::vector<std::string> names;
  for (size_t i = 0; i < scopes->size(); ++i) {
    const json& scope = (*scopes)[i];
    std::string field = "scopes[" + std::to_string(i) + "]";
    if (!scope.is_string()) return InvalidArgument("expected a string", field);
    auto parsed = auth::ParseScope(scope.get<std::string>());
    if (!parsed) {
      return InvalidArgument("expected \"ingest\", \"ingest-pr\", \"read\" or \"triage\"", field);
    }
    // An admin token may do anything anywhere, so binding one to a project would be a lie.
    if (*parsed == auth::Scope::kAdmin) {
      return InvalidArgument("project tokens cannot have the admin scope", field);
    }
    names.push_back(scope.get<std::string>());
  }
  request.scopes = auth::ScopeSet::FromNames(names)->Names();
  return request;
}

}  // namespace

void RegisterProjectRoutes(http::Router& router, const ApiDeps& deps) {
  router.Add(
      "POST", "/api/v1/projects", "projects.create",
      Handle(
          {},
          [deps](const http::Request& request, const http::PathParams&) -> Result<http::Response> {
            auto caller = Authenticate(*deps.tokens, request);
            if (!caller) return tl::unexpected(caller.error());
            if (auto ok = CheckAccess(*caller, auth::Scope::kAdmin, nullptr, false); !ok) {
              return tl::unexpected(ok.error());
            }
            if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
            auto body = ParseJsonObject(request.body, deps.json_max_depth);
            if (!body) return tl::unexpected(body.error());
            auto wanted = DecodeNewProject(*body);
            if (!wanted) return tl::unexpected(wanted.error());
            auto created = deps.projects->CreateProject(wanted->name, wanted->public_read,
                                                        wanted->protected_branches);
            if (!created) {
              Error error = created.error();
              if (error.code == ErrorCode::kConflict && error.field.empty()) error.field = "name";
              return tl::unexpected(error);
            }
            return JsonResponse(201, {{"project", ProjectJson(*created, deps.protected_branches)}});
          }));

  router.Add("GET", "/api/v1/projects", "projects.list",
             Handle({},
                    [deps](const http::Request& request,
                           const http::PathParams&) -> Result<http::Response> {
                      auto caller = Authenticate(*deps.tokens, request);
                      if (!caller) return tl::unexpected(caller.error());
                      auto all = deps.projects->ListProjects();
                      if (!all) return tl::unexpected(all.error());
                      json list = json::array();
                      for (const auto& project : *all) {
                        if (CanList(*caller, project)) {
                          list.push_back(ProjectJson(project, deps.protected_branches));
                        }
                      }
                      return JsonResponse(200, {{"projects", std::move(list)}});
                    }));

  router.Add(
      "GET", "/api/v1/projects/{project}", "projects.get",
      HandleProject(
          deps, {}, auth::Scope::kRead,
          [deps](const http::Request& /*request*/, const http::PathParams& /*params*/,
                 const store::Project& project) -> Result<http::Response> {
            return JsonResponse(200, {{"project", ProjectJson(project, deps.protected_branches)}});
          }));

  router.Add(
      "PATCH", "/api/v1/projects/{project}", "projects.update",
      HandleProject(
          deps, {}, auth::Scope::kAdmin,
          [deps](const http::Request& request, const http::PathParams& /*params*/,
                 const store::Project& project) -> Result<http::Response> {
            if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
            auto body = ParseJsonObject(request.body, deps.json_max_depth);
            if (!body) return tl::unexpected(body.error());
            auto update = DecodeProjectUpdate(*body);
            if (!update) return tl::unexpected(update.error());
            auto changed = deps.projects->UpdateProject(project.name, *update);
            if (!changed) return tl::unexpected(changed.error());
            return JsonResponse(200, {{"project", ProjectJson(*changed, deps.protected_branches)}});
          }));

  router.Add("POST", "/api/v1/projects/{project}/tokens", "tokens.create",
             HandleProject(deps, {}, auth::Scope::kAdmin,
                           [deps](const http::Request& request, const http::PathParams& /*params*/,
                                  const store::Project& project) -> Result<http::Response> {
                             if (auto bad_type = CheckJsonContentType(request)) return *bad_type;
                             auto body = ParseJsonObject(request.body, deps.json_max_depth);
                             if (!body) return tl::unexpected(body.error());
                             auto wanted = DecodeNewToken(*body);
                             if (!wanted) return tl::unexpected(wanted.error());
                             auto token = auth::GenerateToken();
                             if (!token) return tl::unexpected(token.error());
                             auto hash = auth::HashToken(*token);
                             if (!hash) return tl::unexpected(hash.error());
                             store::NewToken record{project.id, wanted->name,
                                                    token->substr(0, kShownPrefix), *hash,
                                                    wanted->scopes};
                             auto stored = deps.tokens->CreateToken(record);
                             if (!stored) return tl::unexpected(stored.error());
                             return JsonResponse(201, {{"token", *token},
                                                       {"id", stored->id},
                                                       {"name", stored->name},
                                                       {"prefix", stored->prefix},
                                                       {"scopes", stored->scopes},
                                                       {"project", project.name},
                                                       {"created_at", stored->created_at}});
                           }));

  router.Add(
      "GET", "/api/v1/projects/{project}/tokens", "tokens.list",
      HandleProject(deps, {}, auth::Scope::kAdmin,
                    [deps](const http::Request& /*request*/, const http::PathParams& /*params*/,
                           const store::Project& project) -> Result<http::Response> {
                      auto tokens = deps.tokens->ListTokens(project.id);
                      if (!tokens) return tl::unexpected(tokens.error());
                      json list = json::array();
                      for (const auto& token : *tokens) list.push_back(TokenJson(token));
                      return JsonResponse(200, {{"tokens", std::move(list)}});
                    }));

  router.Add("DELETE", "/api/v1/tokens/{id}", "tokens.revoke",
             Handle({},
                    [deps](const http::Request& request,
                           const http::PathParams& params) -> Result<http::Response> {
                      auto caller = Authenticate(*deps.tokens, request);
                      if (!caller) return tl::unexpected(caller.error());
                      if (auto ok = CheckAccess(*caller, auth::Scope::kAdmin, nullptr, false);
                          !ok) {
                        return tl::unexpected(ok.error());
                      }
                      const std::string& text = params.at("id");
                      int64_t id = 0;
                      auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
                      if (ec != std::errc() || end != text.data() + text.size() || id <= 0) {
                        return InvalidArgument("must be a positive integer token id", "id");
                      }
                      // The last admin token cannot revoke itself away, and the configured one
                      // would come back revoked at the next start.
                      if (id == (*caller)->token.id) {
                        return MakeError(ErrorCode::kConflict,
                                         "token " + text +
                                             " is the one making this request; revoke it with "
                                             "another admin token",
                                         "id");
                      }
                      if (id == deps.configured_admin_token_id) {
                        return MakeError(ErrorCode::kConflict,
                                         "token " + text +
                                             " is the configured admin token (admin_token / "
                                             "PERFWARDEN_ADMIN_TOKEN); configure another one and "
                                             "restart the server first",
                                         "id");
                      }
                      auto revoked = deps.tokens->RevokeToken(id);
                      if (!revoked) return tl::unexpected(revoked.error());
                      if (!*revoked) {
                        return MakeError(ErrorCode::kNotFound, "no token with id " + text, "id");
                      }
                      return JsonResponse(200, {{"revoked", true}});
                    }));
}

}  // namespace perfwarden::server::api
