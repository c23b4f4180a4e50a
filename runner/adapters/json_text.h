// SPDX-License-Identifier: Apache-2.0
// JSON text as benchmark tools write it: standard JSON plus the bare NaN, -NaN, Infinity and
// -Infinity tokens that Google Benchmark and Python's json module emit for non-finite doubles.
// Internal to the adapters (nlohmann-json is a private dependency of perfwarden_adapters); parse
// errors name the source and the line:column of the original text.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "core/result.h"
#include "wire/json_type_name.h"

namespace perfwarden::adapters {

// Parses `text`; non-finite tokens become NaN/inf numbers. Errors (kInvalidArgument) read
// "<source>:<line>:<column>: invalid JSON: <what was expected>". Never throws.
Result<nlohmann::json> ParseJsonText(std::string_view text, std::string_view source);

// Compact JSON; non-finite numbers are written as NaN, -NaN, Infinity, -Infinity so that
// ParseJsonText reads them back unchanged. Never throws.
std::string DumpJsonText(const nlohmann::json& value);

// JsonTypeName (wire/json_type_name.h) names a value's kind in messages.
using ::perfwarden::JsonTypeName;

// 1-based line and column (in bytes) of byte `offset` of `text`; an offset past the end points
// just after the last character.
struct TextPosition {
  size_t line = 1;
  size_t column = 1;
};
TextPosition PositionOf(std::string_view text, size_t offset);

}  // namespace perfwarden::adapters
