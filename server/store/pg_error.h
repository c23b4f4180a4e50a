// SPDX-License-Identifier: Apache-2.0
// Maps libpqxx/libpq failures to perfwarden errors. Every store function catches pqxx's
// exceptions at its boundary and turns them into an Error through MapPgException, so the
// HTTP layer sees only transport-agnostic codes (503 while PostgreSQL is away, 409 on a unique
// violation, 400 on data the schema rejects).
#pragma once

#include <exception>
#include <string>

#include "core/result.h"

namespace perfwarden::store {

struct PgFailure {
  Error error;
  // The connection cannot be trusted any more (it broke, or the server is shutting down):
  // the pool discards it instead of reusing it.
  bool connection_lost = false;
};

// Classifies an exception thrown by libpqxx (or anything else). Without `context` (serving
// requests) the message is generic ("the database is unavailable", "statement timeout", "the
// database refused the request") and the database's own text is logged with the current
// request id (core/request_id.h): it can name SQL, hosts and ports. With `context` (a startup
// step, reported to the operator) the message is the database's text prefixed with it
// ("apply migration 0001_create_schema: ...").
PgFailure MapPgException(const std::exception& e, const std::string& context = {});

}  // namespace perfwarden::store
