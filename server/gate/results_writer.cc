#include "server/gate/results_writer.h"

#include <charconv>
#include <cmath>
#include <nlohmann/json.hpp>

namespace perfgate::server::gate {

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

void ResultsWriter::Key(std::string_view key) {
  if (!key_first_) out_ += ',';
  key_first_ = false;
  out_ += '"';
  out_ += key;  // keys are plain words
  out_ += "\":";
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
  out_ += "{\"cv\":";
  AppendJsonNumber(out_, side.cv);
  out_ += ",\"median\":";
  AppendJsonNumber(out_, side.median);
  out_ += ",\"n\":" + std::to_string(side.n) + "}";
}

std::string AttributionJson(const judge::Attribution& a) {
  std::string out = "{";
  if (!a.hint.empty()) out += "\"hint\":" + JsonString(a.hint) + ",";
  out += "\"moved\":[";
  for (size_t i = 0; i < a.moved.size(); ++i) {
    out += i == 0 ? "{\"change\":" : ",{\"change\":";
    AppendJsonNumber(out, a.moved[i].change);
    out += ",\"metric\":" + JsonString(a.moved[i].metric);
    out += ",\"verdict\":" + JsonString(a.moved[i].verdict) + "}";
  }
  out += "]";
  if (a.roofline) {
    out += ",\"roofline\":{\"class\":" + JsonString(a.roofline->bound) + ",\"intensity\":";
    AppendJsonNumber(out, a.roofline->intensity);
    out += ",\"ridge\":";
    AppendJsonNumber(out, a.roofline->ridge);
    out += "}";
  }
  return out + "}";
}

}  // namespace perfgate::server::gate
