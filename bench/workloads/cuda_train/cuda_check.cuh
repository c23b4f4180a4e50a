// SPDX-License-Identifier: Apache-2.0
// CUDA and cuBLAS errors as exceptions that name the call and the error; main() turns them into
// exit status 3, so "no GPU" and "out of memory" read the same way to a CI job.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace perfwarden::cuda_train {

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

}  // namespace perfwarden::cuda_train

#define PERFWARDEN_CUDA_CHECK(call)                                                    \
  do {                                                                               \
    const cudaError_t perfwarden_error_ = (call);                                      \
    if (perfwarden_error_ != cudaSuccess) {                                            \
      ::perfwarden::cuda_train::ThrowCuda(perfwarden_error_, #call, __FILE__, __LINE__); \
    }                                                                                \
  } while (0)

#define PERFWARDEN_CUBLAS_CHECK(call)                                                     \
  do {                                                                                  \
    const cublasStatus_t perfwarden_status_ = (call);                                     \
    if (perfwarden_status_ != CUBLAS_STATUS_SUCCESS) {                                    \
      ::perfwarden::cuda_train::ThrowCublas(perfwarden_status_, #call, __FILE__, __LINE__); \
    }                                                                                   \
  } while (0)
