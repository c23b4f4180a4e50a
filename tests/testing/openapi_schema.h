// SPDX-License-Identifier: Apache-2.0
// docs/openapi.yaml as the tests read it: the served document parsed with yaml-cpp, local $refs
// resolved, and the property names of a schema, so that a test can hold a wire type's encoding
// against the schema that documents it. Header-only; the test links the server's api library
// (OpenApiYaml() in server/api/routes.h) and yaml-cpp.
#pragma once

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "server/api/routes.h"

namespace perfwarden::server::api {

using Keys = std::set<std::string>;

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The node at a local reference ("#/components/schemas/Verdict"); undefined when missing.
inline YAML::Node At(const YAML::Node& node, const std::vector<std::string>& parts, size_t i = 0) {
  if (i == parts.size()) return node;
  if (!node.IsDefined() || !node.IsMap()) return YAML::Node(YAML::NodeType::Undefined);
  const YAML::Node child = node[parts[i]];
  if (!child.IsDefined()) return YAML::Node(YAML::NodeType::Undefined);
  return At(child, parts, i + 1);
}

inline YAML::Node Resolve(const YAML::Node& root, const std::string& ref) {
  if (ref.rfind("#/", 0) != 0) return YAML::Node(YAML::NodeType::Undefined);
  std::vector<std::string> parts;
  std::stringstream rest(ref.substr(2));
  for (std::string part; std::getline(rest, part, '/');) parts.push_back(part);
  return At(root, parts);
}

inline void CollectRefs(const YAML::Node& node, std::vector<std::string>* refs) {
  if (node.IsMap()) {
    for (const auto& entry : node) {
      if (entry.first.as<std::string>() == "$ref") {
        refs->push_back(entry.second.as<std::string>());
      } else {
        CollectRefs(entry.second, refs);
      }
    }
  } else if (node.IsSequence()) {
    for (const auto& item : node) CollectRefs(item, refs);
  }
}

inline Keys KeysOf(const YAML::Node& map) {
  Keys out;
  if (map.IsDefined() && map.IsMap()) {
    for (const auto& entry : map) out.insert(entry.first.as<std::string>());
  }
  return out;
}

inline Keys KeysOf(const nlohmann::json& object) {
  Keys out;
  for (const auto& [key, value] : object.items()) out.insert(key);
  return out;
}

// The served document, parsed; undefined (and the reason in *error) when it is not YAML.
inline YAML::Node LoadServedDocument(std::string* error) {
  try {
    return YAML::Load(std::string(OpenApiYaml()));
  } catch (const YAML::Exception& e) {
    *error = e.what();
    return YAML::Node(YAML::NodeType::Undefined);
  }
}

// Every YAML node is reached through const references: yaml-cpp's non-const operator[] may add
// the key it looks up.
class OpenApiDocTest : public ::testing::Test {
 protected:
  OpenApiDocTest() : root_(LoadServedDocument(&parse_error_)) {}

  const YAML::Node Schema(const std::string& name) const {
    return Resolve(root_, "#/components/schemas/" + name);
  }
  // A schema's property names, and its required ones.
  Keys Properties(const std::string& name) const { return KeysOf(Schema(name)["properties"]); }
  Keys Required(const std::string& name) const {
    Keys out;
    const YAML::Node required = Schema(name)["required"];
    if (!required.IsDefined()) return out;
    for (const auto& item : required) out.insert(item.as<std::string>());
    return out;
  }

  std::string parse_error_;
  const YAML::Node root_;
};

}  // namespace perfwarden::server::api
