// SPDX-License-Identifier: Apache-2.0
// The YAML reading that perfwarden.yaml and server.yaml share (private to config/): the document
// loaded, every problem located ("FILE:LINE:COL: key: problem" or "FILE:LINE: key: problem", as
// each file has always written it), the first one kept, mappings checked for plain, known and
// unique keys, and scalars read as text, integers, numbers, booleans and byte sizes.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.h"

namespace perfwarden::config {

using Keys = std::span<const std::string_view>;

// Where messages point: perfwarden.yaml has always given line and column, server.yaml the line.
enum class Position { kLineColumn, kLine };

// What a range error repeats: the text as written ("007") or the number read from it ("7").
enum class Echo { kText, kValue };

// Problems with a value; the messages say what is wrong, the reader adds key and position.
inline constexpr std::string_view kNoValue = "has no value";
inline constexpr std::string_view kSingleValue = "expected a single value";
inline constexpr std::string_view kNotAMapping = "must be a mapping of keys to values";
inline constexpr std::string_view kPlainNames = "keys must be plain names";
inline constexpr std::string_view kDuplicateKey = "duplicate key";

std::string Quoted(std::string_view text);
// "a, b, c".
std::string JoinKeys(Keys keys);
bool Contains(Keys keys, std::string_view key);
// "unknown key (LABEL: a, b)": the keys valid at that level, so that a typo is easy to fix.
std::string UnknownKey(std::string_view label, Keys known);

// An integer in [min, max]: "expected WHAT, got \"x\"", "must be in [min, max], got x".
Result<std::int64_t> ParseInteger(std::string_view text, std::int64_t min, std::int64_t max,
                                  std::string_view what = "an integer", Echo echo = Echo::kValue);
// A byte count in [min, max], optionally with a binary suffix (KiB, MiB, GiB), so that 32MiB
// reads as meant.
Result<std::int64_t> ParseByteSize(std::string_view text, std::int64_t min, std::int64_t max);
// A finite number in (low, high]: every such quantity here excludes zero and allows its maximum.
Result<double> ParseBoundedNumber(std::string_view text, double low, double high);
// true/True/TRUE or false/False/FALSE.
Result<bool> ParseBool(std::string_view text);

// Reads the configuration file whole: "PATH: cannot read the configuration file" otherwise.
Result<std::string> ReadConfigFile(const std::string& path);

// One entry of a YAML mapping; the key carries the position when the value is empty.
struct Entry {
  YAML::Node key;
  YAML::Node value;
};

// A mapping whose keys have been checked, with its path for messages.
struct Map {
  std::string path;  // "" for the document, "suites[2]", ...
  YAML::Mark mark;
  std::map<std::string, Entry, std::less<>> entries;

  const Entry* Find(std::string_view key) const;
  // "path.key", or "key" at the top.
  std::string Path(std::string_view key) const;
};

enum class Check { kAny, kNonEmpty, kName };

// The name rule of perfwarden.yaml's suites, projects and testbeds (the wire format's names).
bool IsName(std::string_view text);
bool IsNameChar(char c);
inline constexpr std::size_t kMaxNameLength = 200;

// Walks a document. The first problem is kept (later ones are usually consequences of it);
// afterwards the accessors change nothing, so a reader can run to the end without branching.
class YamlReader {
 public:
  YamlReader(std::string_view source, Position position) : source_(source), position_(position) {}

  bool ok() const { return !error_.has_value(); }
  const Error& error() const { return *error_; }

  // "SOURCE:POSITION: KEY: message"; the position is left out for a mark that points nowhere,
  // the key when empty.
  void Fail(const YAML::Mark& mark, const std::string& key, std::string_view message);
  // At the value, or at its key when the value is empty.
  void Fail(const Entry& at, const std::string& key, std::string_view message);
  // For values that did not come from the file.
  void FailWithoutPosition(const std::string& key, const std::string& message);

  // The document; "invalid YAML: ..." at the scanner's position when it does not parse.
  std::optional<YAML::Node> Load(std::string_view text);

  // The keys of a mapping; unknown and duplicate keys are errors, an unknown one listing the
  // allowed keys (every key is allowed when `allowed` is empty).
  Map ReadMap(const YAML::Node& node, const YAML::Mark& fallback, std::string path, Keys allowed);
  void Require(const Map& map, std::string_view key);

  // The entry's value as text: "has no value" (or the caller's wording) when empty.
  std::optional<std::string> Scalar(const Entry& e, const std::string& path,
                                    std::string_view no_value = kNoValue);

  // The accessors set *out only when the key is present and its value valid.
  bool Text(const Map& map, std::string_view key, std::string* out, Check check = Check::kAny);
  template <class Int>
  void Integer(const Map& map, std::string_view key, std::int64_t min, std::int64_t max, Int* out) {
    std::int64_t value = 0;
    if (ReadInteger(map, key, min, max, &value)) *out = static_cast<Int>(value);
  }
  void Positive(const Map& map, std::string_view key, double low, double high,
                std::optional<double>* out);
  void Bool(const Map& map, std::string_view key, bool* out);
  void StringList(const Map& map, std::string_view key, std::vector<std::string>* out);

 private:
  bool ReadInteger(const Map& map, std::string_view key, std::int64_t min, std::int64_t max,
                   std::int64_t* out);

  std::string_view source_;
  Position position_;
  std::optional<Error> error_;
};

}  // namespace perfwarden::config
