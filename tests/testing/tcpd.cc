// SPDX-License-Identifier: Apache-2.0
#include "tests/testing/tcpd.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

namespace perfwarden::quality {
namespace {

using nlohmann::json;

Result<json> ReadJson(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("cannot open", path.string());
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded()) return InvalidArgument("invalid JSON", path.string());
  return j;
}

std::size_t Distance(std::size_t a, std::size_t b) { return a > b ? a - b : b - a; }

}  // namespace

Result<TcpdCorpus> LoadTcpd(const std::string& dir) {
  const std::filesystem::path root(dir);
  auto annotations = ReadJson(root / "annotations.json");
  if (!annotations) return tl::unexpected(annotations.error());
  std::vector<std::filesystem::path> files;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root / "datasets", ec)) {
    if (entry.path().extension() == ".json") files.push_back(entry.path());
  }
  if (ec) return InvalidArgument("cannot list: " + ec.message(), (root / "datasets").string());
  std::sort(files.begin(), files.end());
  TcpdCorpus corpus;
  for (const auto& file : files) {
    auto j = ReadJson(file);
    if (!j) return tl::unexpected(j.error());
    try {
      TcpdSeries s;
      s.name = j->at("name").get<std::string>();
      const json& series = j->at("series");
      if (series.size() != 1) {
        corpus.excluded.push_back(s.name + " (multivariate)");
        continue;
      }
      const json& raw = series.at(0).at("raw");
      if (std::any_of(raw.begin(), raw.end(), [](const json& v) { return v.is_null(); })) {
        corpus.excluded.push_back(s.name + " (missing values)");
        continue;
      }
      s.values = raw.get<std::vector<double>>();
      if (!annotations->contains(s.name)) {
        return InvalidArgument("no annotations for " + s.name,
                               (root / "annotations.json").string());
      }
      for (const auto& [annotator, points] : annotations->at(s.name).items()) {
        s.annotations[annotator] = points.get<std::vector<std::size_t>>();
      }
      corpus.series.push_back(std::move(s));
    } catch (const json::exception& e) {
      return InvalidArgument(e.what(), file.string());
    }
  }
  return corpus;
}

std::vector<std::size_t> TcpdTruePositives(std::span<const std::size_t> truth,
                                           std::span<const std::size_t> predictions,
                                           std::size_t margin) {
  std::set<std::size_t> unused(predictions.begin(), predictions.end());
  const std::set<std::size_t> annotations(truth.begin(), truth.end());
  std::vector<std::size_t> matched;
  for (std::size_t tau : annotations) {
    auto best = unused.end();
    for (auto it = unused.begin(); it != unused.end(); ++it) {
      // Increasing order, so the first of two equally close predictions is the smaller.
      if (Distance(tau, *it) <= margin &&
          (best == unused.end() || Distance(tau, *it) < Distance(tau, *best))) {
        best = it;
      }
    }
    if (best == unused.end()) continue;
    matched.push_back(tau);
    unused.erase(best);
  }
  return matched;
}

TcpdF1 TcpdFMeasure(const std::map<std::string, std::vector<std::size_t>>& annotations,
                    std::span<const std::size_t> predictions, std::size_t margin) {
  std::set<std::size_t> x(predictions.begin(), predictions.end());
  x.insert(0);
  const std::vector<std::size_t> xs(x.begin(), x.end());
  std::set<std::size_t> all = {0};
  std::vector<std::vector<std::size_t>> per_annotator;
  for (const auto& [annotator, points] : annotations) {
    std::set<std::size_t> t(points.begin(), points.end());
    t.insert(0);
    all.insert(t.begin(), t.end());
    per_annotator.emplace_back(t.begin(), t.end());
  }
  const std::vector<std::size_t> union_of_all(all.begin(), all.end());
  TcpdF1 out;
  out.precision = double(TcpdTruePositives(union_of_all, xs, margin).size()) / double(xs.size());
  double recall_sum = 0;
  for (const auto& t : per_annotator) {
    recall_sum += double(TcpdTruePositives(t, xs, margin).size()) / double(t.size());
  }
  // metrics.py: R = 1 / K * sum(...).
  out.recall = 1.0 / double(per_annotator.size()) * recall_sum;
  const double alpha = 0.5;
  out.f1 = out.precision * out.recall / (alpha * out.recall + (1 - alpha) * out.precision);
  return out;
}

}  // namespace perfwarden::quality
