// The strict JSON reader of every body perfgate accepts: one SAX pass that builds the DOM while
// enforcing the nesting depth, the number of values, string sizes, NUL-free strings and unique
// keys, so that a hostile body is refused before it is materialised (the DOM never holds more
// than max_elements values). Errors are kInvalidArgument naming the path
// ("results[3].values") or, for malformed text, the line and column.
#pragma once

#include <cstddef>
#include <limits>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"

namespace perfgate::wire {

struct JsonLimits {
  size_t max_string = 4096;  // bytes per string or key, anywhere in the document
  int max_depth = 32;        // nesting
  // Values (scalars, arrays and objects, the root included) per document. Unbounded by default:
  // run uploads are bounded by the body size and their own per-array checks.
  size_t max_elements = std::numeric_limits<size_t>::max();
};

// The DOM of `text`, or the first violation: malformed JSON (invalid UTF-8, NaN/Infinity and
// out-of-range numbers named as such), nesting deeper than max_depth, more than max_elements
// values, a string or key longer than max_string or holding U+0000 (PostgreSQL text and jsonb
// cannot), a duplicate key.
Result<nlohmann::json> ParseCheckedJson(std::string_view text, const JsonLimits& limits = {});

// Field paths as the errors name them: "commit" + "sha" -> "commit.sha", "" + "id" -> "id".
std::string FieldPath(const std::string& path, std::string_view key);
// "results" + 3 -> "results[3]".
std::string ElementPath(const std::string& path, size_t index);

}  // namespace perfgate::wire
