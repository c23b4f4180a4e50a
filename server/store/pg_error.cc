// SPDX-License-Identifier: Apache-2.0
#include "server/store/pg_error.h"

#include <spdlog/spdlog.h>

#include <pqxx/except>
#include <string_view>

#include "core/request_id.h"

namespace perfwarden::store {
namespace {

std::string WithContext(const std::string& context, std::string_view what) {
  std::string message(what);
  // libpq messages end in a newline and often start with "ERROR:  ".
  while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
    message.pop_back();
  }
  if (message.rfind("ERROR:  ", 0) == 0) message.erase(0, 8);
  return context.empty() ? message : context + ": " + message;
}

bool StartsWith(const std::string& s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.compare(0, prefix.size(), prefix) == 0;
}

struct Classified {
  ErrorCode code = ErrorCode::kInternal;
  bool connection_lost = false;
  std::string_view message;  // what a client may read
};

constexpr std::string_view kUnavailable = "the database is unavailable";
constexpr std::string_view kRefused = "the database refused the request";

Classified Classify(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    return {ErrorCode::kUnavailable, true, kUnavailable};
  }
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    // The commit may or may not have happened; the connection is gone either way.
    return {ErrorCode::kUnavailable, true, kUnavailable};
  }
  if (dynamic_cast<const pqxx::statement_completion_unknown*>(&e) != nullptr) {
    return {ErrorCode::kUnavailable, true, kUnavailable};
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr) {
    // Serialization failure or deadlock: nothing was written; a retry may succeed.
    return {ErrorCode::kUnavailable, false, kUnavailable};
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e); sql != nullptr) {
    const std::string state = sql->sqlstate();
    // 08: connection exception; 57P01-57P03: admin/crash shutdown, cannot connect now.
    if (StartsWith(state, "08") || StartsWith(state, "57P")) {
      return {ErrorCode::kUnavailable, true, kUnavailable};
    }
    // 53100: disk full: nothing of the statement's transaction was stored; named, since an
    // operator has to free space.
    if (state == "53100") return {ErrorCode::kUnavailable, false, "the database's disk is full"};
    // 53: insufficient resources (too many connections, disk full); 55P03: lock timeout;
    // 40: transaction rollback. All are worth a retry by the client.
    if (StartsWith(state, "53") || state == "55P03" || StartsWith(state, "40")) {
      return {ErrorCode::kUnavailable, false, kUnavailable};
    }
    // 57014: cancelled, here by statement_timeout (PoolOptions): the request took too long.
    if (state == "57014") return {ErrorCode::kUnavailable, false, "statement timeout"};
    if (state == "23505") return {ErrorCode::kConflict, false, kRefused};
    // 22: data exception (bad number, too long, invalid text); 23: other integrity violations
    // (check, not null, foreign key): the input does not fit the schema.
    if (StartsWith(state, "22") || StartsWith(state, "23")) {
      return {ErrorCode::kInvalidArgument, false, kRefused};
    }
    return {ErrorCode::kInternal, false, kRefused};
  }
  return {ErrorCode::kInternal, false, kRefused};
}

}  // namespace

PgFailure MapPgException(const std::exception& e, const std::string& context) {
  const Classified classified = Classify(e);
  std::string detail = WithContext(context, e.what());
  if (!context.empty()) {
    // A named step (startup: migrations, the embedded cluster's set-up) reports to the operator.
    return PgFailure{Error{classified.code, std::move(detail), {}}, classified.connection_lost};
  }
  // The database's text (SQL, host, port, DETAIL and CONTEXT lines) stays in the log, under the
  // request id that the client's error body names.
  const std::string& request_id = CurrentRequestId();
  spdlog::warn("request {}: {}: {}", request_id.empty() ? "-" : request_id, classified.message,
               detail);
  return PgFailure{Error{classified.code, std::string(classified.message), {}},
                   classified.connection_lost};
}

}  // namespace perfwarden::store
