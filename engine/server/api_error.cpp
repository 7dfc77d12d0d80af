#include "api_error.h"

namespace strata::server {

std::string ApiError::type() const {
  switch (status_) {
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 429:
      return "rate_limit_error";
    case 504:
      return "timeout_error";
    default:
      return status_ >= 500 ? "server_error" : "invalid_request_error";
  }
}

nlohmann::ordered_json ApiError::toJson() const {
  using Json = nlohmann::ordered_json;
  return {{"error",
           {{"message", what()},
            {"type", type()},
            {"param", param_.empty() ? Json(nullptr) : Json(param_)},
            {"code", code_.empty() ? Json(nullptr) : Json(code_)}}}};
}

}  // namespace strata::server
