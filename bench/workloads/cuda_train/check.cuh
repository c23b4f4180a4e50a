// SPDX-License-Identifier: Apache-2.0
// cuda_train --check: the GPU kernels and whole training steps against the CPU reference
// (reference.h), on tiny sizes, for whoever has a GPU to verify cuda_train's correctness.
#pragma once

#include <cuda_runtime.h>

namespace perfwarden::cuda_train {

// Prints one line per check on stdout; returns the exit status (0 all passed, 4 otherwise).
int RunChecks(cudaStream_t stream);

}  // namespace perfwarden::cuda_train
