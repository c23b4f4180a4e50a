// Pieces of an alert that the list and the single-alert renderings share (alerts_render.h): its
// id, benchmark, commit range and environment change, read from the server's JSON as tolerantly
// as text_format.h reads any field. Internal to runner/report.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace perfgate::report::alerts_internal {

// The alert's id as text, "?" without one.
std::string IdText(const nlohmann::json& alert);
// The first `n` characters of a commit id.
std::string ShortSha(const std::string& sha, size_t n);
// range.last_good and range.first_bad (null values when absent).
const nlohmann::json& LastGood(const nlohmann::json& alert);
const nlohmann::json& FirstBad(const nlohmann::json& alert);
// "suite/benchmark", or the benchmark alone when the series has no suite.
std::string BenchmarkName(const nlohmann::json& alert);
// "9f2c4d1 Sort: insertion sort below 32 (Ada Lovelace, 2026-11-20T10:00:00Z)"; "" without a sha.
std::string CommitLine(const nlohmann::json& commit, bool markdown);

inline constexpr const char* kNoLastGood =
    "none (the first point of the series has no earlier commit)";

// One "name: before -> after" line per changed fingerprint field of the alert's environment
// change; empty when it has none.
std::vector<std::string> EnvironmentLines(const nlohmann::json& alert);

}  // namespace perfgate::report::alerts_internal
