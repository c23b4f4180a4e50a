// SPDX-License-Identifier: Apache-2.0
#include "wire/json_type_name.h"

namespace perfwarden {
namespace {

// Both kinds of document share nlohmann's value_t.
std::string_view TypeName(nlohmann::json::value_t type) {
  switch (type) {
    case nlohmann::json::value_t::null:
      return "null";
    case nlohmann::json::value_t::object:
      return "an object";
    case nlohmann::json::value_t::array:
      return "an array";
    case nlohmann::json::value_t::string:
      return "a string";
    case nlohmann::json::value_t::boolean:
      return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned:
    case nlohmann::json::value_t::number_float:
      return "a number";
    case nlohmann::json::value_t::binary:
      return "binary data";
    case nlohmann::json::value_t::discarded:
      return "nothing";
  }
  return "an unknown value";
}

}  // namespace

std::string_view JsonTypeName(const nlohmann::json& value) { return TypeName(value.type()); }

std::string_view JsonTypeName(const nlohmann::ordered_json& value) {
  return TypeName(value.type());
}

}  // namespace perfwarden
