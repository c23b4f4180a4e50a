// SPDX-License-Identifier: Apache-2.0
// The kind of a JSON value in words, for the error messages of every JSON reader
// ("expected a number, got a string"): the wire format decoders and the runner's adapters.
#pragma once

#include <nlohmann/json.hpp>
#include <string_view>

namespace perfwarden {

// "null", "a boolean", "a number", "a string", "an array", "an object", ...
std::string_view JsonTypeName(const nlohmann::json& value);
// The same for a document parsed with its keys in their written order.
std::string_view JsonTypeName(const nlohmann::ordered_json& value);

}  // namespace perfwarden
