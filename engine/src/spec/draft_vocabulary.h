#pragma once
// The tokens an MTP draft may propose (FR-Spec, Zhao et al. 2025). A draft's lm_head pass costs
// as much as the MTP layer itself or more (GLM-5: 155k x 6144 weights, read for every draft
// token; the tiny model: as many multiply-adds as a decoder layer), yet drafts that are kept
// are mostly common tokens. So drafts come from the first ids of the vocabulary (byte-level
// BPE numbers its tokens in merge order, and early merges are the most frequent pairs), the
// special tokens (a turn's end) and every token the conversation has used. A token outside the
// set is never drafted, which only costs acceptance: verification is unchanged.
#include <cstdint>
#include <span>
#include <vector>

#include "kernels/matmul.h"

namespace strata::spec {

class DraftVocabulary {
 public:
  // `always`: ids any draft may propose (special tokens), whatever their number.
  DraftVocabulary(int64_t vocabSize, std::vector<int32_t> always);

  // The rows of the lm_head a draft after `sequence` computes: ids below `common`, the `always`
  // ids and those in the sequence, as sorted disjoint ranges. Tokens read before stay listed
  // until forget() (a superset only costs time), so each call reads only the new tokens.
  std::span<const kernels::RowRange> rows(std::span<const int32_t> sequence, int64_t common);
  // The conversation now holds only its first `tokens` tokens: later ones are read again.
  void forget(int64_t tokens);

 private:
  void reset(int64_t common);
  void add(int32_t id);

  int64_t vocabSize_;
  std::vector<int32_t> always_;
  int64_t common_ = -1;
  int64_t read_ = 0;            // tokens of the sequence already listed
  std::vector<bool> listed_;    // ids at or above common_ in extra_
  std::vector<int32_t> extra_;  // sorted
  std::vector<kernels::RowRange> rows_;
  bool stale_ = true;  // rows_ needs rebuilding from extra_
};

}  // namespace strata::spec
