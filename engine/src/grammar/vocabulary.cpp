#include "grammar/vocabulary.h"

#include "chat/chat_format.h"

namespace strata {
namespace {

// GLM writes tool calls with these special tokens; the reply parser reads them as text, so a
// grammar of tool calls (toolCallGbnf) may use them. Other special tokens are never text.
bool isToolCallTag(std::string_view text) {
  for (const std::string_view tag : {chat::kToolCallOpen, chat::kToolCallClose, chat::kArgKeyOpen,
                                     chat::kArgKeyClose, chat::kArgValueOpen, chat::kArgValueClose})
    if (text == tag) return true;
  return false;
}

}  // namespace

GrammarVocabulary::GrammarVocabulary(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrammarVocabulary::~GrammarVocabulary() = default;

std::shared_ptr<const GrammarVocabulary> GrammarVocabulary::build(
    const Tokenizer& tokenizer, std::span<const int32_t> endTokens) {
  auto impl = std::make_unique<Impl>();
  const int32_t size = tokenizer.vocabSize();
  impl->roles.assign(static_cast<size_t>(size), Impl::Role::Never);
  impl->bytes.resize(static_cast<size_t>(size));
  std::vector<std::pair<std::string, int32_t>> text;
  text.reserve(static_cast<size_t>(size));
  for (int32_t id = 0; id < size; ++id) {
    std::string bytes;
    try {
      const int32_t one[] = {id};
      bytes = tokenizer.decode(one);
    } catch (const Error&) {
      continue;  // an id no token has
    }
    if (bytes.empty() || (tokenizer.isSpecial(id) && !isToolCallTag(bytes))) continue;
    impl->roles[id] = Impl::Role::Text;
    impl->bytes[id] = bytes;
    text.emplace_back(std::move(bytes), id);
  }
  impl->trie = grammar::TokenTrie::build(std::move(text));
  for (int32_t id : endTokens) {
    if (id < 0) continue;
    if (id >= static_cast<int32_t>(impl->roles.size())) {  // past the tokenizer's ids
      impl->roles.resize(static_cast<size_t>(id) + 1, Impl::Role::Never);
      impl->bytes.resize(static_cast<size_t>(id) + 1);
    }
    impl->roles[id] = Impl::Role::End;
    impl->bytes[id].clear();
  }
  // End tokens that were text tokens leave the trie's lists: they are never text.
  auto& ids = impl->trie.tokenIds;
  for (int32_t& id : ids)
    if (impl->roles[id] == Impl::Role::End) id = -1;
  return std::make_shared<GrammarVocabulary>(std::move(impl));
}

}  // namespace strata
