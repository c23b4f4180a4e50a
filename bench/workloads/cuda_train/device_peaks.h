// SPDX-License-Identifier: Apache-2.0
// The dense peak TFLOP/s that MFU divides by: NVIDIA's datasheet figures for the GPUs that
// perfwarden's users train on, otherwise an estimate from the SM count, the clock and the
// architecture's FLOPs per SM per clock, labelled as an estimate. Plain C++ (unit-tested).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "model_math.h"

namespace perfwarden::cuda_train {

struct PeakTflops {
  double tflops = 0;
  std::string source;  // where the figure comes from, printed as an info line
  bool estimate = false;
};

// The datasheet's dense (not sparse) peak for a device name as cudaGetDeviceProperties gives it
// ("NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA L4"...); nullopt when not in the
// table.
std::optional<PeakTflops> DatasheetPeak(std::string_view device_name, Precision precision);

// SM count x clock x dense FLOPs per SM per clock for compute capability major.minor; nullopt
// for architectures before Ampere (sm_80), which this build does not target.
std::optional<PeakTflops> EstimatedPeak(int cc_major, int cc_minor, int sm_count, double clock_khz,
                                        Precision precision);

// The datasheet's peak memory bandwidth in GB/s (10^9 bytes/s) for a device name; nullopt when not
// in the table. With the peak TFLOP/s it gives the roofline's ridge point.
std::optional<double> DatasheetBandwidthGbs(std::string_view device_name);

// --peak-tflops if given, else the datasheet, else the estimate.
std::optional<PeakTflops> ResolvePeak(std::optional<double> override_tflops,
                                      std::string_view device_name, int cc_major, int cc_minor,
                                      int sm_count, double clock_khz, Precision precision);

}  // namespace perfwarden::cuda_train
