#pragma once
// The one error type the engine throws. Every message names the file, tensor or field at
// fault and what was expected, so a user can act on it. The library never calls exit().
#include <stdexcept>
#include <string>

namespace strata {

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace strata
