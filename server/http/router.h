// SPDX-License-Identifier: Apache-2.0
// Routes a Request by method and path pattern to a handler and returns its Response; callable
// without a socket (the server and the unit tests both call Handle). Patterns are literal
// segments and named parameters: "/api/v1/projects/{project}/runs/{id}".
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/types.h"

namespace perfwarden::http {

// Decoded path parameters by name ("project" -> "my proj" for "/projects/my%20proj").
using PathParams = std::map<std::string, std::string, std::less<>>;
using Handler = std::function<Response(const Request&, const PathParams&)>;

class Router {
 public:
  // Route label for requests that matched no path (bounded metrics cardinality).
  static constexpr std::string_view kUnmatchedRoute = "unmatched";

  struct Routed {
    Response response;
    std::string route;  // the matched route's name, or kUnmatchedRoute
  };

  // Registers `handler` for `method` on `pattern`; `name` labels the route in metrics and logs.
  // Where two patterns match a path, the one with a literal segment earliest wins
  // ("/runs/latest" before "/runs/{id}"), whatever the order of registration.
  // kHeavy marks a handler that computes for long (a verdict: tens of ms of CPU): the server
  // runs it on its compute pool, in arrival order, so that it neither holds an I/O thread nor
  // lets later requests overtake earlier ones, and bounds how many wait (heavy_queue.h).
  enum class Cost { kLight, kHeavy };
  void Add(std::string method, std::string_view pattern, std::string name, Handler handler,
           Cost cost = Cost::kLight);

  // The cost and name of the route that `request` would be handled by (kLight and "" when none
  // matches); the name lives as long as the router.
  struct Costed {
    Cost cost = Cost::kLight;
    std::string_view route;
  };
  Costed CostOf(const Request& request) const;

  // 404 when no pattern matches the path, 405 with Allow when patterns match but none for the
  // method, 400 when a path segment is badly percent-encoded, 400 INVALID_ARGUMENT naming the
  // parameter ("path parameter project: contains NUL", "query parameter branch: not valid
  // UTF-8") when a decoded path or query parameter holds NUL or invalid UTF-8. A handler that
  // throws becomes a 500 INTERNAL response (the exception's text is not sent to the client).
  // Every response carries X-Request-Id (request.id, or a new id when it is empty); the id is
  // this thread's current request id (core/request_id.h) while the handler runs, and error
  // bodies name it ("request_id").
  Routed Route(const Request& request) const;
  Response Handle(const Request& request) const { return Route(request).response; }

 private:
  struct Segment {
    std::string text;  // the literal, or the parameter's name
    bool is_param = false;
  };
  struct Entry {
    std::string method;
    std::vector<Segment> segments;
    std::string name;
    Handler handler;
    Cost cost = Cost::kLight;
  };
  // The most specific route for the request's path and method (nullptr: none for the method),
  // the most specific for the path whatever the method, the methods allowed on the path, and
  // the decoded segments; an error response for a badly encoded path.
  struct Match {
    const Entry* best = nullptr;
    const Entry* best_any_method = nullptr;
    std::set<std::string> allowed;
    std::vector<std::string> segments;
    std::optional<Response> error;
  };
  Match Find(const Request& request) const;
  // Route's work, with the request's id current on this thread (core/request_id.h).
  Routed RouteInScope(const Request& request) const;

  std::vector<Entry> routes_;
};

}  // namespace perfwarden::http
