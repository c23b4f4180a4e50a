#include "server/store/pg_error.h"

#include <pqxx/except>
#include <string_view>

namespace perfgate::store {
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

}  // namespace

PgFailure MapPgException(const std::exception& e, const std::string& context) {
  const std::string message = WithContext(context, e.what());
  auto failure = [&](ErrorCode code, bool lost = false) {
    return PgFailure{Error{code, message, {}}, lost};
  };
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) {
    return failure(ErrorCode::kUnavailable, true);
  }
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    // The commit may or may not have happened; the connection is gone either way.
    return failure(ErrorCode::kUnavailable, true);
  }
  if (dynamic_cast<const pqxx::statement_completion_unknown*>(&e) != nullptr) {
    return failure(ErrorCode::kUnavailable, true);
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr) {
    // Serialization failure or deadlock: nothing was written; a retry may succeed.
    return failure(ErrorCode::kUnavailable);
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e); sql != nullptr) {
    const std::string state = sql->sqlstate();
    // 08: connection exception; 57P01-57P03: admin/crash shutdown, cannot connect now.
    if (StartsWith(state, "08") || StartsWith(state, "57P")) {
      return failure(ErrorCode::kUnavailable, true);
    }
    // 53: insufficient resources (too many connections, disk full); 55P03: lock timeout;
    // 40: transaction rollback. All are worth a retry by the client.
    if (StartsWith(state, "53") || state == "55P03" || StartsWith(state, "40")) {
      return failure(ErrorCode::kUnavailable);
    }
    // 57014: cancelled, here by statement_timeout (PoolOptions): the request took too long.
    if (state == "57014") return failure(ErrorCode::kUnavailable);
    if (state == "23505") return failure(ErrorCode::kConflict);
    // 22: data exception (bad number, too long, invalid text); 23: other integrity violations
    // (check, not null, foreign key): the input does not fit the schema.
    if (StartsWith(state, "22") || StartsWith(state, "23")) {
      return failure(ErrorCode::kInvalidArgument);
    }
    return failure(ErrorCode::kInternal);
  }
  return failure(ErrorCode::kInternal);
}

}  // namespace perfgate::store
