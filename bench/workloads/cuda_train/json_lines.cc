// SPDX-License-Identifier: Apache-2.0
#include "json_lines.h"

#include <cmath>
#include <cstdio>

namespace perfwarden::cuda_train {

std::string JsonString(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  return out + "\"";
}

std::string JsonNumber(double value) {
  if (!std::isfinite(value)) return "null";
  char text[32];
  if (value == std::floor(value) && std::abs(value) < 9007199254740992.0) {
    std::snprintf(text, sizeof text, "%.0f", value);
  } else {
    std::snprintf(text, sizeof text, "%.10g", value);
  }
  return text;
}

std::string StepLine(long long step, bool warmup, double time_s, const Values& values) {
  std::string out = "{\"event\":\"step\",\"step\":" + std::to_string(step) +
                    ",\"warmup\":" + (warmup ? "true" : "false") +
                    ",\"time_s\":" + JsonNumber(time_s) + ",\"values\":{";
  bool first = true;
  for (const auto& [name, value] : values) {
    if (!std::isfinite(value)) continue;
    if (!first) out += ',';
    first = false;
    out += JsonString(name) + ":" + JsonNumber(value);
  }
  return out + "}}";
}

std::string MetricLine(std::string_view name, double value, std::string_view unit,
                       std::string_view direction) {
  return "{\"event\":\"metric\",\"name\":" + JsonString(name) + ",\"value\":" + JsonNumber(value) +
         ",\"unit\":" + JsonString(unit) + ",\"direction\":" + JsonString(direction) + "}";
}

std::string InfoLine(std::string_view key, std::string_view value) {
  return "{\"event\":\"info\",\"key\":" + JsonString(key) + ",\"value\":" + JsonString(value) + "}";
}

std::string InfoLine(std::string_view key, double value) {
  return "{\"event\":\"info\",\"key\":" + JsonString(key) + ",\"value\":" + JsonNumber(value) + "}";
}

std::string EndLine() { return "{\"event\":\"end\"}"; }

}  // namespace perfwarden::cuda_train
