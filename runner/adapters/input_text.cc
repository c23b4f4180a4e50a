// SPDX-License-Identifier: Apache-2.0
#include "runner/adapters/input_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <system_error>

namespace perfwarden::adapters {

Result<InputText> ReadInputText(const std::filesystem::path& path) {
  InputText input;
  if (path == "-") {
    input.source = "<stdin>";
    std::ostringstream buffer;
    buffer << std::cin.rdbuf();
    if (std::cin.bad()) return InvalidArgument("cannot read standard input");
    input.text = std::move(buffer).str();
    return input;
  }
  input.source = path.string();
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (ec || !std::filesystem::exists(status)) {
    return InvalidArgument(input.source + ": cannot read: no such file");
  }
  if (std::filesystem::is_directory(status)) {
    return InvalidArgument(input.source + ": cannot read: is a directory");
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return InvalidArgument(input.source + ": cannot open: " + std::strerror(errno));
  input.text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  if (in.bad()) return InvalidArgument(input.source + ": cannot read: " + std::strerror(errno));
  return input;
}

}  // namespace perfwarden::adapters
