// SPDX-License-Identifier: Apache-2.0
// Deterministic run ids and commit shas for e2e tests: the n-th of each, distinct per test file
// through `salt` so that fixtures of different files never collide by accident.
#pragma once

#include <cstdio>
#include <string>

namespace perfwarden::testing {

inline std::string TestRunId(int n) {
  char text[40];
  std::snprintf(text, sizeof(text), "00000000-0000-4000-8000-%012d", n);
  return text;
}

inline std::string TestSha(int n, int salt) {
  char text[48];
  std::snprintf(text, sizeof(text), "%040x", n + salt);
  return text;
}

}  // namespace perfwarden::testing
