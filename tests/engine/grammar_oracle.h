#pragma once
// Test-side tools for grammars, independent of the matcher under test: a recognizer that says
// whether text is (a prefix of) a sentence of the grammar, by memoized recursive descent over
// the parsed rules, and a random-walk generator of sentences.
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "grammar/grammar_rules.h"
#include "grammar/utf8_step.h"

namespace grammar_oracle {

using strata::grammar::GrammarRules;
using strata::grammar::Symbol;

// Code points of valid UTF-8 text (the tests only build valid text).
inline std::vector<uint32_t> codePoints(const std::string& text) {
  std::vector<uint32_t> out;
  strata::grammar::Utf8Partial p;
  uint32_t c = 0;
  for (char byte : text)
    if (strata::grammar::feedUtf8(p, static_cast<uint8_t>(byte), c) ==
        strata::grammar::Utf8Result::Complete)
      out.push_back(c);
  return out;
}

inline std::string utf8(const std::vector<uint32_t>& cps) {
  std::string s;
  for (uint32_t c : cps) strata::grammar::appendUtf8(s, c);
  return s;
}

// What matching from symbol position p at input position i can do: end at each of `ends`,
// or run out of input while still matching (`prefix`).
class Recognizer {
 public:
  explicit Recognizer(const GrammarRules& g) : g_(g) {}

  // Text is a sentence (complete) or can still become one (viable).
  struct Verdict {
    bool viable = false;
    bool complete = false;
  };

  Verdict judge(const std::vector<uint32_t>& input) {
    in_ = &input;
    memo_.clear();
    Outcome root;
    for (uint32_t start : g_.alternatives[g_.root]) merge(root, sequence(start, 0));
    const bool complete =
        std::find(root.ends.begin(), root.ends.end(), input.size()) != root.ends.end();
    return {complete || root.prefix, complete};
  }

  // The length of the longest viable prefix (viability is closed under prefixes).
  size_t viableLength(const std::vector<uint32_t>& input) {
    size_t low = 0, high = input.size();  // judge(prefix of low) is viable
    while (low < high) {
      const size_t mid = (low + high + 1) / 2;
      if (judge(std::vector<uint32_t>(input.begin(), input.begin() + mid)).viable)
        low = mid;
      else
        high = mid - 1;
    }
    return low;
  }

 private:
  struct Outcome {
    std::vector<size_t> ends;
    bool prefix = false;
  };

  static void merge(Outcome& into, const Outcome& from) {
    into.prefix = into.prefix || from.prefix;
    for (size_t e : from.ends)
      if (std::find(into.ends.begin(), into.ends.end(), e) == into.ends.end())
        into.ends.push_back(e);
  }

  Outcome sequence(uint32_t p, size_t i) {
    const uint64_t key = (uint64_t{p} << 32) | i;
    if (const auto it = memo_.find(key); it != memo_.end()) return it->second;
    Outcome out;
    const Symbol& s = g_.at(p);
    if (s.kind == Symbol::Kind::End) {
      out.ends.push_back(i);
    } else if (s.kind == Symbol::Kind::Chars) {
      if (i == in_->size())
        out.prefix = true;
      else if (g_.charsAt(p).contains((*in_)[i]))
        out = sequence(p + 1, i + 1);
    } else {
      Outcome rule;
      for (uint32_t start : g_.alternatives[s.index]) merge(rule, sequence(start, i));
      out.prefix = rule.prefix;
      for (size_t e : rule.ends) merge(out, sequence(p + 1, e));
    }
    memo_[key] = out;
    return out;
  }

  const GrammarRules& g_;
  const std::vector<uint32_t>* in_ = nullptr;
  std::unordered_map<uint64_t, Outcome> memo_;
};

// Random sentences: alternatives at random until the text passes `softLength` characters,
// then the alternative that ends soonest.
class RandomWalk {
 public:
  RandomWalk(const GrammarRules& g, uint64_t seed) : g_(g), rng_(seed) {
    // Fewest characters each rule can end in (a fixpoint).
    shortest_.assign(g.rules.size(), kInfinite);
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t r = 0; r < g.rules.size(); ++r)
        for (uint32_t start : g.alternatives[r]) {
          const size_t n = alternativeLength(start);
          if (n < shortest_[r]) {
            shortest_[r] = n;
            changed = true;
          }
        }
    }
  }

  std::string sentence(size_t softLength) {
    out_.clear();
    softLength_ = softLength;
    rule(g_.root);
    return utf8(out_);
  }

 private:
  static constexpr size_t kInfinite = SIZE_MAX / 4;

  size_t alternativeLength(uint32_t p) const {
    size_t n = 0;
    for (; g_.at(p).kind != Symbol::Kind::End; ++p)
      n += g_.at(p).kind == Symbol::Kind::Chars ? 1 : shortest_[g_.at(p).index];
    return std::min(n, kInfinite);
  }

  void rule(uint32_t r) {
    const auto& alternatives = g_.alternatives[r];
    uint32_t chosen = alternatives[0];
    if (out_.size() < softLength_) {
      chosen =
          alternatives[std::uniform_int_distribution<size_t>(0, alternatives.size() - 1)(rng_)];
    } else {
      for (uint32_t start : alternatives)
        if (alternativeLength(start) < alternativeLength(chosen)) chosen = start;
    }
    for (uint32_t p = chosen; g_.at(p).kind != Symbol::Kind::End; ++p) {
      if (g_.at(p).kind == Symbol::Kind::Chars)
        out_.push_back(member(g_.charsAt(p)));
      else
        rule(g_.at(p).index);
    }
  }

  // A random member, printable ASCII when the set allows it most of the time.
  uint32_t member(const strata::grammar::CharSet& set) {
    std::uniform_int_distribution<int> coin(0, 9);
    if (coin(rng_) < 7) {
      std::vector<uint32_t> ascii;
      for (uint32_t c = 0x20; c < 0x7F; ++c)
        if (set.contains(c)) ascii.push_back(c);
      if (!ascii.empty())
        return ascii[std::uniform_int_distribution<size_t>(0, ascii.size() - 1)(rng_)];
    }
    const auto& ranges = set.ranges();
    const auto& r = ranges[std::uniform_int_distribution<size_t>(0, ranges.size() - 1)(rng_)];
    return std::uniform_int_distribution<uint32_t>(r.first, r.last)(rng_);
  }

  const GrammarRules& g_;
  std::mt19937_64 rng_;
  std::vector<size_t> shortest_;
  std::vector<uint32_t> out_;
  size_t softLength_ = 0;
};

}  // namespace grammar_oracle
