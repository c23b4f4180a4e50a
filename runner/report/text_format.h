// SPDX-License-Identifier: Apache-2.0
// Text for people from JSON that a server sent: tolerant access (any optional field may be
// missing, null or of another type), one-line hygiene for terminals and Markdown, aligned
// tables, and the number formats the CLI's reports share (changes, p-values, levels).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfwarden::report::text {

// The member `key` of an object, nullptr when `j` is not an object or the member is absent or
// null.
const nlohmann::json* Get(const nlohmann::json& j, const char* key);
// The member `key` when it is an object, else a null value.
const nlohmann::json& Obj(const nlohmann::json& j, const char* key);
// A string member as is, a number or boolean as JSON text, "" otherwise.
std::string Str(const nlohmann::json& j, const char* key);
// A finite number member, nullopt otherwise.
std::optional<double> Num(const nlohmann::json& j, const char* key);
// A value as one short piece of text: strings as they are, null as "-", anything else as JSON.
std::string AnyText(const nlohmann::json& v);
// The elements of an array member, each as AnyText; empty when it is not an array.
std::vector<std::string> Strings(const nlohmann::json& j, const char* key);
std::string Join(const std::vector<std::string>& parts, const std::string& separator);
std::string OrDash(std::string text);

// One terminal line: control characters become '?'.
std::string Clean(std::string_view text);
// Markdown inline text: markup punctuation backslash-escaped, newlines as spaces, and then
// DefuseMd's word joiners, so that server text can be neither markup nor a mention or a link.
std::string Md(std::string_view text);
// `text` shown as it is in Markdown code spans, where neither GitHub nor GitLab find mentions,
// references, links or HTML: the fence is a backtick run longer than any in the text, with a
// space inside it where the text starts or ends with a backtick or a space (CommonMark strips
// one from each side). Each '|' is written `\|` between two spans, since GFM splits table cells
// before it parses code spans: safe in a table cell and out of one. Control characters become
// '?'; "" stays "".
std::string MdCode(std::string_view text);
// Markdown text (already escaped, outside code spans) with an invisible U+2060 WORD JOINER where
// GitHub or GitLab would make a mention or an e-mail link (after every '@'), an issue or merge
// request reference (after '#' or '!' before a digit) or a bare link (between ':' and "//",
// between "www" and '.', any case). The text reads the same.
std::string DefuseMd(std::string_view markdown);
// Code points, for aligning UTF-8 text.
std::size_t DisplayWidth(std::string_view text);
// Left-aligned columns two spaces apart after `indent`, without trailing blanks.
std::string Table(const std::vector<std::vector<std::string>>& rows, const std::string& indent);
std::string MdRow(const std::vector<std::string>& cells);

// "+8.1%" (two significant digits below 0.05%).
std::string Percent(double fraction);
// "1e-6", "0.00034", "0.5"; "-" for none.
std::string PValue(std::optional<double> p);
// Nanoseconds (1021.5) and seconds (0.001234) both keep their digits; "-" for none.
std::string Level(std::optional<double> x);
// "1021.5 ns"; value alone without a unit or for "-".
std::string WithUnit(const std::string& value, const std::string& unit);
// "95%" for 0.95; "" outside (0, 1) or for none.
std::string ConfidencePercent(std::optional<double> confidence);

}  // namespace perfwarden::report::text
