// SPDX-License-Identifier: Apache-2.0
#include "runner/report/text_format.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace perfwarden::report::text {

using nlohmann::json;

// ---- defensive access: the server's JSON may omit or null any optional field ----

const json* Get(const json& j, const char* key) {
  if (!j.is_object()) return nullptr;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return nullptr;
  return &*it;
}

const json& Obj(const json& j, const char* key) {
  static const json kNull;
  const json* v = Get(j, key);
  return v != nullptr && v->is_object() ? *v : kNull;
}

std::string Str(const json& j, const char* key) {
  const json* v = Get(j, key);
  if (v == nullptr) return "";
  if (v->is_string()) return v->get<std::string>();
  if (v->is_number() || v->is_boolean()) return v->dump();
  return "";
}

std::optional<double> Num(const json& j, const char* key) {
  const json* v = Get(j, key);
  if (v == nullptr || !v->is_number()) return std::nullopt;
  const double x = v->get<double>();
  if (!std::isfinite(x)) return std::nullopt;
  return x;
}

// A JSON value as one short piece of text: strings as they are, anything else as JSON.
std::string AnyText(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_null()) return "-";
  return v.dump();
}

std::vector<std::string> Strings(const json& j, const char* key) {
  std::vector<std::string> out;
  const json* v = Get(j, key);
  if (v == nullptr || !v->is_array()) return out;
  for (const json& e : *v) out.push_back(AnyText(e));
  return out;
}

std::string Join(const std::vector<std::string>& parts, const std::string& separator) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) out += (i == 0 ? "" : separator) + parts[i];
  return out;
}

std::string OrDash(std::string text) { return text.empty() ? "-" : text; }

// ---- text hygiene ----

// A server string on one terminal line: control characters become '?', so that a name cannot
// rewrite the job log with escape sequences or break a table with a newline.
std::string Clean(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) c = '?';
  }
  return out;
}

// Markdown: the ASCII punctuation that can start markup inside a line (emphasis, code, links,
// HTML, entities, table cells; '#' for a list item's heading) is backslash-escaped, as
// CommonMark allows for any ASCII punctuation; newlines become spaces. Server text never
// starts a line, so '+', '-' and '>' stay as they are.
std::string Md(std::string_view text) {
  static constexpr std::string_view kSpecial = "\\`*_{}[]<#!|~&";
  std::string out;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      out += ' ';
    } else {
      if (kSpecial.find(c) != std::string_view::npos) out += '\\';
      out += c;
    }
  }
  return DefuseMd(out);
}

namespace {

// One code span holding `text` (no '|' in it): see MdCode.
std::string CodeSpan(std::string_view text) {
  if (text.empty()) return "";
  std::string body;
  size_t run = 0, longest = 0;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    body += u < 0x20 || u == 0x7f ? '?' : c;
    run = c == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
  }
  const std::string fence(longest + 1, '`');
  const auto edge = [](char c) { return c == '`' || c == ' '; };
  const std::string pad = edge(body.front()) || edge(body.back()) ? " " : "";
  return fence + pad + body + pad + fence;
}

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

// A pipe is never inside a span, so none needs the backslash that GFM allows there: a name
// ending in '\' would otherwise make it "\\|", which some parsers read as an escaped backslash
// and a cell boundary, letting the rest of the name out of its span.
std::string MdCode(std::string_view text) {
  std::string out;
  for (size_t start = 0;;) {
    const size_t pipe = text.find('|', start);
    out += CodeSpan(text.substr(start, pipe == std::string_view::npos ? pipe : pipe - start));
    if (pipe == std::string_view::npos) return out;
    out += "\\|";
    start = pipe + 1;
  }
}

std::string DefuseMd(std::string_view markdown) {
  static constexpr std::string_view kJoiner = "\u2060";
  std::string out;
  out.reserve(markdown.size());
  for (size_t i = 0; i < markdown.size(); ++i) {
    const char c = markdown[i];
    out += c;
    const std::string_view rest = markdown.substr(i + 1);
    const bool www = (c == 'w' || c == 'W') && i >= 2 && rest.starts_with('.') &&
                     (markdown[i - 1] | 0x20) == 'w' && (markdown[i - 2] | 0x20) == 'w';
    if (c == '@' || ((c == '#' || c == '!') && !rest.empty() && IsDigit(rest[0])) ||
        (c == ':' && rest.starts_with("//")) || www) {
      out += kJoiner;
    }
  }
  return out;
}

size_t DisplayWidth(std::string_view text) {
  size_t n = 0;
  for (char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

// Left-aligned columns two spaces apart, each line after `indent`; the last column is not
// padded, so lines carry no trailing blanks.
std::string Table(const std::vector<std::vector<std::string>>& rows, const std::string& indent) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], DisplayWidth(row[i]));
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line += std::string(widths[i] - DisplayWidth(row[i]) + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string MdRow(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const std::string& c : cells) out += " " + c + " |";
  return out + "\n";
}

// ---- numbers ----

std::string Percent(double fraction) {
  const double p = fraction * 100;
  char buffer[64];
  if (p == 0 || std::fabs(p) >= 0.05) {
    std::snprintf(buffer, sizeof buffer, "%+.1f%%", p);
  } else {
    std::snprintf(buffer, sizeof buffer, "%+.2g%%", p);
  }
  return buffer;
}

// "1e-6", "0.00034", "0.5": two significant digits, exponent without padding zeros.
std::string PValue(std::optional<double> p) {
  if (!p) return "-";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.2g", *p);
  std::string text = buffer;
  const size_t e = text.find('e');
  if (e == std::string::npos) return text;
  size_t digits = e + 1;
  if (digits < text.size() && (text[digits] == '-' || text[digits] == '+')) {
    if (text[digits] == '+')
      text.erase(digits, 1);
    else
      ++digits;
  }
  while (digits + 1 < text.size() && text[digits] == '0') text.erase(digits, 1);
  return text;
}

// Levels of any scale: nanoseconds (1021.5) and seconds (0.001234) both keep their digits.
std::string Level(std::optional<double> x) {
  if (!x) return "-";
  char buffer[64];
  const double magnitude = std::fabs(*x);
  if (magnitude >= 100 && magnitude < 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.1f", *x);
  } else {
    std::snprintf(buffer, sizeof buffer, "%.4g", *x);
  }
  return buffer;
}

std::string WithUnit(const std::string& value, const std::string& unit) {
  return unit.empty() || value == "-" ? value : value + " " + unit;
}

std::string ConfidencePercent(std::optional<double> confidence) {
  if (!confidence || *confidence <= 0 || *confidence >= 1) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%g%%", *confidence * 100);
  return buffer;
}

}  // namespace perfwarden::report::text
