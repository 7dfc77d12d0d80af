#include "tokenizer/normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>

#include "strata/error.h"

namespace strata::tokenizer {
namespace {

utf8proc_option_t optionsOf(NormalizationForm form) {
  const int stable = UTF8PROC_STABLE;
  switch (form) {
    case NormalizationForm::NFC:
      return utf8proc_option_t(stable | UTF8PROC_COMPOSE);
    case NormalizationForm::NFD:
      return utf8proc_option_t(stable | UTF8PROC_DECOMPOSE);
    case NormalizationForm::NFKC:
      return utf8proc_option_t(stable | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
    case NormalizationForm::NFKD:
      return utf8proc_option_t(stable | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
  }
  return UTF8PROC_STABLE;
}

}  // namespace

Normalizer::Normalizer(std::vector<NormalizationForm> forms, std::string source)
    : forms_(std::move(forms)), source_(std::move(source)) {}

std::string Normalizer::apply(std::string_view text) const {
  std::string current(text);
  for (NormalizationForm form : forms_) {
    if (current.empty()) break;
    utf8proc_uint8_t* mapped = nullptr;
    const utf8proc_ssize_t length =
        utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(current.data()),
                     static_cast<utf8proc_ssize_t>(current.size()), &mapped, optionsOf(form));
    if (length < 0) throw Error(source_ + ": normalizer failed: " + utf8proc_errmsg(length));
    const std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owner(mapped, &std::free);
    current.assign(reinterpret_cast<const char*>(mapped), static_cast<size_t>(length));
  }
  return current;
}

}  // namespace strata::tokenizer
