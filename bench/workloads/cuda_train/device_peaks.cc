// SPDX-License-Identifier: Apache-2.0
#include "device_peaks.h"

#include <cctype>

namespace perfwarden::cuda_train {
namespace {

// Dense peaks in TFLOP/s. Sources: the NVIDIA datasheets of each product ("H100 Tensor Core
// GPU", "H200 Tensor Core GPU", "GH200 Grace Hopper Superchip", "A100 Tensor Core GPU", "L4
// Tensor Core GPU", "L40S GPU"). The Hopper and L4 datasheets print tensor-core figures "with
// sparsity" only; the dense figure is half of it. fp32 is the non-tensor FP32 figure.
// Bandwidth in GB/s from the same datasheets (GPU memory bandwidth); the A100 row is the 40GB
// board's (80GB boards: 1,935 PCIe, 2,039 SXM4; DatasheetBandwidthGbs looks at the name).
struct DatasheetRow {
  const char* product;
  double fp32;
  double tf32;
  double bf16;
  double bandwidth_gbs;
};

constexpr DatasheetRow kH100Sxm = {"H100 SXM", 67, 494.5, 989.5, 3350};
constexpr DatasheetRow kH100Pcie = {"H100 PCIe", 51, 378, 756.5, 2000};
constexpr DatasheetRow kH100Nvl = {"H100 NVL", 60, 417.5, 835.5, 3900};
constexpr DatasheetRow kH200Sxm = {"H200 SXM", 67, 494.5, 989.5, 4800};
constexpr DatasheetRow kH200Nvl = {"H200 NVL", 60, 417.5, 835.5, 4800};
constexpr DatasheetRow kGh200 = {"GH200", 67, 494.5, 989.5, 4000};
constexpr DatasheetRow kA100 = {"A100 (SXM4 and PCIe)", 19.5, 156, 312, 1555};
constexpr DatasheetRow kL4 = {"L4", 30.3, 60, 121, 300};
constexpr DatasheetRow kL40s = {"L40S", 91.6, 183, 362.05, 864};

bool Contains(const std::string& haystack, const char* needle) {
  return haystack.find(needle) != std::string::npos;
}

// "L4" as a whole word: not the prefix of "L40S" or "L40".
bool HasWordL4(const std::string& name) {
  for (std::size_t at = name.find("L4"); at != std::string::npos; at = name.find("L4", at + 1)) {
    const bool starts = at == 0 || std::isalnum(static_cast<unsigned char>(name[at - 1])) == 0;
    const bool ends =
        at + 2 == name.size() || std::isalnum(static_cast<unsigned char>(name[at + 2])) == 0;
    if (starts && ends) return true;
  }
  return false;
}

const DatasheetRow* FindRow(std::string_view device_name) {
  std::string name(device_name);
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (Contains(name, "GH200")) return &kGh200;
  if (Contains(name, "H200")) return Contains(name, "NVL") ? &kH200Nvl : &kH200Sxm;
  if (Contains(name, "H100")) {
    if (Contains(name, "NVL")) return &kH100Nvl;
    if (Contains(name, "PCIE")) return &kH100Pcie;
    return &kH100Sxm;  // "NVIDIA H100 80GB HBM3": the SXM5 board
  }
  if (Contains(name, "A100")) return &kA100;
  if (Contains(name, "L40S")) return &kL40s;
  if (HasWordL4(name)) return &kL4;
  return nullptr;
}

double Pick(Precision precision, double fp32, double tf32, double bf16) {
  switch (precision) {
    case Precision::kFp32:
      return fp32;
    case Precision::kTf32:
      return tf32;
    case Precision::kBf16:
      return bf16;
  }
  return 0;
}

}  // namespace

std::optional<PeakTflops> DatasheetPeak(std::string_view device_name, Precision precision) {
  const DatasheetRow* row = FindRow(device_name);
  if (row == nullptr) return std::nullopt;
  PeakTflops peak;
  peak.tflops = Pick(precision, row->fp32, row->tf32, row->bf16);
  peak.source = std::string("NVIDIA ") + row->product + " datasheet, dense " +
                PrecisionName(precision) +
                (precision == Precision::kFp32 ? " (non-tensor)" : " tensor core");
  return peak;
}

std::optional<double> DatasheetBandwidthGbs(std::string_view device_name) {
  const DatasheetRow* row = FindRow(device_name);
  if (row == nullptr) return std::nullopt;
  if (row == &kA100) {
    std::string name(device_name);
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    if (Contains(name, "80GB")) return Contains(name, "PCIE") ? 1935.0 : 2039.0;
  }
  return row->bandwidth_gbs;
}

std::optional<PeakTflops> EstimatedPeak(int cc_major, int cc_minor, int sm_count, double clock_khz,
                                        Precision precision) {
  // Dense FLOPs per SM per clock (an FMA is 2 FLOPs), fp32 on the CUDA cores, tf32 and bf16 on
  // the tensor cores with fp32 accumulation; from the architecture whitepapers (A100, GA102,
  // AD102, H100, Blackwell) and checked against the datasheet rows above (e.g. H100 SXM: 132
  // SMs x 1.83 GHz x 4096 = 989 TFLOP/s bf16).
  struct Rates {
    double fp32, tf32, bf16;
  };
  Rates rates{};
  if (cc_major == 8 && cc_minor == 0) {
    rates = {128, 1024, 2048};  // A100, A30
  } else if (cc_major == 8) {
    rates = {256, 512, 1024};  // sm_86/87/89: A10, A40, L4, L40S, Orin
  } else if (cc_major == 9) {
    rates = {256, 2048, 4096};  // Hopper
  } else if (cc_major == 10 || cc_major == 11) {
    rates = {256, 4096, 8192};  // data-centre Blackwell
  } else if (cc_major >= 12) {
    rates = {256, 512, 1024};  // workstation Blackwell
  } else {
    return std::nullopt;
  }
  if (sm_count <= 0 || clock_khz <= 0) return std::nullopt;
  const double per_clock = Pick(precision, rates.fp32, rates.tf32, rates.bf16);
  PeakTflops peak;
  peak.tflops = static_cast<double>(sm_count) * clock_khz * 1e3 * per_clock / 1e12;
  peak.source = "estimate: " + std::to_string(sm_count) + " SMs x " +
                std::to_string(static_cast<long long>(clock_khz / 1e3)) + " MHz (max clock) x " +
                std::to_string(static_cast<long long>(per_clock)) + " dense " +
                PrecisionName(precision) + " FLOPs/SM/clock for sm_" + std::to_string(cc_major) +
                std::to_string(cc_minor);
  peak.estimate = true;
  return peak;
}

std::optional<PeakTflops> ResolvePeak(std::optional<double> override_tflops,
                                      std::string_view device_name, int cc_major, int cc_minor,
                                      int sm_count, double clock_khz, Precision precision) {
  if (override_tflops) return PeakTflops{*override_tflops, "--peak-tflops", false};
  if (auto peak = DatasheetPeak(device_name, precision)) return peak;
  return EstimatedPeak(cc_major, cc_minor, sm_count, clock_khz, precision);
}

}  // namespace perfwarden::cuda_train
