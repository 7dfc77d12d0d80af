#pragma once
// An error a request earns, in the OpenAI error shape:
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace strata::server {

class ApiError : public std::runtime_error {
 public:
  ApiError(int status, std::string message, std::string param = {}, std::string code = {})
      : std::runtime_error(message),
        status_(status),
        param_(std::move(param)),
        code_(std::move(code)) {}

  int status() const { return status_; }
  const std::string& param() const { return param_; }
  const std::string& code() const { return code_; }
  // "invalid_request_error", "authentication_error", ... as OpenAI names them per status.
  std::string type() const;
  nlohmann::ordered_json toJson() const;

 private:
  int status_;
  std::string param_;  // the request field at fault; empty: null
  std::string code_;   // a stable machine-readable code; empty: null
};

}  // namespace strata::server
