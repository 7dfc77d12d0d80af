#include "spec/draft_vocabulary.h"

#include <algorithm>

namespace strata::spec {

DraftVocabulary::DraftVocabulary(int64_t vocabSize, std::vector<int32_t> always)
    : vocabSize_(vocabSize), always_(std::move(always)) {}

void DraftVocabulary::reset(int64_t common) {
  common_ = common;
  read_ = 0;
  listed_.assign(static_cast<size_t>(vocabSize_), false);
  extra_.clear();
  stale_ = true;
  for (int32_t id : always_) add(id);
}

void DraftVocabulary::add(int32_t id) {
  if (id < common_ || id >= vocabSize_ || listed_[static_cast<size_t>(id)]) return;
  listed_[static_cast<size_t>(id)] = true;
  extra_.insert(std::upper_bound(extra_.begin(), extra_.end(), id), id);
  stale_ = true;
}

std::span<const kernels::RowRange> DraftVocabulary::rows(std::span<const int32_t> sequence,
                                                         int64_t common) {
  common = std::clamp<int64_t>(common, 0, vocabSize_);
  if (common != common_) reset(common);
  read_ = std::min<int64_t>(read_, static_cast<int64_t>(sequence.size()));
  for (int32_t id : sequence.subspan(static_cast<size_t>(read_))) add(id);
  read_ = static_cast<int64_t>(sequence.size());
  if (stale_) {
    rows_.clear();
    if (common_ > 0) rows_.push_back({0, common_});
    for (int32_t id : extra_) {
      if (!rows_.empty() && rows_.back().end == id)
        ++rows_.back().end;
      else
        rows_.push_back({id, id + 1});
    }
    stale_ = false;
  }
  return rows_;
}

void DraftVocabulary::forget(int64_t tokens) {
  read_ = std::min(read_, std::max<int64_t>(0, tokens));
}

}  // namespace strata::spec
