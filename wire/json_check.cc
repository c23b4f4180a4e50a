#include "wire/json_check.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <set>
#include <utility>
#include <vector>

namespace perfgate::wire {
namespace {

using nlohmann::json;

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
// must hold before the DOM exists: the number of values (so a body of a million tiny values costs
// max_elements DOM nodes at most, not a million), depth (the parser itself is iterative, so
// stopping here means a 100,000-deep body costs 33 frames), string size and NUL characters
// (PostgreSQL text and jsonb cannot hold U+0000), and duplicate keys (nlohmann would keep the last
// one silently).
class CheckingSax {
 public:
  CheckingSax(json& root, std::string_view text, const JsonLimits& limits)
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
    if (++values_ > limits_.max_elements) {
      return Fail(Path(), "JSON body has more than " + std::to_string(limits_.max_elements) +
                              " elements (values)");
    }
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
        path = FieldPath(path, frame.key);
      } else if (frame.elements > 0) {
        path = ElementPath(path, frame.elements - 1);
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
  const JsonLimits& limits_;
  std::vector<Frame> frames_;
  size_t values_ = 0;  // values begun so far, the root included
  std::optional<Error> error_;
};

}  // namespace

std::string FieldPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string ElementPath(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

Result<json> ParseCheckedJson(std::string_view text, const JsonLimits& limits) {
  try {
    json root;
    CheckingSax sax(root, text, limits);
    const bool ok = json::sax_parse(text.begin(), text.end(), &sax, json::input_format_t::json,
                                    /*strict=*/true);
    if (!ok || sax.error()) {
      if (sax.error()) return tl::unexpected(*sax.error());
      return InvalidArgument("malformed JSON", "");
    }
    return root;
  } catch (const std::exception& e) {
    // nlohmann only throws here on internal inconsistencies; never let one escape the reader.
    return InvalidArgument(std::string("malformed JSON: ") + e.what(), "");
  }
}

}  // namespace perfgate::wire
