// The verdict's "results" array written as text: a verdict of 500 metrics is ~200 KB, and
// building it as a JSON tree first cost more than a tenth of a verdict's CPU. Keys are written
// in the order nlohmann's dump uses (sorted), numbers in their shortest round-trip form, strings
// escaped by nlohmann; callers write each object's keys in sorted order.
#pragma once

#include <string>
#include <string_view>

#include "judge/attribution.h"
#include "stats/descriptive.h"
#include "stats/verdict.h"

namespace perfgate::server::gate {

// A finite number in its shortest round-trip form; "null" for NaN and infinities (JSON has
// neither).
void AppendJsonNumber(std::string& out, double value);
// A JSON string literal, escaped.
std::string JsonString(std::string_view value);
// `before` then `"key":`; the key is one of wire/verdict_keys.h's plain words (not escaped).
void AppendJsonKey(std::string& out, std::string_view before, std::string_view key);

// A result row's "attribution" object: {"hint":...,"moved":[{"change","metric","verdict"}...],
// "roofline":{"class","intensity","ridge"}} with sorted keys, "hint" and "roofline" left out
// when absent.
std::string AttributionJson(const judge::Attribution& attribution);

class ResultsWriter {
 public:
  void Open() {
    out_ += first_ ? "[{" : ",{";
    first_ = false, key_first_ = true;
  }
  void Close() { out_ += '}'; }
  std::string Finish() { return std::move(out_) + (first_ ? "[]" : "]"); }

  void Key(std::string_view key);
  void String(std::string_view key, std::string_view value);
  void Number(std::string_view key, double value);
  void Integer(std::string_view key, long long value);
  void Null(std::string_view key);
  // A value that is already JSON text (an object built elsewhere).
  void Raw(std::string_view key, std::string_view json_text);
  void Interval(std::string_view key, const stats::Interval& ci);
  void Side(std::string_view key, const stats::SampleSummary& side);

 private:
  std::string out_;
  bool first_ = true;
  bool key_first_ = true;
};

}  // namespace perfgate::server::gate
