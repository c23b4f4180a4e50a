// SPDX-License-Identifier: Apache-2.0
#include "wire/json_check.h"

#include <algorithm>
#include <exception>
#include <memory>
#include <optional>
#include <set>
#include <utility>
#include <vector>

#include "wire/json_type_name.h"

namespace perfwarden::wire {
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
// one silently). The elements of streamed arrays go to DOMs of their own (a stack of builders, the
// document's at the bottom), each handed to its sink when complete.
class CheckingSax {
 public:
  CheckingSax(json& root, std::string_view text, const JsonLimits& limits,
              std::span<const StreamedArray> streamed)
      : text_(text), limits_(limits), streamed_(streamed) {
    builders_.push_back(std::make_unique<Builder>(root, /*depth=*/0, nullptr));
  }

  bool null() { return BeginValue(json::value_t::null) && dom().null() && EndValue(); }
  bool boolean(bool value) {
    return BeginValue(json::value_t::boolean) && dom().boolean(value) && EndValue();
  }
  bool number_integer(json::number_integer_t value) {
    return BeginValue(json::value_t::number_integer) && dom().number_integer(value) && EndValue();
  }
  bool number_unsigned(json::number_unsigned_t value) {
    return BeginValue(json::value_t::number_unsigned) && dom().number_unsigned(value) && EndValue();
  }
  bool number_float(json::number_float_t value, const json::string_t& text) {
    return BeginValue(json::value_t::number_float) && dom().number_float(value, text) && EndValue();
  }
  bool string(json::string_t& value) {
    return BeginValue(json::value_t::string) && CheckString(value, Path(), "string") &&
           dom().string(value) && EndValue();
  }
  bool binary(json::binary_t& value) {
    return BeginValue(json::value_t::binary) && dom().binary(value) && EndValue();
  }
  bool start_object(std::size_t size) {
    return BeginValue(json::value_t::object) && Enter(/*object=*/true) && dom().start_object(size);
  }
  bool key(json::string_t& value) {
    // The object's own path: the key is what is wrong, and the previous key is not to blame.
    if (!CheckString(value, Path(frames_.size() - 1), "key")) return false;
    Frame& frame = frames_.back();
    frame.key = value;
    if (!frame.keys.insert(value).second) return Fail(Path(), "duplicate key");
    return dom().key(value);
  }
  bool end_object() {
    frames_.pop_back();
    return dom().end_object() && EndValue();
  }
  bool start_array(std::size_t size) {
    return BeginValue(json::value_t::array) && Enter(/*object=*/false) && dom().start_array(size);
  }
  bool end_array() {
    frames_.pop_back();
    return dom().end_array() && EndValue();
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

  // One DOM being built: the document's, or a streamed element's (which owns its value).
  struct Builder {
    Builder(json& root, size_t depth_, const StreamedArray* stream_)
        : dom(root, /*allow_exceptions_=*/false), depth(depth_), stream(stream_) {}
    std::unique_ptr<json> element;  // set for a streamed element: `dom` builds into it
    nlohmann::detail::json_sax_dom_parser<json> dom;
    size_t depth;                 // frames open when its value began
    const StreamedArray* stream;  // nullptr: the document
    size_t values = 0;            // values begun in it, streamed elements not counted
    std::string path;             // a streamed element's path
    std::vector<size_t> indices;
  };

  nlohmann::detail::json_sax_dom_parser<json>& dom() { return builders_.back()->dom; }

  bool Fail(std::string field, std::string message) {
    if (!error_) error_ = Error{ErrorCode::kInvalidArgument, std::move(message), std::move(field)};
    return false;
  }

  bool BeginValue(json::value_t type) {
    if (frames_.empty() && limits_.object_root && type != json::value_t::object) {
      return Fail("",
                  "the body must be a JSON object, got " + std::string(JsonTypeName(json(type))));
    }
    if (!frames_.empty() && !frames_.back().object) ++frames_.back().elements;
    if (const StreamedArray* stream = StreamAt(); stream != nullptr) {
      auto element = std::make_unique<json>();
      auto builder = std::make_unique<Builder>(*element, frames_.size(), stream);
      builder->element = std::move(element);
      builder->path = Path();
      for (const Frame& frame : frames_) {
        if (!frame.object) builder->indices.push_back(frame.elements - 1);
      }
      builders_.push_back(std::move(builder));
    }
    Builder& builder = *builders_.back();
    if (builder.stream == nullptr) {
      if (++builder.values > limits_.max_elements) {
        return Fail(Path(), "JSON body has more than " + std::to_string(limits_.max_elements) +
                                " elements (values)");
      }
    } else if (++builder.values > builder.stream->max_element_values) {
      return Fail(Path(), "an element of " + Pattern(builder.stream->path) + " holds more than " +
                              std::to_string(builder.stream->max_element_values) + " JSON values");
    }
    return true;
  }

  // After a scalar or a container's end: a streamed element that is complete goes to its sink.
  bool EndValue() {
    Builder& builder = *builders_.back();
    if (builder.stream == nullptr || frames_.size() != builder.depth) return true;
    std::unique_ptr<Builder> done = std::move(builders_.back());
    builders_.pop_back();
    Result<void> taken = done->stream->sink(std::move(*done->element), done->path, done->indices);
    if (!taken) {
      if (!error_) error_ = std::move(taken.error());
      return false;
    }
    return true;
  }

  // The streamed array whose element the value about to begin is, or nullptr.
  const StreamedArray* StreamAt() const {
    if (frames_.empty() || frames_.back().object) return nullptr;
    for (const StreamedArray& stream : streamed_) {
      if (stream.path.size() + 1 != frames_.size()) continue;
      bool match = true;
      for (size_t i = 0; i < stream.path.size() && match; ++i) {
        const Frame& frame = frames_[i];
        match = stream.path[i] == "*" ? !frame.object : frame.object && frame.key == stream.path[i];
      }
      if (match) return &stream;
    }
    return nullptr;
  }

  // {"series", "*", "blocks"} -> "series[*].blocks".
  static std::string Pattern(const std::vector<std::string>& path) {
    std::string out;
    for (const std::string& step : path) {
      out += step == "*" ? "[*]" : (out.empty() ? "" : ".") + step;
    }
    return out;
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

  std::string_view text_;
  const JsonLimits& limits_;
  std::span<const StreamedArray> streamed_;
  std::vector<std::unique_ptr<Builder>> builders_;  // the document's first
  std::vector<Frame> frames_;
  std::optional<Error> error_;
};

}  // namespace

std::string FieldPath(const std::string& path, std::string_view key) {
  return path.empty() ? std::string(key) : path + "." + std::string(key);
}

std::string ElementPath(const std::string& path, size_t index) {
  return path + "[" + std::to_string(index) + "]";
}

Result<json> ParseCheckedJson(std::string_view text, const JsonLimits& limits,
                              std::span<const StreamedArray> streamed) {
  try {
    json root;
    CheckingSax sax(root, text, limits, streamed);
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

}  // namespace perfwarden::wire
