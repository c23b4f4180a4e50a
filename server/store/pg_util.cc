// SPDX-License-Identifier: Apache-2.0
#include "server/store/pg_util.h"

#include <openssl/evp.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>

#include "wire/validate.h"

namespace perfwarden::store::pgutil {

std::string Rfc3339Sql(std::string_view column) {
  return "to_char(" + std::string(column) +
         " AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"')";
}

std::string TextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += '"';
    for (char c : items[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

std::string Float8Array(const std::vector<double>& items) {
  std::string out = "{";
  out.reserve(items.size() * 12 + 2);
  char buffer[64];
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    const double v = items[i];
    if (std::isnan(v)) {
      out += "NaN";
    } else if (std::isinf(v)) {
      out += v > 0 ? "Infinity" : "-Infinity";
    } else {
      auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), v);
      out.append(buffer, end);
    }
  }
  out += '}';
  return out;
}

std::vector<std::string> ParseArray(std::string_view text) {
  std::vector<std::string> out;
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') return out;
  text = text.substr(1, text.size() - 2);
  size_t i = 0;
  while (i < text.size()) {
    std::string item;
    if (text[i] == '"') {
      ++i;
      while (i < text.size() && text[i] != '"') {
        if (text[i] == '\\' && i + 1 < text.size()) ++i;
        item += text[i++];
      }
      ++i;  // closing quote
    } else {
      while (i < text.size() && text[i] != ',') item += text[i++];
    }
    out.push_back(std::move(item));
    ++i;  // comma
  }
  return out;
}

bool AppendFloat8ArraySend(std::string_view hex, std::vector<double>& out) {
  if (hex.size() < 2 || hex[0] != '\\' || hex[1] != 'x' || hex.size() % 2 != 0) return false;
  hex.remove_prefix(2);
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  size_t at = 0;  // in bytes
  const size_t size = hex.size() / 2;
  bool ok = true;
  // Big-endian integers, as array_send writes them.
  auto read = [&](int bytes) -> uint64_t {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i, ++at) {
      const int hi = nibble(hex[2 * at]);
      const int lo = nibble(hex[2 * at + 1]);
      if (hi < 0 || lo < 0) ok = false;
      v = (v << 8) | static_cast<uint64_t>((hi << 4) | lo);
    }
    return v;
  };
  constexpr uint64_t kFloat8Oid = 701;
  if (size < 12) return false;
  const uint64_t ndim = read(4);
  const uint64_t has_nulls = read(4);
  const uint64_t element_type = read(4);
  if (!ok || element_type != kFloat8Oid || has_nulls != 0 || ndim > 1) return false;
  if (ndim == 0) return size == 12;  // '{}'
  if (size < 20) return false;
  const uint64_t count = read(4);
  read(4);  // lower bound
  if (!ok || size != 20 + count * 12) return false;
  out.reserve(out.size() + count);
  for (uint64_t i = 0; i < count; ++i) {
    if (read(4) != 8) return false;
    const uint64_t bits = read(8);
    double v = 0;
    std::memcpy(&v, &bits, sizeof v);
    out.push_back(v);
  }
  return ok;
}

std::vector<double> ParseFloat8Array(std::string_view text) {
  std::vector<double> out;
  if (text.size() < 2) return out;
  const char* p = text.data() + 1;
  const char* end = text.data() + text.size() - 1;
  while (p < end) {
    double v = 0;
    auto [next, ec] = std::from_chars(p, end, v);
    if (ec != std::errc()) {
      // Only NaN/Infinity can get here (the schema keeps them out); strtod knows them.
      v = std::strtod(std::string(p, static_cast<size_t>(std::find(p, end, ',') - p)).c_str(),
                      nullptr);
      next = std::find(p, end, ',');
    }
    out.push_back(v);
    p = next + 1;
  }
  return out;
}

bool IsStorableRfc3339(std::string_view text) {
  const std::optional<wire::Rfc3339Time> time = wire::ParseRfc3339(text);
  return time && time->second <= 59;
}

std::string HexEncode(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out += kHex[c >> 4];
    out += kHex[c & 15];
  }
  return out;
}

bool HexDecode(std::string_view hex, std::string* out) {
  if (hex.size() % 2 != 0) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out->clear();
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

std::string Sha256Hex(std::string_view text) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(text.data(), text.size(), digest, &length, EVP_sha256(), nullptr);
  return HexEncode(std::string_view(reinterpret_cast<const char*>(digest), length));
}

}  // namespace perfwarden::store::pgutil
