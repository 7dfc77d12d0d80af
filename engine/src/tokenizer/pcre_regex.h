#pragma once
// A compiled PCRE2 regular expression over UTF-8 text with Unicode properties (PCRE2_UTF |
// PCRE2_UCP), JIT-compiled when PCRE2 supports it. Immutable after construction, so one
// instance may be used from several threads.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

struct pcre2_real_code_8;

namespace strata::tokenizer {

class Regex {
 public:
  // `what` names the pattern in errors, e.g. "tokenizer.json: pre_tokenizer.pattern.Regex".
  // A pattern that does not compile throws with PCRE2's message and the offset.
  Regex(std::string_view pattern, std::string what);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  struct Span {
    size_t begin;
    size_t end;
    bool operator==(const Span&) const = default;
  };

  // The non-overlapping matches in `text` (which must be valid UTF-8), left to right, as
  // Oniguruma's find_iter (used by Hugging Face tokenizers) reports them: an empty match
  // right where the previous match ended is skipped.
  std::vector<Span> findAll(std::string_view text) const;

  // The end of the match that starts exactly at `pos`, or npos when there is none there.
  size_t matchAt(std::string_view text, size_t pos) const;

  static constexpr size_t npos = static_cast<size_t>(-1);

 private:
  pcre2_real_code_8* code_ = nullptr;
  std::string what_;
};

}  // namespace strata::tokenizer
