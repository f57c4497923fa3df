// SPDX-License-Identifier: MIT
// The one function of the {fmt} library that Kineto's public headers use
// (fmt::format with "{}" fields, in GenericTraceActivity.h): the guest's
// libtorch-dev ships those headers but not {fmt}'s. Only NeuronProfiler.cpp
// sees this directory (Makefile).
#pragma once

#include <sstream>
#include <string>
#include <string_view>

namespace fmt {
namespace detail {

inline void format_to(std::ostringstream& out, std::string_view f) {
  out << f;
}

template <typename T, typename... Rest>
void format_to(std::ostringstream& out, std::string_view f, const T& value,
               const Rest&... rest) {
  size_t at = f.find("{}");
  if (at == std::string_view::npos) {
    out << f;
    return;
  }
  out << f.substr(0, at) << value;
  format_to(out, f.substr(at + 2), rest...);
}

}  // namespace detail

template <typename... Args>
std::string format(std::string_view f, const Args&... args) {
  std::ostringstream out;
  detail::format_to(out, f, args...);
  return out.str();
}

}  // namespace fmt
