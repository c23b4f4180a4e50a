#include "server/gate/results_writer.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

#include "wire/verdict_keys.h"

namespace perfgate::server::gate {
namespace {

namespace keys = wire::keys;

// nlohmann's dump sorts keys, and these objects are written in its order.
constexpr std::array kSideOrder = {keys::side::kCv, keys::side::kMedian, keys::side::kN};
static_assert(std::ranges::is_sorted(kSideOrder));
constexpr std::array kAttributionOrder = {keys::attribution::kHint, keys::attribution::kMoved,
                                          keys::attribution::kRoofline};
static_assert(std::ranges::is_sorted(kAttributionOrder));
constexpr std::array kMovedOrder = {keys::moved::kChange, keys::moved::kMetric,
                                    keys::moved::kVerdict};
static_assert(std::ranges::is_sorted(kMovedOrder));
constexpr std::array kRooflineOrder = {keys::roofline::kClass, keys::roofline::kIntensity,
                                       keys::roofline::kRidge};
static_assert(std::ranges::is_sorted(kRooflineOrder));

}  // namespace

void AppendJsonNumber(std::string& out, double value) {
  if (!std::isfinite(value)) {
    out += "null";
    return;
  }
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, ec == std::errc() ? end : buffer);
}

std::string JsonString(std::string_view value) { return nlohmann::json(value).dump(); }

void AppendJsonKey(std::string& out, std::string_view before, std::string_view key) {
  out += before;
  out += '"';
  out += key;
  out += "\":";
}

void ResultsWriter::Key(std::string_view key) {
  AppendJsonKey(out_, key_first_ ? "" : ",", key);
  key_first_ = false;
}

void ResultsWriter::String(std::string_view key, std::string_view value) {
  Key(key);
  out_ += JsonString(value);
}

void ResultsWriter::Number(std::string_view key, double value) {
  Key(key);
  AppendJsonNumber(out_, value);
}

void ResultsWriter::Integer(std::string_view key, long long value) {
  Key(key);
  out_ += std::to_string(value);
}

void ResultsWriter::Null(std::string_view key) {
  Key(key);
  out_ += "null";
}

void ResultsWriter::Raw(std::string_view key, std::string_view json_text) {
  Key(key);
  out_ += json_text;
}

void ResultsWriter::Interval(std::string_view key, const stats::Interval& ci) {
  Key(key);
  out_ += '[';
  AppendJsonNumber(out_, ci.lower);
  out_ += ',';
  AppendJsonNumber(out_, ci.upper);
  out_ += ']';
}

void ResultsWriter::Side(std::string_view key, const stats::SampleSummary& side) {
  Key(key);
  AppendJsonKey(out_, "{", keys::side::kCv);
  AppendJsonNumber(out_, side.cv);
  AppendJsonKey(out_, ",", keys::side::kMedian);
  AppendJsonNumber(out_, side.median);
  AppendJsonKey(out_, ",", keys::side::kN);
  out_ += std::to_string(side.n);
  out_ += '}';
}

std::string AttributionJson(const judge::Attribution& a) {
  std::string out = "{";
  if (!a.hint.empty()) {
    AppendJsonKey(out, "", keys::attribution::kHint);
    out += JsonString(a.hint);
    out += ',';
  }
  AppendJsonKey(out, "", keys::attribution::kMoved);
  out += '[';
  for (size_t i = 0; i < a.moved.size(); ++i) {
    AppendJsonKey(out, i == 0 ? "{" : ",{", keys::moved::kChange);
    AppendJsonNumber(out, a.moved[i].change);
    AppendJsonKey(out, ",", keys::moved::kMetric);
    out += JsonString(a.moved[i].metric);
    AppendJsonKey(out, ",", keys::moved::kVerdict);
    out += JsonString(a.moved[i].verdict);
    out += '}';
  }
  out += ']';
  if (a.roofline) {
    AppendJsonKey(out, ",", keys::attribution::kRoofline);
    AppendJsonKey(out, "{", keys::roofline::kClass);
    out += JsonString(a.roofline->bound);
    AppendJsonKey(out, ",", keys::roofline::kIntensity);
    AppendJsonNumber(out, a.roofline->intensity);
    AppendJsonKey(out, ",", keys::roofline::kRidge);
    AppendJsonNumber(out, a.roofline->ridge);
    out += '}';
  }
  return out + "}";
}

}  // namespace perfgate::server::gate
