#pragma once
// Grammar-forced drafts: where the active grammar allows only one continuation (the rest of a
// key, `": "`, a closing bracket), propose that text's tokens; the model then confirms many
// tokens in one pass instead of one per pass.
#include "spec/drafter.h"
#include "strata/tokenizer.h"

namespace strata::spec {

class GrammarDrafter final : public Drafter {
 public:
  explicit GrammarDrafter(const Tokenizer& tokenizer) : tokenizer_(tokenizer) {}
  DrafterKind kind() const override { return DrafterKind::Grammar; }
  // The forced text's tokens (at most 16), each allowed in turn; nothing without a grammar.
  Draft draft(const DraftRequest& request) override;

 private:
  const Tokenizer& tokenizer_;
};

}  // namespace strata::spec
