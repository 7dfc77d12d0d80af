// strata::Tokenizer: the tokenizer.json pipeline of Hugging Face tokenizers for byte-level BPE:
// added tokens -> normalizer -> pre-tokenizer -> BPE, and the ByteLevel decoder.
#include "strata/tokenizer.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <unordered_map>

#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/utf8.h"

namespace strata {

using namespace tokenizer;

Tokenizer::Impl::Impl(const TokenizerConfig& config)
    : source(config.source),
      normalizer(config.normalizer, config.source),
      preTokenizer(config.preTokenizer, config.source),
      model(config.model, config.source),
      added(config.addedTokens, normalizer) {
  for (const AddedTokenConfig& t : config.addedTokens) {
    const std::string where =
        source + ": added_tokens: '" + t.content + "' (id " + std::to_string(t.id) + ")";
    if (const auto inVocab = model.id(t.content); inVocab && *inVocab != t.id)
      throw Error(where + ": the vocab gives '" + t.content + "' the id " +
                  std::to_string(*inVocab));
    const auto [it, fresh] = addedIds.emplace(t.content, t.id);
    if (!fresh && it->second != t.id)
      throw Error(where + ": the same token is also listed with id " + std::to_string(it->second));
  }
  buildDecodeTable(config);
}

// The bytes of every id, as Hugging Face's ByteLevel decoder writes them: a token's characters
// mapped back to bytes, or the token's own text when a character is outside the alphabet.
void Tokenizer::Impl::buildDecodeTable(const TokenizerConfig& config) {
  int32_t largest = -1;
  for (const auto& [token, id] : config.model.vocab) largest = std::max(largest, id);
  for (const AddedTokenConfig& t : config.addedTokens) largest = std::max(largest, t.id);
  const size_t tokenCount = config.model.vocab.size() + config.addedTokens.size();
  if (largest < 0) throw Error(source + ": model.vocab: the vocab is empty");
  if (static_cast<size_t>(largest) > 2 * tokenCount + 65536)
    throw Error(source + ": the largest token id is " + std::to_string(largest) +
                " but there are only " + std::to_string(tokenCount) +
                " tokens; ids must be (nearly) contiguous");
  vocabSize = largest + 1;

  std::vector<const std::string*> tokenOfId(static_cast<size_t>(vocabSize), nullptr);
  for (const auto& [token, id] : config.model.vocab) tokenOfId[id] = &token;
  for (const AddedTokenConfig& t : config.addedTokens) {
    const std::string* other = tokenOfId[t.id];
    if (other && *other != t.content)
      throw Error(source + ": added_tokens: ids are not unique: '" + *other + "' and '" +
                  t.content + "' both have id " + std::to_string(t.id));
    tokenOfId[t.id] = &t.content;
  }

  offsets.assign(static_cast<size_t>(vocabSize) + 1, 0);
  present.assign(static_cast<size_t>(vocabSize), false);
  for (int32_t id = 0; id < vocabSize; ++id) {
    offsets[id] = static_cast<uint32_t>(bytes.size());
    if (!tokenOfId[id]) continue;
    present[id] = true;
    const std::string& token = *tokenOfId[id];
    if (auto decoded = preTokenizer.alphabet().decode(token))
      bytes += *decoded;
    else
      bytes += token;
  }
  offsets[vocabSize] = static_cast<uint32_t>(bytes.size());
  special.assign(static_cast<size_t>(vocabSize), false);
  for (const AddedTokenConfig& t : config.addedTokens) special[t.id] = t.special;
}

std::string_view Tokenizer::Impl::bytesOf(int32_t id) const {
  if (id < 0 || id >= vocabSize || !present[id])
    throw Error(source + ": token id " + std::to_string(id) +
                " is out of range: no token has it (ids go from 0 to " +
                std::to_string(vocabSize - 1) + ")");
  return std::string_view(bytes).substr(offsets[id], offsets[id + 1] - offsets[id]);
}

void Tokenizer::Impl::encodePlain(std::string_view text, std::vector<int32_t>& ids) const {
  preTokenizer.split(text, [&](std::string_view piece) { model.encode(piece, ids); });
}

void Tokenizer::Impl::encodeValid(std::string_view text, std::vector<int32_t>& ids) const {
  for (const TextPart& raw : added.split(text, /*normalized=*/false)) {
    if (raw.id) {
      ids.push_back(*raw.id);
      continue;
    }
    std::string normalized;
    if (!normalizer.empty()) normalized = normalizer.apply(raw.text);
    const std::string_view normalizedText =
        normalizer.empty() ? raw.text : std::string_view(normalized);
    for (const TextPart& part : added.split(normalizedText, /*normalized=*/true)) {
      if (part.id)
        ids.push_back(*part.id);
      else
        encodePlain(part.text, ids);
    }
  }
}

// Bytes that are not UTF-8 cannot go through the regexes; each maximal invalid subsequence
// becomes a pre-token of its own, in the byte-level alphabet when the tokenizer has one.
void Tokenizer::Impl::encodeInvalid(std::string_view bytes, std::vector<int32_t>& ids) const {
  if (!preTokenizer.byteLevel()) {
    model.encodeInvalidBytes(bytes, ids);
    return;
  }
  std::string mapped;
  preTokenizer.alphabet().encode(bytes, mapped);
  model.encode(mapped, ids);
}

Tokenizer::Tokenizer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Tokenizer::~Tokenizer() = default;

std::unique_ptr<Tokenizer> Tokenizer::fromJson(std::string_view json, const std::string& source) {
  const TokenizerConfig config = parseTokenizerJson(json, source);
  return std::unique_ptr<Tokenizer>(new Tokenizer(std::make_unique<Impl>(config)));
}

std::unique_ptr<Tokenizer> Tokenizer::load(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw Error(file.string() + ": cannot open the tokenizer file (does it exist?)");
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw Error(file.string() + ": could not read the tokenizer file");
  return fromJson(text.str(), file.string());
}

std::vector<int32_t> Tokenizer::encode(std::string_view text) const {
  std::vector<int32_t> ids;
  ids.reserve(text.size() / 3 + 1);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = pos;
    Utf8Step step{Utf8Step::Char, 0};
    while (end < text.size() && (step = scanUtf8(text, end)).kind == Utf8Step::Char)
      end += step.length;
    if (end > pos) impl_->encodeValid(text.substr(pos, end - pos), ids);
    if (end < text.size()) {
      impl_->encodeInvalid(text.substr(end, step.length), ids);
      end += step.length;
    }
    pos = end;
  }
  return ids;
}

std::string Tokenizer::decode(std::span<const int32_t> ids) const {
  std::string text;
  for (int32_t id : ids) text += impl_->bytesOf(id);
  return text;
}

std::optional<int32_t> Tokenizer::tokenId(std::string_view token) const {
  const auto it = impl_->addedIds.find(token);
  if (it != impl_->addedIds.end()) return it->second;
  return impl_->model.id(token);
}

int32_t Tokenizer::vocabSize() const { return impl_->vocabSize; }

bool Tokenizer::isSpecial(int32_t id) const {
  return id >= 0 && id < impl_->vocabSize && impl_->special[id];
}

std::vector<int32_t> Tokenizer::specialIds() const {
  std::vector<int32_t> ids;
  for (const auto& [content, id] : impl_->addedIds)
    if (impl_->special[id]) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return ids;
}

std::string Tokenizer::StreamDecoder::push(int32_t id) {
  pending_ += tokenizer_->impl_->bytesOf(id);
  std::string text;
  size_t pos = 0;
  while (pos < pending_.size()) {
    const Utf8Step step = scanUtf8(pending_, pos);
    if (step.kind == Utf8Step::Incomplete) break;  // wait for the rest of the character
    if (step.kind == Utf8Step::Char)
      text.append(pending_, pos, step.length);
    else
      text += kReplacementCharacter;
    pos += step.length;
  }
  pending_.erase(0, pos);
  return text;
}

std::string Tokenizer::StreamDecoder::flush() {
  // What is left is the start of one character that never completed: one U+FFFD.
  std::string text = pending_.empty() ? "" : std::string(kReplacementCharacter);
  pending_.clear();
  return text;
}

}  // namespace strata
