// SPDX-License-Identifier: Apache-2.0
#include "config/yaml_reader.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <utility>

namespace perfwarden::config {
namespace {

std::string Number(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

}  // namespace

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

std::string JoinKeys(Keys keys) {
  std::string out;
  for (std::string_view key : keys) out += (out.empty() ? "" : ", ") + std::string(key);
  return out;
}

bool Contains(Keys keys, std::string_view key) {
  return std::find(keys.begin(), keys.end(), key) != keys.end();
}

std::string UnknownKey(std::string_view label, Keys known) {
  return "unknown key (" + std::string(label) + ": " + JoinKeys(known) + ")";
}

Result<std::int64_t> ParseInteger(std::string_view text, std::int64_t min, std::int64_t max,
                                  std::string_view what, Echo echo) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc() || ptr != end) {
    return InvalidArgument("expected " + std::string(what) + ", got " + Quoted(text));
  }
  if (value < min || value > max) {
    return InvalidArgument("must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                           "], got " +
                           (echo == Echo::kText ? std::string(text) : std::to_string(value)));
  }
  return value;
}

Result<std::int64_t> ParseByteSize(std::string_view text, std::int64_t min, std::int64_t max) {
  static constexpr std::array<std::pair<std::string_view, int>, 3> kSuffixes = {
      {{"KiB", 10}, {"MiB", 20}, {"GiB", 30}}};
  const std::string_view original = text;
  int shift = 0;
  for (const auto& [suffix, bits] : kSuffixes) {
    if (text.size() > suffix.size() && text.ends_with(suffix)) {
      text.remove_suffix(suffix.size());
      shift = bits;
      break;
    }
  }
  // The limits stay far below 2^33, so clamping before the shift cannot hide a bad value.
  auto number = ParseInteger(text, std::numeric_limits<std::int32_t>::min(),
                             std::numeric_limits<std::int64_t>::max(),
                             "a byte count (an integer, optionally with KiB, MiB or GiB)");
  if (!number) return tl::unexpected(number.error());
  const std::int64_t value =
      std::clamp<std::int64_t>(*number, -(std::int64_t{1} << 32), std::int64_t{1} << 32) *
      (std::int64_t{1} << shift);
  if (value < min || value > max) {
    return InvalidArgument("must be in [" + std::to_string(min) + ", " + std::to_string(max) +
                           "] bytes, got " + std::string(original));
  }
  return value;
}

Result<double> ParseBoundedNumber(std::string_view text, double low, double high) {
  double value = 0;
  auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || ptr != text.data() + text.size() ||
      !std::isfinite(value)) {
    return InvalidArgument("expected a number, got " + Quoted(text));
  }
  if (!(value > low && value <= high)) {
    return InvalidArgument("must be in (" + Number(low) + ", " + Number(high) + "], got " +
                           std::string(text));
  }
  return value;
}

Result<bool> ParseBool(std::string_view text) {
  if (text == "true" || text == "True" || text == "TRUE") return true;
  if (text == "false" || text == "False" || text == "FALSE") return false;
  return InvalidArgument("expected true or false, got " + Quoted(text));
}

Result<std::string> ReadConfigFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(path + ": cannot read the configuration file", "config");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

bool IsNameChar(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_' || c == '.' || c == '-';
}

bool IsName(std::string_view text) {
  return !text.empty() && text.size() <= kMaxNameLength &&
         std::all_of(text.begin(), text.end(), IsNameChar);
}

const Entry* Map::Find(std::string_view key) const {
  auto it = entries.find(key);
  return it == entries.end() ? nullptr : &it->second;
}

std::string Map::Path(std::string_view key) const {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

void YamlReader::Fail(const YAML::Mark& mark, const std::string& key, std::string_view message) {
  if (error_) return;
  std::string text(source_);
  if (position_ == Position::kLineColumn && !mark.is_null()) {
    text += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  } else if (position_ == Position::kLine && mark.line >= 0) {
    text += ":" + std::to_string(mark.line + 1);
  }
  text += ": ";
  if (!key.empty()) text += key + ": ";
  error_ = Error{ErrorCode::kInvalidArgument, text + std::string(message), key};
}

void YamlReader::Fail(const Entry& at, const std::string& key, std::string_view message) {
  Fail(at.value.IsNull() ? at.key.Mark() : at.value.Mark(), key, message);
}

void YamlReader::FailWithoutPosition(const std::string& key, const std::string& message) {
  if (!error_) error_ = Error{ErrorCode::kInvalidArgument, message, key};
}

std::optional<YAML::Node> YamlReader::Load(std::string_view text) {
  try {
    return YAML::Load(std::string(text));
  } catch (const YAML::Exception& e) {
    Fail(e.mark, "", "invalid YAML: " + e.msg);
    return std::nullopt;
  }
}

Map YamlReader::ReadMap(const YAML::Node& node, const YAML::Mark& fallback, std::string path,
                        Keys allowed) {
  Map map{std::move(path), node.IsNull() ? fallback : node.Mark(), {}};
  if (!node.IsMap()) {
    Fail(map.mark, map.path, kNotAMapping);
    return map;
  }
  for (const auto& item : node) {
    const std::string name = item.first.IsScalar() ? item.first.Scalar() : std::string();
    if (name.empty()) {
      Fail(item.first.Mark(), map.path, kPlainNames);
    } else if (!allowed.empty() && !Contains(allowed, name)) {
      Fail(item.first.Mark(), map.Path(name), UnknownKey("allowed", allowed));
    } else if (!map.entries.emplace(name, Entry{item.first, item.second}).second) {
      Fail(item.first.Mark(), map.Path(name), kDuplicateKey);
    }
  }
  return map;
}

void YamlReader::Require(const Map& map, std::string_view key) {
  if (ok() && map.Find(key) == nullptr) {
    Fail(map.mark, map.path, "missing required key " + std::string(key));
  }
}

std::optional<std::string> YamlReader::Scalar(const Entry& e, const std::string& path,
                                              std::string_view no_value) {
  if (!ok()) return std::nullopt;
  if (e.value.IsNull()) return Fail(e, path, no_value), std::nullopt;
  if (!e.value.IsScalar()) return Fail(e, path, kSingleValue), std::nullopt;
  return e.value.Scalar();
}

bool YamlReader::Text(const Map& map, std::string_view key, std::string* out, Check check) {
  const Entry* e = map.Find(key);
  if (e == nullptr) return false;
  std::optional<std::string> text = Scalar(*e, map.Path(key));
  if (!text) return false;
  if (check == Check::kNonEmpty && text->empty()) {
    return Fail(*e, map.Path(key), "must not be empty"), false;
  }
  if (check == Check::kName && !IsName(*text)) {
    static const std::string kNameRule =
        "must be 1.." + std::to_string(kMaxNameLength) + " characters from [A-Za-z0-9_.-]";
    return Fail(*e, map.Path(key), kNameRule + ", got \"" + *text + "\""), false;
  }
  *out = *std::move(text);
  return true;
}

bool YamlReader::ReadInteger(const Map& map, std::string_view key, std::int64_t min,
                             std::int64_t max, std::int64_t* out) {
  std::string text;
  if (!Text(map, key, &text)) return false;
  auto value = ParseInteger(text, min, max, "an integer", Echo::kText);
  if (!value) return Fail(*map.Find(key), map.Path(key), value.error().message), false;
  *out = *value;
  return true;
}

void YamlReader::Positive(const Map& map, std::string_view key, double low, double high,
                          std::optional<double>* out) {
  std::string text;
  if (!Text(map, key, &text)) return;
  auto value = ParseBoundedNumber(text, low, high);
  if (!value) return Fail(*map.Find(key), map.Path(key), value.error().message);
  *out = *value;
}

void YamlReader::Bool(const Map& map, std::string_view key, bool* out) {
  std::string text;
  if (!Text(map, key, &text)) return;
  auto value = ParseBool(text);
  if (!value) return Fail(*map.Find(key), map.Path(key), value.error().message);
  *out = *value;
}

void YamlReader::StringList(const Map& map, std::string_view key, std::vector<std::string>* out) {
  const Entry* e = map.Find(key);
  if (e == nullptr || !ok()) return;
  if (!e->value.IsSequence()) return Fail(*e, map.Path(key), "expected a list of strings");
  out->clear();
  for (std::size_t i = 0; i < e->value.size(); ++i) {
    const std::string path = map.Path(key) + "[" + std::to_string(i) + "]";
    out->push_back(Scalar(Entry{e->key, e->value[i]}, path).value_or(""));
  }
}

}  // namespace perfwarden::config
