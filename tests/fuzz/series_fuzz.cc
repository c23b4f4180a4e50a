// SPDX-License-Identifier: Apache-2.0
// `perfwarden analyze`'s series files, CSV and JSON (runner/adapters/series_input.cc), and the
// format detection that picks between them.
#include <cstddef>
#include <cstdint>

#include "runner/adapters/series_input.h"
#include "tests/fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace perfwarden;
  const std::string_view text = fuzz::AsText(data, size);
  fuzz::RequireNamedError(adapters::ParseSeries(text, "fuzz.json", adapters::SeriesFormat::kJson),
                          "ParseSeries(json)");
  fuzz::RequireNamedError(adapters::ParseSeries(text, "fuzz.csv", adapters::SeriesFormat::kCsv),
                          "ParseSeries(csv)");
  (void)adapters::DetectSeriesFormat("series", text);
  return 0;
}
