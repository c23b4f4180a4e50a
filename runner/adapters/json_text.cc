// SPDX-License-Identifier: Apache-2.0
#include "runner/adapters/json_text.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <exception>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace perfwarden::adapters {
namespace {

using nlohmann::json;

// nlohmann's dump() and our own serializer recurse; its parser does not. Real benchmark output
// nests three levels deep, so a low limit costs nothing and keeps hostile input from
// overflowing the stack.
constexpr size_t kMaxDepth = 256;

// A non-finite token and the JSON string that stands in for it while nlohmann parses the text.
// The stand-in starts with U+0000, which no benchmark name, label or message can contain (they
// are C strings), so it cannot collide with a real string value.
struct NonFiniteToken {
  std::string_view token;
  std::string_view stand_in;  // JSON text of the stand-in string
  std::string_view decoded;   // the stand-in after JSON decoding
  double value;
};

const std::array<NonFiniteToken, 4>& NonFiniteTokens() {
  using std::string_view_literals::operator""sv;
  static const std::array<NonFiniteToken, 4> tokens = {{
      // Longest first: "-Infinity" must not be read as "-" followed by something else.
      {"-Infinity", R"("\u0000-Infinity")", "\0-Infinity"sv,
       -std::numeric_limits<double>::infinity()},
      {"Infinity", R"("\u0000Infinity")", "\0Infinity"sv, std::numeric_limits<double>::infinity()},
      {"-NaN", R"("\u0000-NaN")", "\0-NaN"sv, -std::numeric_limits<double>::quiet_NaN()},
      {"NaN", R"("\u0000NaN")", "\0NaN"sv, std::numeric_limits<double>::quiet_NaN()},
  }};
  return tokens;
}

bool IsWordChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

// One replaced token: where it lies in the rewritten text and in the original.
struct Shift {
  size_t rewritten_begin;
  size_t rewritten_end;
  size_t original_begin;
  size_t original_end;
};

struct Rewritten {
  std::string text;
  std::vector<Shift> shifts;  // ascending
  // Set when the nesting is too deep: offset in the original text.
  std::optional<size_t> too_deep_at;

  size_t OriginalOffset(size_t rewritten) const {
    auto it = std::upper_bound(
        shifts.begin(), shifts.end(), rewritten,
        [](size_t offset, const Shift& shift) { return offset < shift.rewritten_begin; });
    if (it == shifts.begin()) return rewritten;
    const Shift& shift = *std::prev(it);
    if (rewritten < shift.rewritten_end) return shift.original_begin;
    return shift.original_end + (rewritten - shift.rewritten_end);
  }
};

// Replaces the non-finite tokens outside string literals by stand-in strings (only where a value
// may stand: a token in an object key's place is left for the parser to reject at its true
// position), and checks the nesting depth.
Rewritten Rewrite(std::string_view text) {
  Rewritten out;
  out.text.reserve(text.size() + 64);
  std::vector<char> containers;  // '{' or '['
  char previous = 0;             // last significant character outside strings
  bool in_string = false;
  bool escaped = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      out.text.push_back(c);
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        previous = '"';
      }
      continue;
    }
    if (c == 'N' || c == 'I' || c == '-') {
      const bool key_place =
          previous == '{' || (previous == ',' && !containers.empty() && containers.back() == '{');
      const bool word_before = i > 0 && IsWordChar(text[i - 1]);
      const NonFiniteToken* found = nullptr;
      if (!key_place && !word_before) {
        for (const NonFiniteToken& token : NonFiniteTokens()) {
          if (text.substr(i, token.token.size()) == token.token &&
              (i + token.token.size() == text.size() ||
               !IsWordChar(text[i + token.token.size()]))) {
            found = &token;
            break;
          }
        }
      }
      if (found != nullptr) {
        const size_t begin = out.text.size();
        out.text.append(found->stand_in);
        out.shifts.push_back({begin, out.text.size(), i, i + found->token.size()});
        i += found->token.size() - 1;
        previous = 'N';
        continue;
      }
    }
    out.text.push_back(c);
    switch (c) {
      case '"':
        in_string = true;
        break;
      case '{':
      case '[':
        containers.push_back(c);
        if (containers.size() > kMaxDepth && !out.too_deep_at) out.too_deep_at = i;
        break;
      case '}':
      case ']':
        if (!containers.empty()) containers.pop_back();
        break;
      default:
        break;
    }
    if (c != ' ' && c != '\t' && c != '\n' && c != '\r') previous = c;
  }
  return out;
}

// Builds the DOM with nlohmann's own builder, turning stand-in strings back into numbers and
// keeping the position of the first error (nlohmann's exceptions for number overflow carry none).
class LenientSax {
 public:
  explicit LenientSax(json& root) : dom_(root, /*allow_exceptions_=*/false) {}

  bool null() { return dom_.null(); }
  bool boolean(bool value) { return dom_.boolean(value); }
  bool number_integer(json::number_integer_t value) { return dom_.number_integer(value); }
  bool number_unsigned(json::number_unsigned_t value) { return dom_.number_unsigned(value); }
  bool number_float(json::number_float_t value, const json::string_t& text) {
    return dom_.number_float(value, text);
  }
  bool string(json::string_t& value) {
    if (!value.empty() && value[0] == '\0') {
      for (const NonFiniteToken& token : NonFiniteTokens()) {
        if (value == token.decoded) {
          json::string_t text(token.token);
          return dom_.number_float(token.value, text);
        }
      }
    }
    return dom_.string(value);
  }
  bool binary(json::binary_t& value) { return dom_.binary(value); }
  bool start_object(std::size_t size) { return dom_.start_object(size); }
  bool key(json::string_t& value) { return dom_.key(value); }
  bool end_object() { return dom_.end_object(); }
  bool start_array(std::size_t size) { return dom_.start_array(size); }
  bool end_array() { return dom_.end_array(); }

  template <class Exception>
  bool parse_error(std::size_t position, const std::string& /*last_token*/, const Exception& ex) {
    if (!failed_) {
      failed_ = true;
      position_ = position;
      what_ = ex.what();
    }
    return false;
  }

  bool failed() const { return failed_; }
  size_t position() const { return position_; }
  const std::string& what() const { return what_; }

 private:
  nlohmann::detail::json_sax_dom_parser<json> dom_;
  bool failed_ = false;
  size_t position_ = 0;
  std::string what_;
};

// "[json.exception.parse_error.101] parse error at line 1, column 9: syntax error while parsing
// value - unexpected end of input; expected '[', '{', or a literal" -> the part after the
// position, which nlohmann computed on the rewritten text.
std::string Explanation(std::string what) {
  if (!what.empty() && what[0] == '[') {
    const size_t end = what.find("] ");
    if (end != std::string::npos) what.erase(0, end + 2);
  }
  if (what.rfind("parse error", 0) == 0) {
    const size_t colon = what.find(": ");
    if (colon != std::string::npos) what.erase(0, colon + 2);
  }
  // A stand-in quoted back in "last read: '...'" shows as <U+0000>; the user wrote no such thing.
  for (size_t at = what.find("<U+0000>"); at != std::string::npos; at = what.find("<U+0000>")) {
    what.erase(at, 8);
  }
  return what;
}

std::string PositionedError(std::string_view text, std::string_view source, size_t offset,
                            std::string_view problem) {
  const TextPosition where = PositionOf(text, offset);
  return std::string(source) + ":" + std::to_string(where.line) + ":" +
         std::to_string(where.column) + ": invalid JSON: " + std::string(problem);
}

void DumpTo(const json& value, std::string& out) {
  switch (value.type()) {
    case json::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out.push_back(',');
        first = false;
        out += json(key).dump(-1, ' ', false, json::error_handler_t::replace);
        out.push_back(':');
        DumpTo(item, out);
      }
      out.push_back('}');
      return;
    }
    case json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const json& item : value) {
        if (!first) out.push_back(',');
        first = false;
        DumpTo(item, out);
      }
      out.push_back(']');
      return;
    }
    case json::value_t::number_float: {
      const double number = value.get<double>();
      if (std::isnan(number)) {
        out += std::signbit(number) ? "-NaN" : "NaN";
        return;
      }
      if (std::isinf(number)) {
        out += number < 0 ? "-Infinity" : "Infinity";
        return;
      }
      break;
    }
    default:
      break;
  }
  out += value.dump(-1, ' ', false, json::error_handler_t::replace);
}

}  // namespace

TextPosition PositionOf(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  TextPosition where;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++where.line;
      line_start = i + 1;
    }
  }
  where.column = offset - line_start + 1;
  return where;
}

Result<nlohmann::json> ParseJsonText(std::string_view text, std::string_view source) {
  try {
    Rewritten rewritten = Rewrite(text);
    if (rewritten.too_deep_at) {
      return InvalidArgument(
          PositionedError(text, source, *rewritten.too_deep_at,
                          "nesting deeper than " + std::to_string(kMaxDepth) + " levels"));
    }
    json root;
    LenientSax sax(root);
    const bool ok = json::sax_parse(rewritten.text, &sax);
    if (!ok || sax.failed()) {
      // nlohmann counts the characters read; the offending one is the last of them.
      const size_t rewritten_offset = sax.position() > 0 ? sax.position() - 1 : 0;
      const size_t offset = rewritten.OriginalOffset(rewritten_offset);
      std::string problem = sax.failed() ? Explanation(sax.what()) : "cannot be parsed";
      // A cut-off file (a benchmark killed mid-write) is the usual cause; say so.
      if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) {
        problem += " (the input is empty)";
      } else if (offset >= text.size()) {
        problem += " (the input ends there: truncated?)";
      }
      return InvalidArgument(PositionedError(text, source, offset, problem));
    }
    return root;
  } catch (const std::exception& e) {
    return MakeError(ErrorCode::kInternal,
                     std::string(source) + ": cannot parse JSON: " + e.what());
  }
}

std::string DumpJsonText(const nlohmann::json& value) {
  std::string out;
  try {
    DumpTo(value, out);
  } catch (const std::exception&) {
    // Only allocation can fail here (strings are valid UTF-8 or replaced); a partial text is
    // better than an exception escaping an adapter.
  }
  return out;
}

}  // namespace perfwarden::adapters
