// SPDX-License-Identifier: Apache-2.0
// cuda_train: trains an MLP on a synthetic, learnable task with cuBLAS and this folder's kernels,
// and reports each step and a summary in perfwarden's JSON-lines protocol (docs/gpu.md) on
// stdout. Logs go to stderr. See --help, and docs/gpu.md for what every number means.
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "check.cuh"
#include "cuda_check.cuh"
#include "device_peaks.h"
#include "json_lines.h"
#include "mlp.cuh"
#include "model_math.h"
#include "options.h"

namespace perfwarden::cuda_train {
namespace {

// One protocol line, flushed at once so that a reader following the output sees every step as
// it ends.
void Emit(const std::string& line) {
  std::fputs(line.c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
}

void EmitMemory(const MemoryPlan& memory) {
  Emit(MetricLine("peak_memory_bytes", static_cast<double>(memory.total()), "bytes", "lower"));
  Emit(MetricLine("memory_params_bytes", static_cast<double>(memory.params), "bytes", "lower"));
  Emit(MetricLine("memory_grads_bytes", static_cast<double>(memory.grads), "bytes", "lower"));
  Emit(MetricLine("memory_optimizer_bytes", static_cast<double>(memory.optimizer), "bytes",
                  "lower"));
  Emit(MetricLine("memory_activations_bytes", static_cast<double>(memory.activations), "bytes",
                  "lower"));
  Emit(MetricLine("memory_workspace_bytes", static_cast<double>(memory.workspace), "bytes",
                  "lower"));
}

void EmitShape(const Options& options, const StepFlops& flops) {
  Emit(InfoLine("precision", PrecisionName(options.precision)));
  Emit(InfoLine("widths", FormatWidths(options.widths)));
  Emit(InfoLine("batch", static_cast<double>(options.batch)));
  Emit(InfoLine("flops_counted", "GEMMs only: forward, dW, and dX for every layer but the first"));
  Emit(InfoLine("flops_forward", flops.forward));
  Emit(InfoLine("flops_backward", flops.backward_weights + flops.backward_inputs));
  Emit(InfoLine("memory_accounting",
                "bytes requested by cuda_train's allocator (cudaMalloc), per category; all "
                "allocated before the first step, so their sum is the peak"));
}

// --plan: the analytic numbers, without touching a GPU.
int Plan(const Options& options) {
  const ModelShape shape = options.shape();
  const StepFlops flops = FlopsPerStep(shape);
  Emit(InfoLine("mode", "plan"));
  EmitShape(options, flops);
  Emit(MetricLine("params", static_cast<double>(ParamCount(shape)), "count", "lower"));
  Emit(MetricLine("flops_per_step", flops.total(), "flop", "lower"));
  Emit(MetricLine("bytes_per_step", BytesPerStep(shape), "bytes", "lower"));
  EmitMemory(PlanMemory(shape, kCublasWorkspaceBytes));
  Emit(EndLine());
  return 0;
}

struct DeviceInfo {
  cudaDeviceProp props{};
  int clock_khz = 0;
};

template <typename T>
int Train(const Options& options, const DeviceInfo& device, cudaStream_t stream) {
  const ModelShape shape = options.shape();
  const StepFlops flops = FlopsPerStep(shape);
  const MemoryPlan plan = PlanMemory(shape, kCublasWorkspaceBytes);
  const auto peak =
      ResolvePeak(options.peak_tflops, device.props.name, device.props.major, device.props.minor,
                  device.props.multiProcessorCount, device.clock_khz, options.precision);
  EmitShape(options, flops);
  Emit(InfoLine("seed", static_cast<double>(options.seed)));
  Emit(InfoLine("steps_max", static_cast<double>(options.steps)));
  Emit(InfoLine("warmup_rule", "CV of the last " + std::to_string(options.warmup_window) +
                                   " step times <= " + JsonNumber(options.warmup_cv) +
                                   ", at most " + std::to_string(options.warmup_max) + " steps"));
  if (peak) {
    Emit(InfoLine("peak_tflops", peak->tflops));
    Emit(InfoLine("peak_tflops_source", peak->source));
    // As metrics too: with bytes_per_step they place the step on the device's roofline.
    Emit(MetricLine("peak_tflops", peak->tflops, "TFLOP/s", "higher"));
  } else {
    Emit(InfoLine("peak_tflops_source", "unknown device: no MFU (give --peak-tflops)"));
  }

  std::size_t free_before = 0;
  std::size_t total = 0;
  PERFWARDEN_CUDA_CHECK(cudaMemGetInfo(&free_before, &total));
  Mlp<T> mlp(ConfigFrom(options), stream);
  std::size_t free_after = 0;
  PERFWARDEN_CUDA_CHECK(cudaMemGetInfo(&free_after, &total));
  // What the device lost, as a cross-check of the accounting: adds cuBLAS's own handle state and
  // the allocator's rounding (2 MiB pages), so it is at least the accounted total.
  Emit(InfoLine("device_memory_used_bytes", static_cast<double>(free_before - free_after)));
  const MemoryPlan& used = mlp.memory();
  if (used.params != plan.params || used.grads != plan.grads || used.optimizer != plan.optimizer ||
      used.activations != plan.activations || used.workspace != plan.workspace) {
    std::fprintf(stderr, "cuda_train: warning: allocated %lld bytes, the plan says %lld\n",
                 static_cast<long long>(used.total()), static_cast<long long>(plan.total()));
  }

  // Events around each whole step (forward, backward, optimizer); the batch is generated before
  // the start event, like a data loader's work. The host reads step i - kLag's time and loss
  // after queueing step i: it stays up to kLag steps ahead, so that neither waiting for a result
  // nor launching kernels leaves the GPU idle between or inside steps.
  constexpr int kLag = 3;
  constexpr int kSlots = kLag + 1;
  cudaEvent_t start[kSlots], stop[kSlots], copied[kSlots];
  for (int s = 0; s < kSlots; ++s) {
    PERFWARDEN_CUDA_CHECK(cudaEventCreate(&start[s]));
    PERFWARDEN_CUDA_CHECK(cudaEventCreate(&stop[s]));
    PERFWARDEN_CUDA_CHECK(cudaEventCreateWithFlags(&copied[s], cudaEventDisableTiming));
  }
  float* host_loss = nullptr;
  PERFWARDEN_CUDA_CHECK(cudaMallocHost(&host_loss, kSlots * sizeof(float)));

  SteadyState steady(options.warmup_window, options.warmup_cv, options.warmup_max);
  std::vector<double> measured;
  std::vector<double> losses;
  const double batch = static_cast<double>(options.batch);
  const auto report = [&](std::int64_t step) {
    const int slot = static_cast<int>(step % kSlots);
    PERFWARDEN_CUDA_CHECK(cudaEventSynchronize(copied[slot]));
    float ms = 0;
    PERFWARDEN_CUDA_CHECK(cudaEventElapsedTime(&ms, start[slot], stop[slot]));
    const double seconds = static_cast<double>(ms) / 1e3;
    const double loss = static_cast<double>(host_loss[slot]);
    const bool was_steady = steady.steady();
    const bool warmup = steady.Record(seconds);
    if (!warmup) measured.push_back(seconds);
    losses.push_back(loss);
    Emit(StepLine(step, warmup, seconds,
                  {{"loss", loss},
                   {"samples_per_s", batch / seconds},
                   {"tflops", flops.total() / seconds / 1e12}}));
    if (!was_steady && steady.steady()) {
      std::fprintf(stderr, "cuda_train: warm-up ended after %lld steps (%s)\n",
                   static_cast<long long>(steady.warmup_steps()), steady.reason().c_str());
    }
  };
  for (std::int64_t step = 0; step < options.steps; ++step) {
    const int slot = static_cast<int>(step % kSlots);
    mlp.GenerateBatch(step);
    PERFWARDEN_CUDA_CHECK(cudaEventRecord(start[slot], stream));
    mlp.Step();
    PERFWARDEN_CUDA_CHECK(cudaEventRecord(stop[slot], stream));
    PERFWARDEN_CUDA_CHECK(cudaMemcpyAsync(&host_loss[slot], mlp.loss(), sizeof(float),
                                        cudaMemcpyDeviceToHost, stream));
    PERFWARDEN_CUDA_CHECK(cudaEventRecord(copied[slot], stream));
    if (step >= kLag) report(step - kLag);
  }
  for (std::int64_t step = std::max<std::int64_t>(options.steps - kLag, 0); step < options.steps;
       ++step) {
    report(step);
  }
  TrainState state{};
  PERFWARDEN_CUDA_CHECK(cudaMemcpy(&state, mlp.state(), sizeof state, cudaMemcpyDeviceToHost));
  for (int s = 0; s < kSlots; ++s) {
    cudaEventDestroy(start[s]);
    cudaEventDestroy(stop[s]);
    cudaEventDestroy(copied[s]);
  }
  cudaFreeHost(host_loss);

  double seconds = 0;
  for (const double t : measured) seconds += t;
  const double n = static_cast<double>(measured.size());
  const double tflops = flops.total() * n / seconds / 1e12;
  // The loss of one fresh batch is noisy: the final loss is the mean of the last ten steps.
  const std::size_t tail = std::min<std::size_t>(10, losses.size());
  double final_loss = 0;
  for (std::size_t i = losses.size() - tail; i < losses.size(); ++i) final_loss += losses[i];
  final_loss /= static_cast<double>(tail);
  const double initial_loss = losses.front();

  // JSON has no NaN or infinity: a metric that is not finite (a diverged loss) is left out and
  // said on stderr; the exit status then says the run failed.
  const auto metric = [](const char* name, double value, const char* unit, const char* direction) {
    if (std::isfinite(value)) {
      Emit(MetricLine(name, value, unit, direction));
    } else {
      std::fprintf(stderr, "cuda_train: %s is not finite; not reported\n", name);
    }
  };
  metric("samples_per_s", batch * n / seconds, "samples/s", "higher");
  metric("step_time_p50", Percentile(measured, 50), "s", "lower");
  metric("step_time_p95", Percentile(measured, 95), "s", "lower");
  metric("step_time_p99", Percentile(measured, 99), "s", "lower");
  metric("params", static_cast<double>(ParamCount(shape)), "count", "lower");
  metric("flops_per_step", flops.total(), "flop", "lower");
  metric("bytes_per_step", BytesPerStep(shape), "bytes", "lower");
  if (const auto bandwidth = DatasheetBandwidthGbs(device.props.name)) {
    metric("peak_bandwidth_gbs", *bandwidth, "GB/s", "higher");
  }
  metric("tflops", tflops, "TFLOP/s", "higher");
  if (peak) metric("mfu", tflops / peak->tflops, "ratio", "higher");
  EmitMemory(used);
  metric("initial_loss", initial_loss, "nats", "lower");
  metric("final_loss", final_loss, "nats", "lower");
  metric("warmup_steps", static_cast<double>(steady.warmup_steps()), "count", "lower");
  if (options.loss_scale_mode != LossScaleMode::kNone) {
    Emit(InfoLine("loss_scale_final", static_cast<double>(state.loss_scale)));
    Emit(InfoLine("skipped_steps", static_cast<double>(state.skipped)));
  }
  Emit(EndLine());

  std::fprintf(stderr, "cuda_train: loss %.4f -> %.4f; %.1f samples/s, %.1f TFLOP/s\n",
               initial_loss, final_loss, batch * n / seconds, tflops);
  if (!std::isfinite(initial_loss) || !std::isfinite(final_loss)) {
    std::fprintf(stderr,
                 "cuda_train: error: the loss is not finite (diverged; try a lower --lr "
                 "or --loss-scale dynamic)\n");
    return 4;
  }
  if (final_loss >= initial_loss) {
    std::fprintf(stderr, "cuda_train: warning: the loss did not fall (too few steps?)\n");
  }
  return 0;
}

int Run(const Options& options) {
  int count = 0;
  if (const cudaError_t error = cudaGetDeviceCount(&count); error != cudaSuccess) {
    std::fprintf(stderr, "cuda_train: no usable CUDA device: cudaGetDeviceCount failed: %s\n",
                 CudaErrorText(error).c_str());
    return 3;
  }
  if (options.device >= count) {
    std::fprintf(stderr, "cuda_train: no CUDA device %d (this machine has %d)\n", options.device,
                 count);
    return 3;
  }
  PERFWARDEN_CUDA_CHECK(cudaSetDevice(options.device));
  DeviceInfo device;
  PERFWARDEN_CUDA_CHECK(cudaGetDeviceProperties(&device.props, options.device));
  PERFWARDEN_CUDA_CHECK(
      cudaDeviceGetAttribute(&device.clock_khz, cudaDevAttrClockRate, options.device));
  Emit(InfoLine("device", device.props.name));
  Emit(InfoLine("compute_capability",
                std::to_string(device.props.major) + "." + std::to_string(device.props.minor)));
  Emit(InfoLine("sm_count", static_cast<double>(device.props.multiProcessorCount)));
  Emit(InfoLine("device_memory_bytes", static_cast<double>(device.props.totalGlobalMem)));
  int runtime = 0;
  PERFWARDEN_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  Emit(InfoLine("cuda_runtime",
                std::to_string(runtime / 1000) + "." + std::to_string(runtime % 1000 / 10)));

  // A blocking stream: ordered with the legacy default stream's cudaMemcpy, which --check uses
  // for its uploads and downloads.
  cudaStream_t stream = nullptr;
  PERFWARDEN_CUDA_CHECK(cudaStreamCreate(&stream));
  int status = 0;
  if (options.mode == Mode::kCheck) {
    status = RunChecks(stream);
  } else if (options.precision == Precision::kBf16) {
    status = Train<__nv_bfloat16>(options, device, stream);
  } else {
    status = Train<float>(options, device, stream);
  }
  cudaStreamDestroy(stream);
  return status;
}

}  // namespace
}  // namespace perfwarden::cuda_train

int main(int argc, char** argv) {
  using namespace perfwarden::cuda_train;
  std::string error;
  const auto options = ParseOptions(argc, argv, &error);
  if (!options) {
    std::fprintf(stderr, "cuda_train: %s\n", error.c_str());
    return 2;
  }
  if (options->mode == Mode::kHelp) {
    std::fputs(Usage().c_str(), stdout);
    return 0;
  }
  if (options->mode == Mode::kPlan) return Plan(*options);
  try {
    return Run(*options);
  } catch (const CudaError& e) {
    std::fprintf(stderr, "cuda_train: CUDA error: %s\n", e.what());
    return 3;
  }
}
