// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the PgStore source files (not part of the store's interface): SQL
// fragments for fixed columns, PostgreSQL array literals passed as bound parameters, and
// parsing of array results and the RFC 3339 texts the stores accept.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace perfwarden::store::pgutil {

// A column (an SQL expression written in the source, never a value) as RFC 3339 UTC text with
// milliseconds; NULL stays NULL.
std::string Rfc3339Sql(std::string_view column);

// Array literals ('{...}') to bind as one text parameter and cast in SQL ($1::text[]).
std::string TextArray(const std::vector<std::string>& items);
template <class Integer>
std::string IntegerArray(const std::vector<Integer>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += std::to_string(items[i]);
  }
  out += '}';
  return out;
}
// Shortest round-trip decimal; non-finite values as PostgreSQL spells them.
std::string Float8Array(const std::vector<double>& items);

// Parses PostgreSQL's text output of a one-dimensional array whose elements are never quoted
// (numbers, uuids, the scope words) or are quoted text; "{}" is empty.
std::vector<std::string> ParseArray(std::string_view text);
// Same, each element a double.
std::vector<double> ParseFloat8Array(std::string_view text);
// Appends the elements of a one-dimensional float8[] without NULLs sent in PostgreSQL's binary
// array format (array_send) as bytea text output ("\x" and hex): exact doubles, without the
// server printing and the client parsing decimal text. False on anything else.
bool AppendFloat8ArraySend(std::string_view bytea_hex, std::vector<double>& out);

// wire::IsRfc3339 (already narrowed to what PostgreSQL's cast takes: year, offset, fraction)
// without a leap second.
bool IsStorableRfc3339(std::string_view text);

std::string HexEncode(std::string_view bytes);
// Lowercase hex SHA-256 of `text`.
std::string Sha256Hex(std::string_view text);
// false on odd length or a non-hex digit.
bool HexDecode(std::string_view hex, std::string* out);

}  // namespace perfwarden::store::pgutil
