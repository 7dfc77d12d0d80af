// GrammarMatcher: the stacks after the tokens accepted so far, kept compact between tokens so
// that a copy (one per drafted token in speculative decoding) copies only live frames.
#include <cmath>
#include <limits>
#include <optional>

#include "grammar/byte_step.h"
#include "grammar/grammar_rules.h"
#include "grammar/token_mask.h"
#include "grammar/vocabulary.h"

namespace strata {

using grammar::ByteStepper;
using grammar::StackForest;
using grammar::StackSet;
using Role = GrammarVocabulary::Impl::Role;

struct GrammarMatcher::State {
  StackForest forest;
  StackSet set;
};

namespace {

// End tokens are allowed exactly when the text is complete, special tokens never; text tokens
// (nullopt) must be run through the grammar.
std::optional<bool> verdictByRole(Role role, bool complete) {
  switch (role) {
    case Role::End: return complete;
    case Role::Never: return false;
    case Role::Text: break;
  }
  return std::nullopt;
}

// The state after `bytes`, or false when some byte is refused. Adds frames to `forest`.
bool run(const grammar::GrammarRules& rules, StackForest& forest, StackSet& set,
         std::string_view bytes) {
  ByteStepper stepper(rules, forest);
  StackSet next;
  for (char byte : bytes) {
    if (!stepper.step(set, static_cast<uint8_t>(byte), next)) return false;
    std::swap(set, next);
  }
  return true;
}

}  // namespace

GrammarMatcher::GrammarMatcher(std::shared_ptr<const Grammar> grammar,
                               std::shared_ptr<const GrammarVocabulary> vocabulary)
    : grammar_(std::move(grammar)),
      vocabulary_(std::move(vocabulary)),
      state_(std::make_unique<State>()) {
  if (!grammar_ || !vocabulary_) throw Error("GrammarMatcher needs a grammar and a vocabulary");
  state_->set = ByteStepper(grammar_->impl().rules, state_->forest).start();
}

GrammarMatcher::GrammarMatcher(const GrammarMatcher& other)
    : grammar_(other.grammar_),
      vocabulary_(other.vocabulary_),
      state_(std::make_unique<State>(*other.state_)) {}

GrammarMatcher& GrammarMatcher::operator=(const GrammarMatcher& other) {
  if (this != &other) {
    grammar_ = other.grammar_;
    vocabulary_ = other.vocabulary_;
    state_ = std::make_unique<State>(*other.state_);
  }
  return *this;
}

GrammarMatcher::GrammarMatcher(GrammarMatcher&&) noexcept = default;
GrammarMatcher& GrammarMatcher::operator=(GrammarMatcher&&) noexcept = default;
GrammarMatcher::~GrammarMatcher() = default;

bool GrammarMatcher::complete() const { return state_->set.complete(); }

bool GrammarMatcher::finished() const { return complete() && state_->set.tops.size() == 1; }

bool GrammarMatcher::allows(int32_t token) const {
  if (const std::optional<bool> verdict = verdictByRole(vocabulary_->impl().roleOf(token), complete()))
    return *verdict;
  StackForest forest = state_->forest;
  StackSet set = state_->set;
  return run(grammar_->impl().rules, forest, set, vocabulary_->impl().bytes[token]);
}

bool GrammarMatcher::accept(int32_t token) {
  if (const std::optional<bool> verdict = verdictByRole(vocabulary_->impl().roleOf(token), complete()))
    return *verdict;  // an end token leaves the state as it is
  StackForest forest = state_->forest;
  StackSet set = state_->set;
  if (!run(grammar_->impl().rules, forest, set, vocabulary_->impl().bytes[token])) return false;
  auto next = std::make_unique<State>();
  next->set = std::move(set);
  grammar::compact(forest, next->set, next->forest);
  state_ = std::move(next);
  return true;
}

void GrammarMatcher::mask(std::span<float> logits) const {
  const GrammarVocabulary::Impl& v = vocabulary_->impl();
  std::vector<uint8_t> allowed(v.roles.size(), 0);
  grammar::TokenMaskWalk(grammar_->impl().rules, state_->forest, state_->set).run(v.trie, allowed);
  if (complete())
    for (size_t id = 0; id < v.roles.size(); ++id)
      if (v.roles[id] == Role::End) allowed[id] = 1;
  constexpr float kNever = -std::numeric_limits<float>::infinity();
  for (size_t id = 0; id < logits.size(); ++id)
    if (id >= allowed.size() || !allowed[id]) logits[id] = kNever;
}

std::string GrammarMatcher::forcedBytes(size_t maxBytes) const {
  const grammar::GrammarRules& rules = grammar_->impl().rules;
  StackForest forest = state_->forest;
  StackSet set = state_->set;
  ByteStepper stepper(rules, forest);
  std::string forced;
  StackSet next;
  while (forced.size() < maxBytes) {
    // Between characters the next one is forced when every stack wants the same single
    // character (every character a stack's top allows leads somewhere: rules can all end).
    // Inside a character, try each continuation byte.
    int choices = 0;
    uint8_t only = 0;
    if (set.utf8.remaining == 0) {
      if (set.complete()) break;
      std::optional<uint32_t> character;
      for (uint32_t top : set.tops) {
        const auto c = rules.charsAt(forest.frame(top).position).only();
        if (!c || (character && *c != *character)) {
          character.reset();
          break;
        }
        character = c;
      }
      if (!character) break;
      std::string bytes;
      grammar::appendUtf8(bytes, *character);
      only = static_cast<uint8_t>(bytes[0]);
      choices = 1;
    } else {
      for (int b = 0x80; b <= 0xBF && choices < 2; ++b)
        if (stepper.step(set, static_cast<uint8_t>(b), next)) {
          only = static_cast<uint8_t>(b);
          ++choices;
        }
    }
    if (choices != 1 || !stepper.step(set, only, next)) break;
    forced += static_cast<char>(only);
    std::swap(set, next);
  }
  return forced;
}

}  // namespace strata
