#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <queue>

#include "strata/error.h"
#include "tokenizer/utf8.h"

namespace strata::tokenizer {
namespace {

std::string codepointName(std::string_view character) {
  size_t pos = 0;
  char buffer[16];
  std::snprintf(buffer, sizeof buffer, "U+%04X", static_cast<unsigned>(decodeUtf8(character, pos)));
  return buffer;
}

}  // namespace

BpeModel::BpeModel(const BpeConfig& config, const std::string& source)
    : source_(source),
      ignoreMerges_(config.ignoreMerges),
      byteFallback_(config.byteFallback),
      fuseUnk_(config.fuseUnk) {
  vocab_.reserve(config.vocab.size());
  std::unordered_map<int32_t, const std::string*> tokenOfId;
  tokenOfId.reserve(config.vocab.size());
  for (const auto& [token, id] : config.vocab) {
    auto [it, fresh] = tokenOfId.emplace(id, &token);
    if (!fresh)
      throw Error(source_ + ": model.vocab: ids are not unique: '" + *it->second + "' and '" +
                  token + "' both have id " + std::to_string(id));
    vocab_.emplace(token, id);
  }

  merges_.reserve(config.merges.size());
  for (size_t rank = 0; rank < config.merges.size(); ++rank) {
    const auto& [left, right] = config.merges[rank];
    const auto where = [&] {
      return source_ + ": model.merges: the merge '" + left + " " + right + "' (rank " +
             std::to_string(rank) + ")";
    };
    const auto l = vocab_.find(left), r = vocab_.find(right);
    if (l == vocab_.end())
      throw Error(where() + " refers to '" + left + "', which is not in the vocab");
    if (r == vocab_.end())
      throw Error(where() + " refers to '" + right + "', which is not in the vocab");
    const auto merged = vocab_.find(left + right);
    if (merged == vocab_.end())
      throw Error(where() + " makes '" + left + right + "', which is not in the vocab");
    // A pair listed twice keeps its last rank, as in Hugging Face tokenizers.
    merges_[pairKey(l->second, r->second)] = {static_cast<uint32_t>(rank), merged->second};
  }

  if (config.unkToken) {
    const auto unk = vocab_.find(*config.unkToken);
    if (unk == vocab_.end())
      throw Error(source_ + ": model.unk_token '" + *config.unkToken + "' is not in the vocab");
    unkId_ = unk->second;
  }
}

std::optional<int32_t> BpeModel::id(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

std::optional<int32_t> BpeModel::byteFallbackId(unsigned char byte) const {
  char name[8];
  std::snprintf(name, sizeof name, "<0x%02X>", byte);
  return id(name);
}

void BpeModel::encode(std::string_view word, std::vector<int32_t>& ids) const {
  if (ignoreMerges_) {
    // ignore_merges: a pre-token that is itself a token is not built up from merges.
    if (const auto whole = id(word)) {
      ids.push_back(*whole);
      return;
    }
  }
  const bool cacheable = word.size() <= kLongestCachedWord;
  if (cacheable) {
    const std::lock_guard lock(cacheMutex_);
    const auto hit = cache_.find(word);
    if (hit != cache_.end()) {
      ids.insert(ids.end(), hit->second.begin(), hit->second.end());
      return;
    }
  }
  std::vector<int32_t> symbols = initialSymbols(word);
  mergeAll(symbols);
  ids.insert(ids.end(), symbols.begin(), symbols.end());
  if (cacheable) {
    const std::lock_guard lock(cacheMutex_);
    if (cache_.size() >= kCacheCapacity) cache_.clear();
    cache_.emplace(word, std::move(symbols));
  }
}

// One symbol per character; characters outside the vocab go to byte_fallback tokens or
// unk_token exactly as Hugging Face's BPE::merge_word does (including that a pending unk is
// written after byte-fallback tokens that follow it).
std::vector<int32_t> BpeModel::initialSymbols(std::string_view word) const {
  std::vector<int32_t> symbols;
  symbols.reserve(word.size());
  bool pendingUnk = false;
  size_t pos = 0;
  while (pos < word.size()) {
    const size_t begin = pos;
    pos += scanUtf8(word, pos).length;
    const std::string_view character = word.substr(begin, pos - begin);
    if (const auto known = id(character)) {
      if (pendingUnk) symbols.push_back(*unkId_);
      pendingUnk = false;
      symbols.push_back(*known);
      continue;
    }
    if (byteFallback_) {
      std::vector<int32_t> bytes;
      for (char b : character)
        if (const auto byteId = byteFallbackId(static_cast<unsigned char>(b)))
          bytes.push_back(*byteId);
      if (bytes.size() == character.size()) {
        symbols.insert(symbols.end(), bytes.begin(), bytes.end());
        continue;
      }
    }
    if (!unkId_)
      throw Error(source_ + ": cannot encode the character " + codepointName(character) +
                  ": it is not in the vocab and the model has neither byte_fallback nor unk_token");
    if (pendingUnk && !fuseUnk_) symbols.push_back(*unkId_);
    pendingUnk = true;
  }
  if (pendingUnk) symbols.push_back(*unkId_);
  return symbols;
}

void BpeModel::encodeInvalidBytes(std::string_view bytes, std::vector<int32_t>& ids) const {
  if (byteFallback_) {
    std::vector<int32_t> fallback;
    for (char b : bytes)
      if (const auto byteId = byteFallbackId(static_cast<unsigned char>(b)))
        fallback.push_back(*byteId);
    if (fallback.size() == bytes.size()) {
      ids.insert(ids.end(), fallback.begin(), fallback.end());
      return;
    }
  }
  if (!unkId_)
    throw Error(source_ +
                ": the text is not valid UTF-8, and this tokenizer has no ByteLevel "
                "pre-tokenizer, byte_fallback or unk_token to encode such bytes");
  ids.push_back(*unkId_);
}

// Hugging Face's Word::merge_all: a min-heap of candidate merges ordered by (rank, position);
// entries made stale by an earlier merge are recognised and skipped when popped.
void BpeModel::mergeAll(std::vector<int32_t>& symbols) const {
  const int32_t n = static_cast<int32_t>(symbols.size());
  if (n < 2) return;
  std::vector<int32_t> prev(n), next(n);
  std::vector<bool> alive(n, true);
  for (int32_t i = 0; i < n; ++i) {
    prev[i] = i - 1;
    next[i] = i + 1 < n ? i + 1 : -1;
  }
  struct Candidate {
    uint32_t rank;
    int32_t pos;
    int32_t result;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  const auto consider = [&](int32_t pos) {
    const auto m = merges_.find(pairKey(symbols[pos], symbols[next[pos]]));
    if (m != merges_.end()) queue.push({m->second.rank, pos, m->second.result});
  };
  for (int32_t i = 0; i + 1 < n; ++i) consider(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    if (!alive[top.pos] || next[top.pos] < 0) continue;
    const int32_t right = next[top.pos];
    const auto m = merges_.find(pairKey(symbols[top.pos], symbols[right]));
    if (m == merges_.end() || m->second.result != top.result) continue;  // stale
    symbols[top.pos] = top.result;
    alive[right] = false;
    next[top.pos] = next[right];
    if (next[right] >= 0) prev[next[right]] = top.pos;
    if (prev[top.pos] >= 0) consider(prev[top.pos]);
    if (next[top.pos] >= 0) consider(top.pos);
  }
  int32_t kept = 0;
  for (int32_t i = 0; i < n; ++i)
    if (alive[i]) symbols[kept++] = symbols[i];
  symbols.resize(kept);
}

}  // namespace strata::tokenizer
