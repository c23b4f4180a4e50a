// SPDX-License-Identifier: Apache-2.0
// What a paired gate pays per process it starts to name the benchmark binary's compiler
// (runner/run/binary_compiler.h): the .comment section found through the ELF section headers,
// against the baseline of what it replaced, a scan of the whole file for the compilers' markers.
//
//   build/release/bin/binary_compiler_bench [--benchmark_filter=...] [BINARY...]
//
// Each BINARY (default: this program) is timed both ways; docs/performance.md has the figures.
#include <benchmark/benchmark.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "runner/run/binary_compiler.h"

namespace {

// The baseline: read the file in 1 MiB blocks and return the first marker's string.
std::string ScanWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string window;
  std::vector<char> block(1 << 20);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    window.append(block.data(), static_cast<size_t>(in.gcount()));
    for (const char* marker : {"clang version ", "GCC: ("}) {
      const size_t at = window.find(marker);
      if (at != std::string::npos) return window.substr(at, 200);
    }
    if (window.size() > 256) window.erase(0, window.size() - 256);
  }
  return "";
}

void BM_SectionHeaders(benchmark::State& state, const std::string& path) {
  for (auto _ : state) benchmark::DoNotOptimize(perfwarden::run::BinaryCompiler(path));
  state.SetLabel(perfwarden::run::BinaryCompiler(path));
}

void BM_ScanWholeFile(benchmark::State& state, const std::string& path) {
  for (auto _ : state) benchmark::DoNotOptimize(ScanWholeFile(path));
  state.SetLabel(ScanWholeFile(path).substr(0, 40));
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  std::vector<std::string> binaries(argv + 1, argv + argc);
  if (binaries.empty()) binaries.push_back(std::filesystem::read_symlink("/proc/self/exe"));
  for (const std::string& path : binaries) {
    const std::string size = std::to_string(std::filesystem::file_size(path) >> 10) + "KiB";
    benchmark::RegisterBenchmark(("BM_SectionHeaders/" + size).c_str(), BM_SectionHeaders, path)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark(("BM_ScanWholeFile/" + size).c_str(), BM_ScanWholeFile, path)
        ->Unit(benchmark::kMicrosecond);
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
}
