// SPDX-License-Identifier: Apache-2.0
// The strict JSON reader of every body perfwarden accepts: one SAX pass that builds the DOM while
// enforcing the nesting depth, the number of values, string sizes, NUL-free strings and unique
// keys, so that a hostile body is refused before it is materialised (the DOM never holds more
// than max_elements values). Errors are kInvalidArgument naming the path
// ("results[3].values") or, for malformed text, the line and column.
#pragma once

#include <cstddef>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace perfwarden::wire {

struct JsonLimits {
  size_t max_string = 4096;  // bytes per string or key, anywhere in the document
  int max_depth = 32;        // nesting
  // Values (scalars, arrays and objects, the root included) per document. Unbounded by default:
  // run uploads are bounded by the body size and their own per-array checks.
  size_t max_elements = std::numeric_limits<size_t>::max();
  // Refuse a root that is not an object at its first byte ("the body must be a JSON object, got
  // an array"), before anything of it is built.
  bool object_root = false;
};

// An array of the document whose elements are not kept in it: each element is built as a DOM of
// its own, handed to `sink` as soon as it is complete and dropped, so that the memory a body costs
// is one element's DOM plus what the sink keeps (typed values), never the DOM of the whole array.
// In the document the array stays, empty. Streamed arrays may nest (a streamed element's own
// streamed arrays are empty in the DOM the sink gets).
struct StreamedArray {
  // Where the array is: member keys, and "*" for any element of an array on the way.
  // {"results"}: the root's "results"; {"series", "*", "blocks"}: the blocks of every series.
  std::vector<std::string> path;
  // Values one element's DOM may hold (the element included); more is kInvalidArgument at the
  // value that is one too many, before it is built.
  size_t max_element_values = std::numeric_limits<size_t>::max();
  // Takes an element, its path ("series[2].blocks[4]") and the index in each array on the way
  // ({2, 4}); an error stops the parse and is the parse's error.
  std::function<Result<void>(nlohmann::json element, const std::string& path,
                             const std::vector<size_t>& indices)>
      sink;
};

// The DOM of `text`, or the first violation: malformed JSON (invalid UTF-8, NaN/Infinity and
// out-of-range numbers named as such), nesting deeper than max_depth, more than max_elements
// values, a string or key longer than max_string or holding U+0000 (PostgreSQL text and jsonb
// cannot), a duplicate key.
// `limits.max_elements` bounds the values of the document without the streamed elements.
Result<nlohmann::json> ParseCheckedJson(std::string_view text, const JsonLimits& limits = {},
                                        std::span<const StreamedArray> streamed = {});

// Field paths as the errors name them: "commit" + "sha" -> "commit.sha", "" + "id" -> "id".
std::string FieldPath(const std::string& path, std::string_view key);
// "results" + 3 -> "results[3]".
std::string ElementPath(const std::string& path, size_t index);

}  // namespace perfwarden::wire
