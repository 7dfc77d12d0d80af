#include "tokenizer/pcre_regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <memory>

#include "strata/error.h"
#include "tokenizer/utf8.h"

namespace strata::tokenizer {
namespace {

std::string errorText(int code) {
  PCRE2_UCHAR buffer[256];
  if (pcre2_get_error_message(code, buffer, sizeof buffer) < 0)
    return "PCRE2 error " + std::to_string(code);
  return reinterpret_cast<const char*>(buffer);
}

struct MatchDataDeleter {
  void operator()(pcre2_match_data* data) const { pcre2_match_data_free(data); }
};
struct MatchContextDeleter {
  void operator()(pcre2_match_context* context) const { pcre2_match_context_free(context); }
};
struct JitStackDeleter {
  void operator()(pcre2_jit_stack* stack) const { pcre2_jit_stack_free(stack); }
};

// The matcher's state for one findAll/matchAt call: PCRE2 match data is not shareable between
// threads, so each call has its own. A larger JIT stack is set up only when a subject needs it.
class Matcher {
 public:
  Matcher(pcre2_code* code, const std::string& what)
      : code_(code), what_(what), data_(pcre2_match_data_create_from_pattern(code, nullptr)) {
    if (!data_) throw Error(what_ + ": out of memory for regex match data");
  }

  // Returns false for no match; the match is then at ovector()[0..1].
  bool match(std::string_view text, size_t start, uint32_t options) {
    const auto subject = reinterpret_cast<PCRE2_SPTR>(text.data());
    // Our callers check UTF-8 validity once per text; PCRE2 would otherwise re-check the
    // whole subject on every call.
    options |= PCRE2_NO_UTF_CHECK;
    int rc = pcre2_match(code_, subject, text.size(), start, options, data_.get(), context_.get());
    if (rc == PCRE2_ERROR_JIT_STACKLIMIT && !stack_) {
      stack_.reset(pcre2_jit_stack_create(64 * 1024, 64 * 1024 * 1024, nullptr));
      context_.reset(pcre2_match_context_create(nullptr));
      if (!stack_ || !context_) throw Error(what_ + ": out of memory for the regex JIT stack");
      pcre2_jit_stack_assign(context_.get(), nullptr, stack_.get());
      rc = pcre2_match(code_, subject, text.size(), start, options, data_.get(), context_.get());
    }
    if (rc == PCRE2_ERROR_NOMATCH) return false;
    if (rc < 0) throw Error(what_ + ": regex matching failed: " + errorText(rc));
    return true;
  }

  Regex::Span span() const {
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(data_.get());
    return {static_cast<size_t>(ov[0]), static_cast<size_t>(ov[1])};
  }

 private:
  pcre2_code* code_;
  const std::string& what_;
  std::unique_ptr<pcre2_match_data, MatchDataDeleter> data_;
  std::unique_ptr<pcre2_match_context, MatchContextDeleter> context_;
  std::unique_ptr<pcre2_jit_stack, JitStackDeleter> stack_;
};

size_t nextCharacter(std::string_view text, size_t pos) { return pos + scanUtf8(text, pos).length; }

}  // namespace

Regex::Regex(std::string_view pattern, std::string what) : what_(std::move(what)) {
  int code = 0;
  PCRE2_SIZE offset = 0;
  code_ = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                        PCRE2_UTF | PCRE2_UCP, &code, &offset, nullptr);
  if (!code_)
    throw Error(what_ + ": the regex '" + std::string(pattern) +
                "' does not compile: " + errorText(code) + " at offset " + std::to_string(offset));
  // JIT is an optimisation only: when PCRE2 was built without it, pcre2_match interprets.
  pcre2_jit_compile(code_, PCRE2_JIT_COMPLETE);
}

Regex::~Regex() { pcre2_code_free(code_); }

std::vector<Regex::Span> Regex::findAll(std::string_view text) const {
  std::vector<Span> spans;
  Matcher matcher(code_, what_);
  size_t pos = 0;
  size_t lastEnd = npos;
  while (pos <= text.size() && matcher.match(text, pos, 0)) {
    const Span m = matcher.span();
    if (m.begin == m.end) {
      // Oniguruma drops an empty match touching the previous one, then moves on a character.
      if (m.end != lastEnd) spans.push_back(m);
      lastEnd = m.end;
      if (m.end >= text.size()) break;
      pos = nextCharacter(text, m.end);
      continue;
    }
    spans.push_back(m);
    lastEnd = pos = m.end;
  }
  return spans;
}

size_t Regex::matchAt(std::string_view text, size_t pos) const {
  Matcher matcher(code_, what_);
  if (!matcher.match(text, pos, PCRE2_ANCHORED)) return npos;
  return matcher.span().end;
}

}  // namespace strata::tokenizer
