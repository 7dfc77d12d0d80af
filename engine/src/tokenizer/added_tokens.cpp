#include "tokenizer/added_tokens.h"

#include <algorithm>

namespace strata::tokenizer {

void AddedTokens::Trie::insert(std::string_view pattern, int32_t token) {
  if (pattern.empty()) return;
  int32_t node = 0;
  for (char c : pattern) {
    const auto byte = static_cast<unsigned char>(c);
    auto& children = nodes[node].children;
    auto it =
        std::find_if(children.begin(), children.end(), [&](auto& e) { return e.first == byte; });
    if (it != children.end()) {
      node = it->second;
    } else {
      const auto child = static_cast<int32_t>(nodes.size());
      nodes[node].children.emplace_back(byte, child);
      nodes.emplace_back();
      node = child;
    }
  }
  if (nodes[node].token < 0) nodes[node].token = token;  // the first of equal patterns wins
  firstByte[static_cast<unsigned char>(pattern[0])] = true;
}

std::pair<int32_t, size_t> AddedTokens::Trie::longestAt(std::string_view text, size_t pos) const {
  std::pair<int32_t, size_t> best{-1, 0};
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    const auto& children = nodes[node].children;
    auto it =
        std::find_if(children.begin(), children.end(), [&](auto& e) { return e.first == byte; });
    if (it == children.end()) break;
    node = it->second;
    if (nodes[node].token >= 0) best = {nodes[node].token, i + 1 - pos};
  }
  return best;
}

AddedTokens::AddedTokens(const std::vector<AddedTokenConfig>& tokens, const Normalizer& normalizer)
    : tokens_(tokens),
      wordCharacter_(std::make_unique<Regex>(R"([\p{Alphabetic}\p{M}\p{Nd}\p{Pc}\p{Join_Control}])",
                                             "word-character class")),
      whitespace_(std::make_unique<Regex>(R"(\p{White_Space})", "white-space class")) {
  // Special tokens first, then the others, as Hugging Face builds its matchers.
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t i = 0; i < tokens_.size(); ++i) {
      const AddedTokenConfig& t = tokens_[i];
      if (t.special != (pass == 0)) continue;
      if (t.normalized)
        normalized_.insert(normalizer.apply(t.content), static_cast<int32_t>(i));
      else
        raw_.insert(t.content, static_cast<int32_t>(i));
    }
  }
}

AddedTokens::~AddedTokens() = default;

namespace {

size_t previousCharacter(std::string_view text, size_t pos) {
  do --pos;
  while (pos > 0 && (static_cast<unsigned char>(text[pos]) & 0xC0) == 0x80);
  return pos;
}

}  // namespace

bool AddedTokens::isWordCharacterBefore(std::string_view text, size_t pos) const {
  return pos > 0 && wordCharacter_->matchAt(text, previousCharacter(text, pos)) != Regex::npos;
}

bool AddedTokens::isWordCharacterAt(std::string_view text, size_t pos) const {
  return pos < text.size() && wordCharacter_->matchAt(text, pos) != Regex::npos;
}

size_t AddedTokens::whitespaceStartBefore(std::string_view text, size_t pos) const {
  while (pos > 0) {
    const size_t before = previousCharacter(text, pos);
    if (whitespace_->matchAt(text, before) == Regex::npos) break;
    pos = before;
  }
  return pos;
}

size_t AddedTokens::whitespaceEndAfter(std::string_view text, size_t pos) const {
  while (pos < text.size()) {
    const size_t end = whitespace_->matchAt(text, pos);
    if (end == Regex::npos) break;
    pos = end;
  }
  return pos;
}

std::vector<TextPart> AddedTokens::split(std::string_view text, bool normalized) const {
  const Trie& trie = normalized ? normalized_ : raw_;
  std::vector<TextPart> parts;
  size_t done = 0;  // text before this is in `parts`
  size_t pos = 0;
  while (pos < text.size()) {
    if (!trie.firstByte[static_cast<unsigned char>(text[pos])]) {
      ++pos;
      continue;
    }
    const auto [index, length] = trie.longestAt(text, pos);
    if (index < 0) {
      ++pos;
      continue;
    }
    const AddedTokenConfig& token = tokens_[index];
    size_t start = pos, stop = pos + length;
    pos = stop;  // the search goes on after the match, even one that is discarded below
    if (token.singleWord && (isWordCharacterBefore(text, start) || isWordCharacterAt(text, stop)))
      continue;
    if (token.lstrip) start = std::max(whitespaceStartBefore(text, start), done);
    if (token.rstrip) stop = whitespaceEndAfter(text, stop);
    if (done < start) parts.push_back({text.substr(done, start - done), std::nullopt});
    parts.push_back({text.substr(start, stop - start), token.id});
    done = stop;
  }
  if (done < text.size()) parts.push_back({text.substr(done), std::nullopt});
  return parts;
}

}  // namespace strata::tokenizer
