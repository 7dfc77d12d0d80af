#include "tokenizer/pre_tokenizer.h"

#include <utf8proc.h>

#include <algorithm>

#include "tokenizer/utf8.h"

namespace strata::tokenizer {

struct PreTokenizer::Step {
  PreTokenizerStep config;
  std::unique_ptr<Regex> regex;  // Split's pattern, or GPT-2's for ByteLevel with use_regex
};

namespace {

// A run of the piece and whether the pattern matched it (Hugging Face's find_matches).
struct Run {
  size_t begin;
  size_t end;
  bool isMatch;
};

std::vector<Run> runsOf(size_t length, const std::vector<Regex::Span>& matches, bool invert) {
  std::vector<Run> runs;
  size_t previous = 0;
  for (const Regex::Span& m : matches) {
    if (previous != m.begin) runs.push_back({previous, m.begin, invert});
    runs.push_back({m.begin, m.end, !invert});
    previous = m.end;
  }
  if (previous != length || runs.empty()) runs.push_back({previous, length, invert});
  return runs;
}

// Rust's char::is_numeric: general category Nd, Nl or No.
bool isNumeric(char32_t c) {
  const utf8proc_category_t category = utf8proc_category(static_cast<utf8proc_int32_t>(c));
  return category == UTF8PROC_CATEGORY_ND || category == UTF8PROC_CATEGORY_NL ||
         category == UTF8PROC_CATEGORY_NO;
}

// Digits' pattern: every numeric character is a match of its own.
std::vector<Regex::Span> numericCharacters(std::string_view text) {
  std::vector<Regex::Span> spans;
  size_t pos = 0;
  while (pos < text.size()) {
    const size_t begin = pos;
    if (isNumeric(decodeUtf8(text, pos))) spans.push_back({begin, pos});
  }
  return spans;
}

}  // namespace

std::vector<Regex::Span> splitByMatches(size_t length, const std::vector<Regex::Span>& matches,
                                        SplitBehavior behavior, bool invert) {
  const std::vector<Run> runs = runsOf(length, matches, invert);
  std::vector<Regex::Span> kept;
  bool previousMatch = false;
  switch (behavior) {
    case SplitBehavior::Isolated:
      for (const Run& r : runs) kept.push_back({r.begin, r.end});
      break;
    case SplitBehavior::Removed:
      for (const Run& r : runs)
        if (!r.isMatch) kept.push_back({r.begin, r.end});
      break;
    case SplitBehavior::Contiguous:  // consecutive runs of the same kind become one
      for (size_t i = 0; i < runs.size(); ++i) {
        if (i > 0 && runs[i].isMatch == previousMatch)
          kept.back().end = runs[i].end;
        else
          kept.push_back({runs[i].begin, runs[i].end});
        previousMatch = runs[i].isMatch;
      }
      break;
    case SplitBehavior::MergedWithPrevious:  // a match joins the run before it
      for (size_t i = 0; i < runs.size(); ++i) {
        if (i > 0 && runs[i].isMatch && !previousMatch)
          kept.back().end = runs[i].end;
        else
          kept.push_back({runs[i].begin, runs[i].end});
        previousMatch = runs[i].isMatch;
      }
      break;
    case SplitBehavior::MergedWithNext:  // a match joins the run after it
      for (size_t i = runs.size(); i-- > 0;) {
        if (i + 1 < runs.size() && runs[i].isMatch && !previousMatch)
          kept.back().begin = runs[i].begin;
        else
          kept.push_back({runs[i].begin, runs[i].end});
        previousMatch = runs[i].isMatch;
      }
      std::reverse(kept.begin(), kept.end());
      break;
  }
  return kept;
}

PreTokenizer::PreTokenizer(const std::vector<PreTokenizerStep>& steps, const std::string& source) {
  for (const PreTokenizerStep& config : steps) {
    auto step = std::make_unique<Step>();
    step->config = config;
    if (config.kind == PreTokenizerStep::Kind::Split)
      step->regex =
          std::make_unique<Regex>(config.regex, source + ": " + config.where + ".pattern");
    if (config.kind == PreTokenizerStep::Kind::ByteLevel) {
      byteLevel_ = true;
      if (config.useRegex)
        step->regex = std::make_unique<Regex>(kGpt2Pattern, source + ": " + config.where);
    }
    steps_.push_back(std::move(step));
  }
}

PreTokenizer::~PreTokenizer() = default;

void PreTokenizer::split(std::string_view text, const PieceSink& sink) const {
  if (!text.empty()) applyFrom(0, text, sink);
}

void PreTokenizer::split(std::string_view text, std::vector<std::string>& pieces) const {
  split(text, [&](std::string_view piece) { pieces.emplace_back(piece); });
}

void PreTokenizer::applyFrom(size_t index, std::string_view piece, const PieceSink& sink) const {
  if (index == steps_.size()) {
    sink(piece);
    return;
  }
  const PreTokenizerStep& c = steps_[index]->config;
  const Regex* regex = steps_[index]->regex.get();
  std::string prefixed;  // ByteLevel's piece with the added space
  std::vector<Regex::Span> kept;
  switch (c.kind) {
    case PreTokenizerStep::Kind::Split:
      kept = splitByMatches(piece.size(), regex->findAll(piece), c.behavior, c.invert);
      break;
    case PreTokenizerStep::Kind::Digits:
      kept = splitByMatches(
          piece.size(), numericCharacters(piece),
          c.individualDigits ? SplitBehavior::Isolated : SplitBehavior::Contiguous, false);
      break;
    case PreTokenizerStep::Kind::ByteLevel:
      if (c.addPrefixSpace && piece.front() != ' ') {
        prefixed.reserve(piece.size() + 1);
        prefixed.append(" ").append(piece);
        piece = prefixed;
      }
      if (regex)
        kept = splitByMatches(piece.size(), regex->findAll(piece), SplitBehavior::Isolated, false);
      else
        kept.push_back({0, piece.size()});
      break;
  }
  std::string mapped;
  for (const Regex::Span& s : kept) {
    if (s.begin == s.end) continue;
    const std::string_view part = piece.substr(s.begin, s.end - s.begin);
    if (c.kind != PreTokenizerStep::Kind::ByteLevel) {
      applyFrom(index + 1, part, sink);
      continue;
    }
    mapped.clear();
    alphabet_.encode(part, mapped);
    applyFrom(index + 1, mapped, sink);
  }
}

}  // namespace strata::tokenizer
