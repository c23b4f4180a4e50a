// Routes a Request by method and path pattern to a handler and returns its Response; callable
// without a socket (the server and the unit tests both call Handle). Patterns are literal
// segments and named parameters: "/api/v1/projects/{project}/runs/{id}".
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "server/http/types.h"

namespace perfgate::http {

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
  void Add(std::string method, std::string_view pattern, std::string name, Handler handler);

  // 404 when no pattern matches the path, 405 with Allow when patterns match but none for the
  // method, 400 when a path segment is badly percent-encoded. A handler that throws becomes a
  // 500 INTERNAL response (the exception's text is not sent to the client).
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
  };

  std::vector<Entry> routes_;
};

}  // namespace perfgate::http
