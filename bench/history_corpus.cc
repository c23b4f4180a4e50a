// SPDX-License-Identifier: Apache-2.0
// Generates the labelled corpus of benchmark histories that measures change detection
// (tests/fixtures/history/*.json; docs/statistics.md, "History detection quality"). Every
// series is drawn from its own seed, so the files are reproducible bit for bit:
//
//   history_corpus tests/fixtures/history/real tests/fixtures/history
//
// The first argument holds the real noise that bench/record_real_noise.sh recorded (one CSV per
// benchmark, a row of repetitions per invocation); those series are stored as recorded and,
// sliced, with planted steps.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "stats/bootstrap.h"

namespace {

using perfwarden::stats::Rng;
using Json = nlohmann::ordered_json;

constexpr double kSizes[] = {0.02, 0.03, 0.04, 0.05, 0.07, 0.1, 0.15, 0.2, 0.3};
constexpr double kCvs[] = {0.01, 0.02, 0.03, 0.05, 0.08, 0.1, 0.15};

double Normal(Rng& rng) {  // Box-Muller; the corpus is stored, so libm's last bits do not matter
  const double u = 1.0 - rng.Uniform();
  return std::sqrt(-2 * std::log(u)) * std::cos(2 * M_PI * rng.Uniform());
}
double Between(Rng& rng, double lo, double hi) { return lo + (hi - lo) * rng.Uniform(); }
std::size_t LogLength(Rng& rng, double lo, double hi) {
  return static_cast<std::size_t>(std::lround(std::exp(Between(rng, std::log(lo), std::log(hi)))));
}
template <class T, std::size_t N>
T Pick(Rng& rng, const T (&items)[N]) {
  return items[rng.Below(static_cast<uint32_t>(N))];
}
double Signed(Rng& rng, double size) { return rng.Below(2) ? size : -size; }
double Round5(double x) {  // 5 significant digits keep the files small
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.5g", x);
  return std::stod(buffer);
}

// Up to `count` indices in [margin, n - margin], at least `gap` apart from each other.
std::vector<std::size_t> Positions(Rng& rng, std::size_t n, std::size_t count, std::size_t margin,
                                   std::size_t gap) {
  std::vector<std::size_t> out;
  if (n < 2 * margin + 1) return out;
  for (int attempt = 0; attempt < 200 && out.size() < count; ++attempt) {
    const std::size_t i = margin + rng.Below(static_cast<uint32_t>(n - 2 * margin + 1));
    bool far = true;
    for (std::size_t j : out) far = far && (i > j ? i - j : j - i) >= gap;
    if (far) out.push_back(i);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct Series {
  Json labels = Json::object();
  std::vector<double> level;  // the true level of each point, before noise
  std::vector<std::vector<double>> values;
};

Series Start(const std::string& name, const std::string& category, uint64_t seed, std::size_t n) {
  Series s;
  s.labels["name"] = name;
  s.labels["category"] = category;
  s.labels["seed"] = seed;
  s.labels["steps"] = Json::array();
  s.labels["drifts"] = Json::array();
  s.labels["outliers"] = Json::array();
  s.labels["fingerprint_changes"] = Json::array();
  s.level.assign(n, 1.0);
  return s;
}

void Multiply(Series& s, std::size_t from, double factor) {
  for (std::size_t i = from; i < s.level.size(); ++i) s.level[i] *= factor;
}

void PlantSteps(Rng& rng, Series& s, std::size_t max_steps, std::size_t margin) {
  const std::size_t n = s.level.size();
  const std::size_t count = 1 + rng.Below(static_cast<uint32_t>(std::min(max_steps, n / 60 + 1)));
  for (std::size_t i : Positions(rng, n, count, margin, 12)) {
    const double size = Signed(rng, Pick(rng, kSizes));
    Multiply(s, i, 1 + size);
    s.labels["steps"].push_back({{"index", i}, {"size", size}});
  }
}

// Gaussian noise of coefficient `cv` on every repetition, around base * level.
void AddNoise(Rng& rng, Series& s, double base, double cv, std::size_t reps) {
  s.labels["noise"] = "normal";
  s.labels["cv"] = cv;
  s.labels["repetitions"] = reps;
  for (double level : s.level) {
    std::vector<double> point;
    for (std::size_t r = 0; r < reps; ++r) point.push_back(base * level * (1 + cv * Normal(rng)));
    s.values.push_back(point);
  }
}

std::size_t Reps(Rng& rng) {
  constexpr std::size_t kReps[] = {1, 1, 1, 3};
  return Pick(rng, kReps);
}

Json Finish(Series s) {
  Json values = Json::array();
  for (const auto& point : s.values) {
    if (point.size() == 1) {
      values.push_back(Round5(point[0]));
    } else {
      Json reps = Json::array();
      for (double v : point) reps.push_back(Round5(v));
      values.push_back(reps);
    }
  }
  s.labels["length"] = s.values.size();
  s.labels["values"] = values;
  return s.labels;
}

Json Synthetic(const std::string& category, int count, uint64_t first_seed) {
  Json out = Json::array();
  for (int k = 0; k < count; ++k) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(k);
    Rng rng(seed);
    const std::size_t n = LogLength(rng, 20, 2000);
    char name[64];
    std::snprintf(name, sizeof name, "%s-%03d", category.c_str(), k);
    Series s = Start(name, category, seed, n);
    const double base = std::exp(Between(rng, std::log(50.0), std::log(5e5)));
    double cv = Pick(rng, kCvs);
    if (category == "step") {
      PlantSteps(rng, s, 3, 8);
    } else if (category == "drift") {
      // A linear drift of 5-30% over 20-200 points; half the series also hold a step.
      const std::size_t len = std::min(n / 2, LogLength(rng, 20, 200));
      const std::size_t start = 5 + rng.Below(static_cast<uint32_t>(n - len - 9));
      const double size = Signed(rng, Between(rng, 0.05, 0.3));
      for (std::size_t i = start; i < n; ++i) {
        const double t =
            std::min(1.0, static_cast<double>(i - start + 1) / static_cast<double>(len));
        s.level[i] *= 1 + size * t;
      }
      s.labels["drifts"].push_back({{"start", start}, {"end", start + len}, {"size", size}});
      if (rng.Below(2)) {
        for (std::size_t i : Positions(rng, n, 1, 8, 12)) {
          if (i + 12 >= start && i <= start + len + 12) continue;  // keep the step apart
          const double step = Signed(rng, Pick(rng, kSizes));
          Multiply(s, i, 1 + step);
          s.labels["steps"].push_back({{"index", i}, {"size", step}});
        }
      }
    } else if (category == "outlier") {
      // 1-5 single-point outliers (30-300% slower, or 40% faster); half also hold steps.
      if (rng.Below(2)) PlantSteps(rng, s, 2, 8);
      const std::size_t count_outliers =
          1 + rng.Below(static_cast<uint32_t>(std::min<std::size_t>(5, n / 10)));
      for (std::size_t i : Positions(rng, n, count_outliers, 1, 3)) {
        s.level[i] *= rng.Below(4) ? 1 + Between(rng, 0.3, 3.0) : 0.6;
        s.labels["outliers"].push_back(i);
      }
    } else if (category == "bimodal") {
      // Each point falls in an upper mode 8-20% above with probability 10-40% (cache or
      // frequency states); half the series also hold steps.
      cv = Pick(rng, kCvs) / 3;
      if (rng.Below(2)) PlantSteps(rng, s, 2, 8);
      const double gap = Between(rng, 0.08, 0.2);
      const double p = Between(rng, 0.1, 0.4);
      for (double& level : s.level) level *= rng.Uniform() < p ? 1 + gap : 1.0;
      s.labels["mode_gap"] = gap;
      s.labels["upper_mode_probability"] = p;
    } else if (category == "fingerprint") {
      // The testbed's machine changes: the level shifts (3-30%) and the noise with it.
      const std::size_t count_changes = 1 + rng.Below(n >= 100 ? 2 : 1);
      std::vector<double> cv_after(n, cv);
      for (std::size_t i : Positions(rng, n, count_changes, 8, 12)) {
        const double size = Signed(rng, Between(rng, 0.03, 0.3));
        Multiply(s, i, 1 + size);
        const double new_cv = Pick(rng, kCvs);
        std::fill(cv_after.begin() + static_cast<std::ptrdiff_t>(i), cv_after.end(), new_cv);
        s.labels["fingerprint_changes"].push_back(
            {{"index", i}, {"size", size}, {"cv_after", new_cv}});
      }
      const std::size_t reps = Reps(rng);
      s.labels["noise"] = "normal";
      s.labels["cv"] = cv;
      s.labels["repetitions"] = reps;
      for (std::size_t i = 0; i < n; ++i) {
        std::vector<double> point;
        for (std::size_t r = 0; r < reps; ++r) {
          point.push_back(base * s.level[i] * (1 + cv_after[i] * Normal(rng)));
        }
        s.values.push_back(point);
      }
      out.push_back(Finish(std::move(s)));
      continue;
    }
    AddNoise(rng, s, base, cv, Reps(rng));
    if (category == "bimodal") s.labels["noise"] = "bimodal";
    out.push_back(Finish(std::move(s)));
  }
  return out;
}

std::vector<std::vector<double>> ReadCsv(const std::filesystem::path& path) {
  std::vector<std::vector<double>> rows;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<double> row;
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  return rows;
}

Json Real(const std::filesystem::path& dir, bool steps, int count, uint64_t first_seed) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".csv") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  Json out = Json::array();
  for (int k = 0; k < (steps ? count : static_cast<int>(files.size())); ++k) {
    const uint64_t seed = first_seed + static_cast<uint64_t>(k);
    Rng rng(seed);
    const auto& file = files[steps ? rng.Below(static_cast<uint32_t>(files.size())) : k];
    std::vector<std::vector<double>> rows = ReadCsv(file);
    std::size_t first = 0, n = rows.size();
    if (steps) {  // a slice of 40-600 invocations with 1-2 planted steps
      n = std::min(rows.size(), LogLength(rng, 40, 600));
      first = rng.Below(static_cast<uint32_t>(rows.size() - n + 1));
    }
    char name[64];
    std::snprintf(name, sizeof name, "%s-%03d", steps ? "real-step" : "real-noise", k);
    Series s = Start(name, steps ? "real-step" : "real-noise", seed, n);
    if (steps) PlantSteps(rng, s, 2, 8);
    s.labels["noise"] = "real:" + file.stem().string();
    s.labels["first_row"] = first;
    for (std::size_t i = 0; i < n; ++i) {
      std::vector<double> point = rows[first + i];
      for (double& v : point) v *= s.level[i];
      s.values.push_back(point);
    }
    s.labels["repetitions"] = s.values.front().size();
    out.push_back(Finish(std::move(s)));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: history_corpus REAL_NOISE_DIR OUT_DIR\n");
    return 2;
  }
  struct Category {
    std::string name;
    Json series;
  };
  const std::filesystem::path real = argv[1];
  const std::vector<Category> categories = {
      {"step", Synthetic("step", 160, 1000)},
      {"drift", Synthetic("drift", 40, 2000)},
      {"outlier", Synthetic("outlier", 60, 3000)},
      {"bimodal", Synthetic("bimodal", 60, 4000)},
      {"fingerprint", Synthetic("fingerprint", 40, 5000)},
      {"noise", Synthetic("noise", 80, 6000)},
      {"real-noise", Real(real, false, 0, 7000)},
      {"real-step", Real(real, true, 50, 8000)},
  };
  for (const Category& c : categories) {
    Json file = {
        {"category", c.name}, {"generator", "bench/history_corpus.cc"}, {"series", c.series}};
    std::ofstream(std::filesystem::path(argv[2]) / (c.name + ".json")) << file.dump() << "\n";
  }
  return 0;
}
