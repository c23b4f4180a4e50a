// SPDX-License-Identifier: Apache-2.0
#include "options.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string_view>

namespace perfwarden::cuda_train {
namespace {

bool ParseInt(std::string_view text, std::int64_t* out) {
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), *out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

bool ParseDouble(std::string_view text, double* out) {
  // std::from_chars for double needs GCC 11; strtod is enough for a command line.
  const std::string copy(text);
  char* end = nullptr;
  *out = std::strtod(copy.c_str(), &end);
  return !copy.empty() && end == copy.c_str() + copy.size() && std::isfinite(*out);
}

}  // namespace

std::string Usage() {
  return R"(cuda_train: trains an MLP on synthetic data with cuBLAS and reports perfwarden JSON lines.

Usage: cuda_train [options]

Model and data:
  --widths LIST        input,hidden...,classes (default 1024,4096,4096,1024)
  --width W --depth D  D layers of width W instead of --widths; --classes C (default W)
  --batch B            samples per step (default 256)
  --precision P        fp32 | tf32 | bf16 (default bf16: bf16 GEMMs, fp32 master weights)
  --seed S             seed of the data, the teacher and the initial weights (default 1)
Optimizer (AdamW, decoupled weight decay on weights, not biases):
  --lr X               learning rate (default 1e-3)
  --weight-decay X     (default 0.01)
  --loss-scale S       none | dynamic | a number (default none; bf16 needs none)
Measurement:
  --steps N            steps in all, warm-up included (default 200)
  --warmup-max M       at most M warm-up steps (default 50, or half of --steps if less;
                       must be below --steps)
  --warmup-window K    warm-up ends once the last K step times... (default 10)
  --warmup-cv X        ...have a coefficient of variation <= X (default 0.05)
  --peak-tflops X      dense peak for MFU instead of the datasheet table or estimate
  --device N           CUDA device (default 0)
Modes:
  --plan               print params, FLOPs and the memory plan as JSON lines; no GPU needed
  --check              check the kernels and one training step against a CPU reference
  --help               this text

Output: perfwarden JSON lines v1 on stdout (docs/gpu.md), logs on stderr.
Exit status: 0 ok, 2 bad usage, 3 no usable GPU or a CUDA/cuBLAS error, 4 --check failed or
the loss is not finite.
)";
}

std::optional<Options> ParseOptions(int argc, const char* const* argv, std::string* error) {
  Options options;
  std::optional<std::int64_t> width;
  std::optional<std::int64_t> depth;
  std::optional<std::int64_t> classes;
  bool widths_given = false;
  bool warmup_max_given = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view arg = argv[i];
    std::string_view value;
    bool has_value = false;
    if (const std::size_t eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != arg.npos) {
      value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
      has_value = true;
    }
    const auto flag = [&](Mode mode) {
      if (has_value) {
        *error = std::string(arg) + " takes no value";
        return false;
      }
      options.mode = mode;
      return true;
    };
    if (arg == "--help" || arg == "-h") {
      if (!flag(Mode::kHelp)) return std::nullopt;
      return options;  // --help wins over anything else on the line
    }
    if (arg == "--plan" || arg == "--check") {
      if (!flag(arg == "--plan" ? Mode::kPlan : Mode::kCheck)) return std::nullopt;
      continue;
    }
    static constexpr std::string_view kValued[] = {
        "--widths",     "--width",         "--depth",      "--classes",
        "--batch",      "--steps",         "--precision",  "--seed",
        "--lr",         "--weight-decay",  "--loss-scale", "--device",
        "--warmup-max", "--warmup-window", "--warmup-cv",  "--peak-tflops"};
    if (std::find(std::begin(kValued), std::end(kValued), arg) == std::end(kValued)) {
      *error = "unknown option " + std::string(arg) + " (see --help)";
      return std::nullopt;
    }
    if (!has_value) {
      if (i + 1 >= argc) {
        *error = std::string(arg) + " needs a value (see --help)";
        return std::nullopt;
      }
      value = argv[++i];
    }
    const std::string name(arg);
    std::int64_t n = 0;
    double x = 0;
    const auto integer = [&](std::int64_t min, std::int64_t max) {
      if (!ParseInt(value, &n) || n < min || n > max) {
        *error = name + ": \"" + std::string(value) + "\" is not an integer in [" +
                 std::to_string(min) + ", " + std::to_string(max) + "]";
        return false;
      }
      return true;
    };
    const auto positive = [&](bool allow_zero) {
      if (!ParseDouble(value, &x) || x < 0 || (x == 0 && !allow_zero)) {
        *error = name + ": \"" + std::string(value) + "\" is not a " +
                 (allow_zero ? "non-negative" : "positive") + " number";
        return false;
      }
      return true;
    };
    constexpr std::int64_t kMaxDim = 1LL << 24;
    if (name == "--widths") {
      auto widths = ParseWidths(value, error);
      if (!widths) {
        *error = "--widths: " + *error;
        return std::nullopt;
      }
      options.widths = *widths;
      widths_given = true;
    } else if (name == "--width") {
      if (!integer(1, kMaxDim)) return std::nullopt;
      width = n;
    } else if (name == "--depth") {
      if (!integer(1, 1000)) return std::nullopt;
      depth = n;
    } else if (name == "--classes") {
      if (!integer(2, kMaxDim)) return std::nullopt;
      classes = n;
    } else if (name == "--batch") {
      if (!integer(1, kMaxDim)) return std::nullopt;
      options.batch = n;
    } else if (name == "--steps") {
      if (!integer(1, 100'000'000)) return std::nullopt;
      options.steps = n;
    } else if (name == "--precision") {
      auto precision = ParsePrecision(value);
      if (!precision) {
        *error = "--precision: \"" + std::string(value) + "\" is not fp32, tf32 or bf16";
        return std::nullopt;
      }
      options.precision = *precision;
    } else if (name == "--seed") {
      if (!integer(0, INT64_MAX)) return std::nullopt;
      options.seed = static_cast<std::uint64_t>(n);
    } else if (name == "--lr") {
      if (!positive(false)) return std::nullopt;
      options.lr = x;
    } else if (name == "--weight-decay") {
      if (!positive(true)) return std::nullopt;
      options.weight_decay = x;
    } else if (name == "--loss-scale") {
      if (value == "none") {
        options.loss_scale_mode = LossScaleMode::kNone;
        options.loss_scale = 1;
      } else if (value == "dynamic") {
        options.loss_scale_mode = LossScaleMode::kDynamic;
        options.loss_scale = 65536;
      } else {
        if (!positive(false)) return std::nullopt;
        options.loss_scale_mode = LossScaleMode::kStatic;
        options.loss_scale = x;
      }
    } else if (name == "--device") {
      if (!integer(0, 1023)) return std::nullopt;
      options.device = static_cast<int>(n);
    } else if (name == "--warmup-max") {
      if (!integer(0, 100'000'000)) return std::nullopt;
      options.warmup_max = n;
      warmup_max_given = true;
    } else if (name == "--warmup-window") {
      if (!integer(2, 100'000)) return std::nullopt;
      options.warmup_window = static_cast<int>(n);
    } else if (name == "--warmup-cv") {
      if (!positive(false)) return std::nullopt;
      options.warmup_cv = x;
    } else if (name == "--peak-tflops") {
      if (!positive(false)) return std::nullopt;
      options.peak_tflops = x;
    }
  }
  if (width || depth || classes) {
    if (widths_given) {
      *error = "--widths and --width/--depth/--classes are alternatives; give one";
      return std::nullopt;
    }
    if (!width || !depth) {
      *error = "--width and --depth go together";
      return std::nullopt;
    }
    options.widths = WidthsFromDepth(*width, *depth, classes.value_or(*width));
  }
  if (options.widths.back() < 2) {
    *error = "need at least two classes";
    return std::nullopt;
  }
  // The default cap leaves at least half of a short run measured.
  if (!warmup_max_given) options.warmup_max = std::min(options.warmup_max, options.steps / 2);
  if (options.mode == Mode::kTrain && options.warmup_max >= options.steps) {
    *error = "--warmup-max (" + std::to_string(options.warmup_max) + ") must be below --steps (" +
             std::to_string(options.steps) + ") so that some steps are measured";
    return std::nullopt;
  }
  return options;
}

}  // namespace perfwarden::cuda_train
