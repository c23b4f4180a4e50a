// SPDX-License-Identifier: Apache-2.0
// Whether every object of a JSON document has its keys in the order nlohmann's dump writes them
// (sorted): the promise of wire/'s fast verdict writer, which writes text without a json object.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace perfwarden::testing {

inline bool KeysSorted(const nlohmann::ordered_json& value) {
  if (value.is_array()) {
    for (const auto& item : value) {
      if (!KeysSorted(item)) return false;
    }
  }
  if (!value.is_object()) return true;
  std::string previous;
  for (const auto& [key, item] : value.items()) {
    if (key < previous || !KeysSorted(item)) return false;
    previous = key;
  }
  return true;
}

}  // namespace perfwarden::testing
