// SPDX-License-Identifier: Apache-2.0
#include "wire/paired.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <utility>

#include "core/text.h"
#include "wire/json_check.h"
#include "wire/json_reader.h"
#include "wire/validate.h"
#include "wire/verdict_keys.h"

namespace perfwarden::wire {
namespace {

using nlohmann::json;
using Reader = JsonReader<json>;

// Values of a series or a block besides its values: the object, its keys' values, the arrays.
constexpr size_t kMaxKeyValues = 64;

// One side of a block: finite numbers, at most limits.max_values of them.
std::vector<double> ReadSide(Reader& reader, const json& block, std::string_view key,
                             const std::string& path, const DecodeLimits& limits) {
  std::vector<double> values;
  if (const auto it = block.find(key); it != block.end() && it->is_array()) {
    values.reserve(std::min(it->size(), limits.max_values));
  }
  reader.ForEach(block, key, path, /*required=*/true, [&](const json& item, const std::string& at) {
    if (!reader.Expect(item, item.is_number(), "a number", at)) return;
    const double value = item.get<double>();
    if (!std::isfinite(value)) {
      reader.Fail(at, "value is not finite");
    } else if (values.size() >= limits.max_values) {
      reader.Fail(at, "more than " + std::to_string(limits.max_values) + " values");
    } else {
      values.push_back(value);
    }
  });
  return values;
}

// One element of a series' "blocks", as the parse streams it.
PairedBlock ReadBlock(Reader& reader, const json& item, const std::string& at,
                      const DecodeLimits& limits) {
  PairedBlock block;
  if (!reader.Expect(item, item.is_object(), "an object", at)) return block;
  reader.OnlyKeys(item, at, {"base_first", "base", "head"});
  block.base_first = reader.Bool(item, "base_first", at).value_or(false);
  block.base = ReadSide(reader, item, "base", at, limits);
  block.head = ReadSide(reader, item, "head", at, limits);
  return block;
}

// A series without its blocks, which the parse streamed out of it (its "blocks" is empty here).
PairedSeries ReadSeries(Reader& reader, const json& object, const std::string& path,
                        std::vector<PairedBlock> blocks) {
  PairedSeries s;
  if (!reader.Expect(object, object.is_object(), "an object", path)) return s;
  reader.OnlyKeys(object, path, {"suite", "benchmark", "metric", "unit", "direction", "blocks"});
  s.key.suite = reader.String(object, "suite", path, /*required=*/true);
  s.key.benchmark = reader.String(object, "benchmark", path, /*required=*/true);
  s.key.metric = reader.String(object, "metric", path, /*required=*/true);
  s.unit = reader.String(object, "unit", path);
  s.direction = reader.Direction(object, "direction", path);
  reader.Array(object, "blocks", path, /*required=*/true);
  s.blocks = std::move(blocks);
  if (!reader.failed() && s.blocks.empty()) {
    reader.Fail(FieldPath(path, "blocks"), "must hold at least one block");
  }
  return s;
}

PairedDesign ReadDesign(Reader& reader, const json& object, const std::string& path) {
  namespace k = keys::design;
  PairedDesign d;
  reader.OnlyKeys(object, path,
                  {k::kRepetitions, k::kMinBlocks, k::kMaxBlocks, k::kGrowth, k::kTest, k::kSeed,
                   k::kStopped, k::kSpending});
  d.repetitions = reader.Integer(object, k::kRepetitions, path, 1, true).value_or(0);
  d.min_blocks = reader.Integer(object, k::kMinBlocks, path, 3, true).value_or(0);
  d.max_blocks = reader.Integer(object, k::kMaxBlocks, path, d.min_blocks, true).value_or(0);
  if (d.repetitions > 10000) reader.Fail(FieldPath(path, k::kRepetitions), "must be at most 10000");
  if (d.max_blocks > kMaxPairedBlocks) {
    reader.Fail(FieldPath(path, k::kMaxBlocks),
                "must be at most " + std::to_string(kMaxPairedBlocks));
  }
  d.growth = reader.Number(object, k::kGrowth, path, true).value_or(0);
  if (!reader.failed() && !(d.growth > 1 && d.growth <= 10)) {
    reader.Fail(FieldPath(path, k::kGrowth), "must be in (1, 10]");
  }
  d.test = reader.String(object, k::kTest, path, true);
  if (!reader.failed() && d.test != "t" && d.test != "wilcoxon" && d.test != "trimmed") {
    reader.Fail(FieldPath(path, k::kTest), "must be \"t\", \"wilcoxon\" or \"trimmed\"");
  }
  d.spending = reader.OptString(object, k::kSpending, path).value_or("pocock");
  if (!reader.failed() && d.spending != "pocock" && d.spending != "obf" &&
      d.spending != "bonferroni") {
    reader.Fail(FieldPath(path, k::kSpending), "must be \"pocock\", \"obf\" or \"bonferroni\"");
  }
  d.seed = static_cast<uint64_t>(reader.Integer(object, k::kSeed, path, 0).value_or(0));
  d.stopped = reader.String(object, k::kStopped, path, true);
  if (!reader.failed() && !IsPairedStop(d.stopped)) {
    reader.Fail(FieldPath(path, k::kStopped),
                "must be \"decided\", \"max_blocks\" or \"time_budget\"");
  }
  return d;
}

// `series`: what the parse streamed out of the root's "series" (which the root holds empty).
PairedMeasurement Read(Reader& reader, const json& root, std::vector<PairedSeries> series) {
  PairedMeasurement m;
  reader.OnlyKeys(root, "",
                  {"baseline_commit", "amends", "testbed", "parameters", "design", "series"});
  m.baseline_commit = reader.String(root, "baseline_commit", "", /*required=*/true);
  if (!reader.failed() && !IsSha(m.baseline_commit)) {
    reader.Fail("baseline_commit", "not a commit sha (40 hex digits)");
  }
  m.baseline_commit = AsciiLower(m.baseline_commit);
  m.amends = reader.Integer(root, "amends", "", 1);
  if (const json* testbed = reader.Object(root, "testbed", "", /*required=*/true)) {
    reader.OnlyKeys(*testbed, "testbed", {"name", "fingerprint"});
    m.testbed.name = reader.String(*testbed, "name", "testbed", /*required=*/true);
    if (!reader.failed() && !IsName(m.testbed.name)) {
      reader.Fail("testbed.name", "must be 1.." + std::to_string(kMaxNameLength) +
                                      " characters from [A-Za-z0-9._/-]");
    }
    if (auto fingerprint = reader.OptObject(*testbed, "fingerprint", "testbed")) {
      m.testbed.fingerprint_json = fingerprint->dump();
    }
  }
  if (const json* parameters = reader.Object(root, "parameters", "")) {
    if (!reader.failed()) {
      auto request = DecodeVerdictRequest(*parameters);
      if (request) {
        m.parameters = std::move(*request);
      } else {
        reader.Fail(FieldPath("parameters", request.error().field), request.error().message);
      }
    }
  }
  if (const json* design = reader.Object(root, "design", "", /*required=*/true)) {
    m.design = ReadDesign(reader, *design, "design");
  }
  reader.Array(root, "series", "", /*required=*/true);
  m.series = std::move(series);
  for (size_t i = 0; i < m.series.size() && !reader.failed(); ++i) {
    if (static_cast<int64_t>(m.series[i].blocks.size()) > m.design.max_blocks) {
      reader.Fail(
          FieldPath(ElementPath("series", i), "blocks"),
          "more blocks than design.max_blocks (" + std::to_string(m.design.max_blocks) + ")");
    }
  }
  if (!reader.failed() && m.series.empty()) reader.Fail("series", "must hold at least one series");
  return m;
}

}  // namespace

bool IsPairedStop(std::string_view word) {
  return word == "decided" || word == "max_blocks" || word == "time_budget";
}

Result<PairedMeasurement> DecodePairedMeasurement(std::string_view json_text,
                                                  const DecodeLimits& limits) {
  // Each block, then each series, is decoded as soon as the parse has it and its DOM dropped:
  // the memory a measurement costs is its typed values plus one block's DOM.
  std::vector<PairedSeries> series;
  std::vector<PairedBlock> blocks;  // of the series being read
  std::map<SeriesKey, size_t> seen;
  auto read = [](auto read_value) -> auto{
    Reader reader;
    auto value = read_value(reader);
    return reader.failed() ? Result<decltype(value)>(tl::unexpected(reader.TakeError()))
                           : Result<decltype(value)>(std::move(value));
  };
  const StreamedArray streamed[] = {
      {{"series", "*", "blocks"},
       2 * std::min(limits.max_values, size_t{1} << 40) + kMaxKeyValues,
       [&](json element, const std::string& path, const std::vector<size_t>&) -> Result<void> {
         if (static_cast<int64_t>(blocks.size()) >= kMaxPairedBlocks) {
           return InvalidArgument("more than " + std::to_string(kMaxPairedBlocks) + " blocks",
                                  path);
         }
         auto block = read([&](Reader& r) { return ReadBlock(r, element, path, limits); });
         if (!block) return tl::unexpected(block.error());
         blocks.push_back(std::move(*block));
         return {};
       }},
      {{"series"},
       kMaxKeyValues,
       [&](json element, const std::string& path, const std::vector<size_t>&) -> Result<void> {
         if (series.size() >= limits.max_results) {
           return InvalidArgument("more than " + std::to_string(limits.max_results) + " series",
                                  path);
         }
         auto s = read([&](Reader& r) { return ReadSeries(r, element, path, std::move(blocks)); });
         blocks.clear();
         if (!s) return tl::unexpected(s.error());
         auto [it, inserted] = seen.emplace(s->key, series.size());
         if (!inserted) {
           return InvalidArgument("duplicate series (suite, benchmark, metric): same as series[" +
                                      std::to_string(it->second) + "]",
                                  path);
         }
         series.push_back(std::move(*s));
         return {};
       }}};
  JsonLimits json_limits{limits.max_string, limits.max_depth};
  json_limits.max_elements = limits.max_other_values;
  json_limits.object_root = true;
  Result<json> root = ParseCheckedJson(json_text, json_limits, streamed);
  if (!root) return tl::unexpected(std::move(root.error()));
  return ReadDocument<PairedMeasurement>(
      *root, "", [&](Reader& reader, const json& object, const std::string&) {
        return Read(reader, object, std::move(series));
      });
}

std::string EncodePairedMeasurement(const PairedMeasurement& m) {
  json series = json::array();
  for (const PairedSeries& s : m.series) {
    json blocks = json::array();
    for (const PairedBlock& b : s.blocks) {
      blocks.push_back({{"base_first", b.base_first}, {"base", b.base}, {"head", b.head}});
    }
    series.push_back({{"suite", s.key.suite},
                      {"benchmark", s.key.benchmark},
                      {"metric", s.key.metric},
                      {"unit", s.unit},
                      {"direction", std::string(DirectionName(s.direction))},
                      {"blocks", std::move(blocks)}});
  }
  json fingerprint = json::parse(m.testbed.fingerprint_json, nullptr, false);
  if (!fingerprint.is_object()) fingerprint = json::object();
  json out = {{"baseline_commit", m.baseline_commit},
              {"testbed", {{"name", m.testbed.name}, {"fingerprint", fingerprint}}},
              {"parameters", EncodeVerdictRequest(m.parameters)},
              {"design", EncodePairedDesign(m.design)},
              {"series", std::move(series)}};
  if (m.amends) out["amends"] = *m.amends;
  return out.dump(-1, ' ', /*ensure_ascii=*/false, json::error_handler_t::replace);
}

json EncodePairedDesign(const PairedDesign& d) {
  namespace k = keys::design;
  return {{k::kRepetitions, d.repetitions},
          {k::kMinBlocks, d.min_blocks},
          {k::kMaxBlocks, d.max_blocks},
          {k::kGrowth, d.growth},
          {k::kTest, d.test},
          {k::kSeed, d.seed},
          {k::kStopped, d.stopped},
          {k::kSpending, d.spending}};
}

}  // namespace perfwarden::wire
