// SPDX-License-Identifier: Apache-2.0
// CUDA and cuBLAS errors as exceptions that name the call and the error; main() turns them into
// exit status 3, so "no GPU" and "out of memory" read the same way to a CI job.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace perfgate::cuda_train {

class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "CUDA driver version is insufficient for CUDA runtime version (cudaErrorInsufficientDriver)"
inline std::string CudaErrorText(cudaError_t error) {
  return std::string(cudaGetErrorString(error)) + " (" + cudaGetErrorName(error) + ")";
}

[[noreturn]] inline void ThrowCuda(cudaError_t error, const char* call, const char* file,
                                   int line) {
  throw CudaError(std::string(call) + " failed: " + CudaErrorText(error) + " at " + file + ":" +
                  std::to_string(line));
}

[[noreturn]] inline void ThrowCublas(cublasStatus_t status, const char* call, const char* file,
                                     int line) {
  throw CudaError(std::string(call) + " failed: " + cublasGetStatusString(status) + " (" +
                  cublasGetStatusName(status) + ") at " + file + ":" + std::to_string(line));
}

}  // namespace perfgate::cuda_train

#define PERFGATE_CUDA_CHECK(call)                                                    \
  do {                                                                               \
    const cudaError_t perfgate_error_ = (call);                                      \
    if (perfgate_error_ != cudaSuccess) {                                            \
      ::perfgate::cuda_train::ThrowCuda(perfgate_error_, #call, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)

#define PERFGATE_CUBLAS_CHECK(call)                                                     \
  do {                                                                                  \
    const cublasStatus_t perfgate_status_ = (call);                                     \
    if (perfgate_status_ != CUBLAS_STATUS_SUCCESS) {                                    \
      ::perfgate::cuda_train::ThrowCublas(perfgate_status_, #call, __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)
