#pragma once
// Unicode normalization forms applied before pre-tokenization (utf8proc).
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer_config.h"

namespace strata::tokenizer {

class Normalizer {
 public:
  Normalizer(std::vector<NormalizationForm> forms, std::string source);

  bool empty() const { return forms_.empty(); }

  // `text` must be valid UTF-8.
  std::string apply(std::string_view text) const;

 private:
  std::vector<NormalizationForm> forms_;
  std::string source_;
};

}  // namespace strata::tokenizer
