// SPDX-License-Identifier: Apache-2.0
// The identity of a series across runs and sides: which suite, which benchmark, which metric.
// The runner measures it, the server stores it, and a comparison pairs two sides' series by it.
// A unit and a direction describe a series; they are not part of its name.
#pragma once

#include <compare>
#include <string>

namespace perfwarden {

struct SeriesKey {
  std::string suite;
  std::string benchmark;
  std::string metric;

  auto operator<=>(const SeriesKey&) const = default;
  bool operator==(const SeriesKey&) const = default;
};

}  // namespace perfwarden
