// Wire format v1 decoder: one SAX pass that builds the DOM while enforcing the nesting depth,
// string limits and unique keys (so a hostile body is refused before it is materialised), then
// a typed walk over the DOM that validates every field and names its path on failure.
#include "core/wire.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <initializer_list>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "core/json_type_name.h"

namespace perfgate::wire {
namespace {

using nlohmann::json;
using Status = tl::expected<void, Error>;

// Keeps the validation walk readable: every step either passes or returns its error as is.
#define PERFGATE_WIRE_TRY(expr)                                                               \
  do {                                                                                        \
    if (Status status_ = (expr); !status_) return tl::unexpected(std::move(status_.error())); \
  } while (false)

std::string Join(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string Index(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

Status WrongType(const std::string& field, std::string_view expected, const json& got) {
  return InvalidArgument(
      "expected " + std::string(expected) + ", got " + std::string(JsonTypeName(got)), field);
}

// 1-based line and byte column of `offset`.
std::string LineColumn(std::string_view text, size_t offset) {
  size_t line = 1;
  size_t line_start = 0;
  offset = std::min(offset, text.size());
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return "line " + std::to_string(line) + ", column " + std::to_string(offset - line_start + 1);
}

// nlohmann's message without its "[json.exception...] parse error at line L, column C: " prefix
// (its column counts from the last newline it saw, ours is recomputed) and without the echo of
// the offending token: that echo can be megabytes long or hold the very invalid UTF-8 being
// reported, which would make the error response itself invalid JSON.
std::string Detail(std::string_view what) {
  if (const size_t bracket = what.find("] ");
      what.starts_with("[json.exception.") && bracket != std::string_view::npos) {
    what.remove_prefix(bracket + 2);
  }
  if (what.starts_with("parse error")) {
    if (const size_t colon = what.find(": "); colon != std::string_view::npos) {
      what.remove_prefix(colon + 2);
    }
  }
  std::string detail(what);
  if (const size_t echo = what.find("; last read: "); echo != std::string_view::npos) {
    detail = std::string(what.substr(0, echo));
    if (const size_t expected = what.rfind("; expected ");
        expected != std::string_view::npos && expected > echo) {
      detail += what.substr(expected);
    }
  }
  constexpr size_t kMaxDetail = 200;
  if (detail.size() > kMaxDetail) detail = detail.substr(0, kMaxDetail) + "...";
  for (char& c : detail) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7F) c = '?';
  }
  return detail;
}

// Builds the DOM through nlohmann's own builder and stops at the first violation of a limit that
// must hold before the DOM exists: depth (the parser itself is iterative, so stopping here means
// a 100,000-deep body costs 33 frames), string size and NUL characters (PostgreSQL text and jsonb
// cannot hold U+0000), and duplicate keys (nlohmann would keep the last one silently).
class CheckingSax {
 public:
  CheckingSax(json& root, std::string_view text, const DecodeLimits& limits)
      : dom_(root, /*allow_exceptions_=*/false), text_(text), limits_(limits) {}

  bool null() { return BeginValue() && dom_.null(); }
  bool boolean(bool value) { return BeginValue() && dom_.boolean(value); }
  bool number_integer(json::number_integer_t value) {
    return BeginValue() && dom_.number_integer(value);
  }
  bool number_unsigned(json::number_unsigned_t value) {
    return BeginValue() && dom_.number_unsigned(value);
  }
  bool number_float(json::number_float_t value, const json::string_t& text) {
    return BeginValue() && dom_.number_float(value, text);
  }
  bool string(json::string_t& value) {
    return BeginValue() && CheckString(value, Path(), "string") && dom_.string(value);
  }
  bool binary(json::binary_t& value) { return BeginValue() && dom_.binary(value); }
  bool start_object(std::size_t size) {
    return BeginValue() && Enter(/*object=*/true) && dom_.start_object(size);
  }
  bool key(json::string_t& value) {
    // The object's own path: the key is what is wrong, and the previous key is not to blame.
    if (!CheckString(value, Path(frames_.size() - 1), "key")) return false;
    Frame& frame = frames_.back();
    frame.key = value;
    if (!frame.keys.insert(value).second) return Fail(Path(), "duplicate key");
    return dom_.key(value);
  }
  bool end_object() {
    frames_.pop_back();
    return dom_.end_object();
  }
  bool start_array(std::size_t size) {
    return BeginValue() && Enter(/*object=*/false) && dom_.start_array(size);
  }
  bool end_array() {
    frames_.pop_back();
    return dom_.end_array();
  }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& ex) {
    // `position` counts the bytes read, the offending one included.
    const size_t offset = position > 0 ? position - 1 : 0;
    std::string detail = Detail(ex.what());
    if (detail.find("UTF-8") != std::string::npos) {
      detail = "invalid UTF-8 in a string (" + detail + ")";
    } else if (ex.id == 406) {
      detail = "number out of the range of a double (" + detail + ")";
    } else if (IsNonFiniteToken(offset)) {
      detail = "NaN and Infinity are not JSON numbers; values must be finite (" + detail + ")";
    }
    return Fail("", "malformed JSON at " + LineColumn(text_, offset) + ": " + detail);
  }

  const std::optional<Error>& error() const { return error_; }

 private:
  struct Frame {
    bool object = false;
    std::string key;      // objects: the key of the current member
    size_t elements = 0;  // arrays: elements begun so far
    std::set<std::string, std::less<>> keys;
  };

  bool Fail(std::string field, std::string message) {
    if (!error_) error_ = Error{ErrorCode::kInvalidArgument, std::move(message), std::move(field)};
    return false;
  }

  bool BeginValue() {
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().elements;
    return true;
  }

  bool Enter(bool object) {
    if (frames_.size() >= static_cast<size_t>(std::max(limits_.max_depth, 0))) {
      return Fail(Path(),
                  "JSON nesting deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    frames_.push_back(Frame{object, {}, 0, {}});
    return true;
  }

  bool CheckString(const std::string& value, std::string field, std::string_view what) {
    if (value.size() > limits_.max_string) {
      return Fail(std::move(field), std::string(what) + " longer than " +
                                        std::to_string(limits_.max_string) + " bytes");
    }
    if (value.find('\0') != std::string::npos) {
      return Fail(std::move(field), std::string(what) + " contains a NUL character (U+0000)");
    }
    return true;
  }

  // The path of the value being parsed: every open container's member key or element index.
  std::string Path() const { return Path(frames_.size()); }

  // The path through the `count` outermost containers only.
  std::string Path(size_t count) const {
    std::string path;
    for (size_t i = 0; i < count; ++i) {
      const Frame& frame = frames_[i];
      if (frame.object) {
        path = Join(path, frame.key);
      } else if (frame.elements > 0) {
        path = Index(path, frame.elements - 1);
      }
    }
    return path;
  }

  bool IsNonFiniteToken(size_t offset) const {
    // The lexer stops on the first byte it cannot take: 'N' or 'I', or the one after a '-'.
    for (size_t begin = offset > 0 ? offset - 1 : 0; begin <= offset; ++begin) {
      for (std::string_view token : {"NaN", "Infinity", "-NaN", "-Infinity", "+Infinity"}) {
        if (text_.substr(begin, token.size()) == token) return true;
      }
    }
    return false;
  }

  nlohmann::detail::json_sax_dom_parser<json> dom_;
  std::string_view text_;
  const DecodeLimits& limits_;
  std::vector<Frame> frames_;
  std::optional<Error> error_;
};

bool IsHex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::string ToLower(std::string text) {
  for (char& c : text) c = Lower(c);
  return text;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// A point in time from a validated RFC 3339 text, comparable across offsets.
struct Instant {
  int64_t seconds = 0;
  int64_t nanos = 0;
  auto operator<=>(const Instant&) const = default;
};

int64_t DaysFromCivil(int64_t y, int64_t m, int64_t d) {
  // Howard Hinnant's days_from_civil.
  y -= m <= 2 ? 1 : 0;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// Strict RFC 3339 date-time: YYYY-MM-DDTHH:MM:SS(.frac)?(Z|+HH:MM|-HH:MM), upper-case T and Z,
// calendar-checked (leap years; second 60 allowed for leap seconds).
std::optional<Instant> ParseRfc3339(std::string_view text) {
  size_t pos = 0;
  auto number = [&](size_t digits, int64_t* out) {
    if (pos + digits > text.size()) return false;
    int64_t value = 0;
    for (size_t i = 0; i < digits; ++i) {
      const char c = text[pos + i];
      if (!IsDigit(c)) return false;
      value = value * 10 + (c - '0');
    }
    pos += digits;
    *out = value;
    return true;
  };
  auto literal = [&](char c) {
    if (pos >= text.size() || text[pos] != c) return false;
    ++pos;
    return true;
  };
  int64_t year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (!number(4, &year) || !literal('-') || !number(2, &month) || !literal('-') ||
      !number(2, &day) || !literal('T') || !number(2, &hour) || !literal(':') ||
      !number(2, &minute) || !literal(':') || !number(2, &second)) {
    return std::nullopt;
  }
  static constexpr std::array<int64_t, 12> kDays = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  if (month < 1 || month > 12 || day < 1) return std::nullopt;
  if (day > kDays[static_cast<size_t>(month - 1)] + (month == 2 && leap ? 1 : 0)) {
    return std::nullopt;
  }
  if (hour > 23 || minute > 59 || second > 60) return std::nullopt;
  int64_t nanos = 0;
  if (pos < text.size() && text[pos] == '.') {
    ++pos;
    const size_t begin = pos;
    while (pos < text.size() && IsDigit(text[pos])) {
      if (pos - begin < 9) nanos = nanos * 10 + (text[pos] - '0');
      ++pos;
    }
    if (pos == begin) return std::nullopt;
    for (size_t i = pos - begin; i < 9; ++i) nanos *= 10;
  }
  int64_t offset_seconds = 0;
  if (literal('Z')) {
    // UTC.
  } else if (pos < text.size() && (text[pos] == '+' || text[pos] == '-')) {
    const int64_t sign = text[pos] == '-' ? -1 : 1;
    ++pos;
    int64_t offset_hours = 0, offset_minutes = 0;
    if (!number(2, &offset_hours) || !literal(':') || !number(2, &offset_minutes)) {
      return std::nullopt;
    }
    if (offset_hours > 23 || offset_minutes > 59) return std::nullopt;
    offset_seconds = sign * (offset_hours * 3600 + offset_minutes * 60);
  } else {
    return std::nullopt;
  }
  if (pos != text.size()) return std::nullopt;
  const int64_t seconds =
      DaysFromCivil(year, month, day) * 86400 + hour * 3600 + minute * 60 + second - offset_seconds;
  return Instant{seconds, nanos};
}

bool IsUuid(std::string_view text) {
  if (text.size() != 36) return false;
  for (size_t i = 0; i < text.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? text[i] != '-' : !IsHex(text[i])) return false;
  }
  return true;
}

bool IsSha(std::string_view text) {
  if (text.size() != 40) return false;
  for (char c : text) {
    if (!IsHex(c)) return false;
  }
  return true;
}

constexpr size_t kMaxNameLength = 200;

bool IsName(std::string_view text) {
  if (text.empty() || text.size() > kMaxNameLength) return false;
  for (char c : text) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || IsDigit(c) || c == '.' ||
                    c == '_' || c == '/' || c == '-';
    if (!ok) return false;
  }
  return true;
}

bool IsTimeUnit(std::string_view unit) {
  return unit == "ns" || unit == "us" || unit == "ms" || unit == "s";
}

enum class Need { kOptional, kRequired };

// The typed walk over a DOM whose depth, strings and keys CheckingSax has already vetted. An
// optional member that is absent or null reads as empty.
class Decoder {
 public:
  explicit Decoder(const DecodeLimits& limits) : limits_(limits) {}

  Result<RunUpload> Decode(const json& root) {
    RunUpload run;
    if (!root.is_object()) {
      return InvalidArgument(
          "the body must be a JSON object, got " + std::string(JsonTypeName(root)), "");
    }
    PERFGATE_WIRE_TRY(
        OnlyKeys(root, "",
                 {"id", "project", "branch", "commit", "merge_base", "target_branch", "ancestry",
                  "testbed", "ci", "started_at", "finished_at", "results"}));
    PERFGATE_WIRE_TRY(ReadString(root, "id", "", Need::kRequired, &run.id));
    if (!IsUuid(run.id)) {
      return InvalidArgument("not a canonical UUID (8-4-4-4-12 hex digits)", "id");
    }
    run.id = ToLower(run.id);
    PERFGATE_WIRE_TRY(ReadName(root, "project", "", Need::kRequired, &run.project));
    if (run.project.find('/') != std::string::npos) {
      // A project name is one URL path segment (/api/v1/projects/{project}/...).
      return InvalidArgument("must not contain '/' (project names are URL path segments)",
                             "project");
    }
    PERFGATE_WIRE_TRY(ReadName(root, "branch", "", Need::kOptional, &run.branch));
    PERFGATE_WIRE_TRY(ReadCommit(root, &run.commit));
    std::string merge_base;
    PERFGATE_WIRE_TRY(ReadSha(root, "merge_base", "", Need::kOptional, &merge_base));
    if (!merge_base.empty()) run.merge_base = merge_base;
    PERFGATE_WIRE_TRY(ReadName(root, "target_branch", "", Need::kOptional, &run.target_branch));
    PERFGATE_WIRE_TRY(ReadShaList(root, "ancestry", "", &run.ancestry));
    PERFGATE_WIRE_TRY(ReadTestbed(root, &run.testbed));
    PERFGATE_WIRE_TRY(ReadCi(root, &run.ci));
    std::optional<Instant> started;
    std::optional<Instant> finished;
    PERFGATE_WIRE_TRY(ReadTime(root, "started_at", "", &run.started_at, &started));
    PERFGATE_WIRE_TRY(ReadTime(root, "finished_at", "", &run.finished_at, &finished));
    if (started && finished && *finished < *started) {
      return InvalidArgument("finished_at is before started_at (" + run.started_at + ")",
                             "finished_at");
    }
    PERFGATE_WIRE_TRY(ReadResults(root, &run.results));
    return run;
  }

 private:
  // nullptr when absent or null.
  static const json* Member(const json& object, std::string_view key) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) return nullptr;
    return &*it;
  }

  static Status Missing(const std::string& field) {
    return InvalidArgument("missing required field", field);
  }

  static Status OnlyKeys(const json& object, const std::string& path,
                         std::initializer_list<std::string_view> allowed) {
    for (const auto& [key, value] : object.items()) {
      bool known = false;
      for (std::string_view name : allowed) known = known || key == name;
      if (!known) return InvalidArgument("unknown field \"" + key + "\"", Join(path, key));
    }
    return {};
  }

  static Status ReadString(const json& object, std::string_view key, const std::string& path,
                           Need need, std::string* out) {
    const std::string field = Join(path, key);
    const json* value = Member(object, key);
    if (value == nullptr) return need == Need::kRequired ? Missing(field) : Status{};
    if (!value->is_string()) return WrongType(field, "a string", *value);
    *out = value->get<std::string>();
    if (need == Need::kRequired && out->empty()) return InvalidArgument("must not be empty", field);
    return {};
  }

  static Status ReadName(const json& object, std::string_view key, const std::string& path,
                         Need need, std::string* out) {
    PERFGATE_WIRE_TRY(ReadString(object, key, path, need, out));
    if (Member(object, key) != nullptr && !IsName(*out)) {
      return InvalidArgument(
          "must be 1.." + std::to_string(kMaxNameLength) + " characters from [A-Za-z0-9._/-]",
          Join(path, key));
    }
    return {};
  }

  static Status ShaValue(const json& value, const std::string& field, std::string* out) {
    if (!value.is_string()) return WrongType(field, "a string", value);
    const std::string& text = value.get_ref<const std::string&>();
    if (!IsSha(text)) return InvalidArgument("not a commit sha (40 hex digits)", field);
    *out = ToLower(text);
    return {};
  }

  static Status ReadSha(const json& object, std::string_view key, const std::string& path,
                        Need need, std::string* out) {
    const std::string field = Join(path, key);
    const json* value = Member(object, key);
    if (value == nullptr) return need == Need::kRequired ? Missing(field) : Status{};
    return ShaValue(*value, field, out);
  }

  Status ReadShaList(const json& object, std::string_view key, const std::string& path,
                     std::vector<std::string>* out) const {
    const std::string field = Join(path, key);
    const json* value = Member(object, key);
    if (value == nullptr) return {};
    if (!value->is_array()) return WrongType(field, "an array", *value);
    if (value->size() > limits_.max_values) {
      return InvalidArgument("more than " + std::to_string(limits_.max_values) + " entries", field);
    }
    out->resize(value->size());
    for (size_t i = 0; i < value->size(); ++i) {
      PERFGATE_WIRE_TRY(ShaValue((*value)[i], Index(field, i), &(*out)[i]));
    }
    return {};
  }

  static Status ReadTime(const json& object, std::string_view key, const std::string& path,
                         std::string* out, std::optional<Instant>* instant) {
    PERFGATE_WIRE_TRY(ReadString(object, key, path, Need::kOptional, out));
    if (Member(object, key) == nullptr) return {};
    *instant = ParseRfc3339(*out);
    if (!*instant) {
      return InvalidArgument("not an RFC 3339 timestamp (YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM))",
                             Join(path, key));
    }
    return {};
  }

  static Status ReadObject(const json& object, std::string_view key, const std::string& path,
                           Need need, const json** out) {
    const std::string field = Join(path, key);
    *out = Member(object, key);
    if (*out == nullptr) return need == Need::kRequired ? Missing(field) : Status{};
    if (!(*out)->is_object()) return WrongType(field, "an object", **out);
    return {};
  }

  Status ReadCommit(const json& root, Commit* commit) const {
    const json* object = nullptr;
    PERFGATE_WIRE_TRY(ReadObject(root, "commit", "", Need::kRequired, &object));
    const std::string path = "commit";
    PERFGATE_WIRE_TRY(OnlyKeys(*object, path, {"sha", "parents", "time", "subject", "author"}));
    PERFGATE_WIRE_TRY(ReadSha(*object, "sha", path, Need::kRequired, &commit->sha));
    PERFGATE_WIRE_TRY(ReadShaList(*object, "parents", path, &commit->parents));
    std::optional<Instant> ignored;
    PERFGATE_WIRE_TRY(ReadTime(*object, "time", path, &commit->time, &ignored));
    PERFGATE_WIRE_TRY(ReadString(*object, "subject", path, Need::kOptional, &commit->subject));
    PERFGATE_WIRE_TRY(ReadString(*object, "author", path, Need::kOptional, &commit->author));
    return {};
  }

  static Status ReadTestbed(const json& root, Testbed* testbed) {
    const json* object = nullptr;
    PERFGATE_WIRE_TRY(ReadObject(root, "testbed", "", Need::kRequired, &object));
    const std::string path = "testbed";
    PERFGATE_WIRE_TRY(OnlyKeys(*object, path, {"name", "fingerprint"}));
    PERFGATE_WIRE_TRY(ReadName(*object, "name", path, Need::kRequired, &testbed->name));
    const json* fingerprint = nullptr;
    PERFGATE_WIRE_TRY(ReadObject(*object, "fingerprint", path, Need::kOptional, &fingerprint));
    testbed->fingerprint_json = fingerprint != nullptr ? fingerprint->dump() : "{}";
    return {};
  }

  static Status ReadCi(const json& root, CiInfo* ci) {
    const json* object = nullptr;
    PERFGATE_WIRE_TRY(ReadObject(root, "ci", "", Need::kOptional, &object));
    if (object == nullptr) return {};
    const std::string path = "ci";
    PERFGATE_WIRE_TRY(ReadString(*object, "provider", path, Need::kOptional, &ci->provider));
    PERFGATE_WIRE_TRY(ReadString(*object, "job_url", path, Need::kOptional, &ci->job_url));
    if (const json* pr = Member(*object, "pr"); pr != nullptr) {
      if (!pr->is_number_integer()) return WrongType("ci.pr", "an integer", *pr);
      // nlohmann reads every non-negative integer as unsigned.
      const bool positive =
          pr->is_number_unsigned()
              ? pr->get<uint64_t>() >= 1 && pr->get<uint64_t>() <= static_cast<uint64_t>(INT64_MAX)
              : pr->get<int64_t>() >= 1;
      if (!positive) {
        return InvalidArgument("must be a positive pull/merge request number", "ci.pr");
      }
      ci->pr = pr->get<int64_t>();
    }
    json extra = json::object();
    for (const auto& [key, value] : object->items()) {
      if (key != "provider" && key != "job_url" && key != "pr") extra[key] = value;
    }
    ci->extra_json = extra.dump();
    return {};
  }

  Status ReadResults(const json& root, std::vector<ResultSeries>* results) const {
    const json* array = Member(root, "results");
    if (array == nullptr) return Missing("results");
    if (!array->is_array()) return WrongType("results", "an array", *array);
    if (array->empty()) return InvalidArgument("must hold at least one series", "results");
    if (array->size() > limits_.max_results) {
      return InvalidArgument("more than " + std::to_string(limits_.max_results) + " series",
                             "results");
    }
    results->resize(array->size());
    std::map<std::tuple<std::string, std::string, std::string>, size_t> seen;
    for (size_t i = 0; i < array->size(); ++i) {
      const std::string path = Index("results", i);
      PERFGATE_WIRE_TRY(ReadSeries((*array)[i], path, &(*results)[i]));
      const ResultSeries& series = (*results)[i];
      auto [it, inserted] =
          seen.emplace(std::tuple(series.suite, series.benchmark, series.metric), i);
      if (!inserted) {
        return InvalidArgument("duplicate series (suite, benchmark, metric): same as results[" +
                                   std::to_string(it->second) + "]",
                               path);
      }
    }
    return {};
  }

  Status ReadSeries(const json& object, const std::string& path, ResultSeries* series) const {
    if (!object.is_object()) return WrongType(path, "an object", object);
    PERFGATE_WIRE_TRY(
        OnlyKeys(object, path, {"suite", "benchmark", "metric", "unit", "direction", "values"}));
    PERFGATE_WIRE_TRY(ReadString(object, "suite", path, Need::kRequired, &series->suite));
    PERFGATE_WIRE_TRY(ReadString(object, "benchmark", path, Need::kRequired, &series->benchmark));
    PERFGATE_WIRE_TRY(ReadString(object, "metric", path, Need::kRequired, &series->metric));
    PERFGATE_WIRE_TRY(ReadString(object, "unit", path, Need::kOptional, &series->unit));
    std::string direction;
    PERFGATE_WIRE_TRY(ReadString(object, "direction", path, Need::kRequired, &direction));
    if (direction == "lower") {
      series->direction = Direction::kLowerIsBetter;
    } else if (direction == "higher") {
      series->direction = Direction::kHigherIsBetter;
    } else {
      return InvalidArgument("unknown direction \"" + direction + "\" (expected lower or higher)",
                             Join(path, "direction"));
    }
    const std::string field = Join(path, "values");
    const json* values = Member(object, "values");
    if (values == nullptr) return Missing(field);
    if (!values->is_array()) return WrongType(field, "an array", *values);
    if (values->empty()) return InvalidArgument("must hold at least one value", field);
    if (values->size() > limits_.max_values) {
      return InvalidArgument("more than " + std::to_string(limits_.max_values) + " values", field);
    }
    const bool time = IsTimeUnit(series->unit);
    series->values.resize(values->size());
    for (size_t j = 0; j < values->size(); ++j) {
      const json& value = (*values)[j];
      if (!value.is_number()) return WrongType(Index(field, j), "a number", value);
      const double number = value.get<double>();
      if (!std::isfinite(number)) return InvalidArgument("value is not finite", Index(field, j));
      if (time && number < 0) {
        return InvalidArgument("negative time (unit " + series->unit + ")", Index(field, j));
      }
      series->values[j] = number;
    }
    return {};
  }

  const DecodeLimits& limits_;
};

#undef PERFGATE_WIRE_TRY

// The object that a *_json field holds, or an empty object when it holds anything else.
json ParseObject(const std::string& text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return value.is_object() ? value : json::object();
}

}  // namespace

size_t RunUpload::SampleCount() const {
  size_t count = 0;
  for (const ResultSeries& series : results) count += series.values.size();
  return count;
}

Result<RunUpload> DecodeRunUpload(std::string_view json_text, const DecodeLimits& limits) {
  try {
    json root;
    CheckingSax sax(root, json_text, limits);
    const bool ok = json::sax_parse(json_text.begin(), json_text.end(), &sax,
                                    json::input_format_t::json, /*strict=*/true);
    if (!ok || sax.error()) {
      if (sax.error()) return tl::unexpected(*sax.error());
      return InvalidArgument("malformed JSON", "");
    }
    return Decoder(limits).Decode(root);
  } catch (const std::exception& e) {
    // nlohmann only throws here on internal inconsistencies; never let one escape the adapter.
    return InvalidArgument(std::string("malformed JSON: ") + e.what(), "");
  }
}

std::string EncodeRunUpload(const RunUpload& run) {
  // Empty optional strings are left out rather than written as "": the decoder rejects an empty
  // branch or timestamp, and absence reads back as empty, so Decode(Encode(x)) == x.
  json out = json::object();
  out["id"] = run.id;
  out["project"] = run.project;
  if (!run.branch.empty()) out["branch"] = run.branch;
  json commit = {{"sha", run.commit.sha},
                 {"parents", run.commit.parents},
                 {"subject", run.commit.subject},
                 {"author", run.commit.author}};
  if (!run.commit.time.empty()) commit["time"] = run.commit.time;
  out["commit"] = std::move(commit);
  if (run.merge_base) out["merge_base"] = *run.merge_base;
  if (!run.target_branch.empty()) out["target_branch"] = run.target_branch;
  out["ancestry"] = run.ancestry;
  out["testbed"] = {{"name", run.testbed.name},
                    {"fingerprint", ParseObject(run.testbed.fingerprint_json)}};
  json ci = ParseObject(run.ci.extra_json);
  ci["provider"] = run.ci.provider;
  ci["job_url"] = run.ci.job_url;
  if (run.ci.pr) {
    ci["pr"] = *run.ci.pr;
  } else {
    ci.erase("pr");
  }
  out["ci"] = std::move(ci);
  if (!run.started_at.empty()) out["started_at"] = run.started_at;
  if (!run.finished_at.empty()) out["finished_at"] = run.finished_at;
  json results = json::array();
  for (const ResultSeries& series : run.results) {
    results.push_back({{"suite", series.suite},
                       {"benchmark", series.benchmark},
                       {"metric", series.metric},
                       {"unit", series.unit},
                       {"direction", std::string(DirectionName(series.direction))},
                       {"values", series.values}});
  }
  out["results"] = std::move(results);
  return out.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

}  // namespace perfgate::wire
