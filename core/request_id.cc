// SPDX-License-Identifier: Apache-2.0
#include "core/request_id.h"

#include <cstdint>
#include <random>
#include <utility>

namespace perfwarden {
namespace {

thread_local std::string current_request_id;

}  // namespace

std::string NewRequestId() {
  thread_local std::mt19937_64 engine{(static_cast<std::uint64_t>(std::random_device{}()) << 32) ^
                                      std::random_device{}()};
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t bits = engine();
  std::string id(16, '0');
  for (char& c : id) {
    c = kHex[bits & 0xf];
    bits >>= 4;
  }
  return id;
}

const std::string& CurrentRequestId() { return current_request_id; }

ScopedRequestId::ScopedRequestId(std::string id)
    : previous_(std::exchange(current_request_id, std::move(id))) {}

ScopedRequestId::~ScopedRequestId() { current_request_id = std::move(previous_); }

}  // namespace perfwarden
