#include "grammar/char_set.h"

#include <algorithm>

namespace strata::grammar {
namespace {

constexpr CodePointRange kSurrogates{0xD800, 0xDFFF};

// Sorted, merged, surrogates removed.
std::vector<CodePointRange> normalize(std::vector<CodePointRange> ranges) {
  std::sort(ranges.begin(), ranges.end(),
            [](const CodePointRange& a, const CodePointRange& b) { return a.first < b.first; });
  std::vector<CodePointRange> merged;
  for (const CodePointRange& r : ranges) {
    if (!merged.empty() && r.first <= merged.back().last + 1)
      merged.back().last = std::max(merged.back().last, r.last);
    else
      merged.push_back(r);
  }
  std::vector<CodePointRange> out;
  for (const CodePointRange& r : merged) {
    if (r.first < kSurrogates.first)
      out.push_back({r.first, std::min(r.last, kSurrogates.first - 1)});
    if (r.last > kSurrogates.last) out.push_back({std::max(r.first, kSurrogates.last + 1), r.last});
  }
  return out;
}

std::vector<CodePointRange> complement(const std::vector<CodePointRange>& ranges) {
  std::vector<CodePointRange> out;
  uint32_t next = 0;
  for (const CodePointRange& r : ranges) {
    if (r.first > next) out.push_back({next, r.first - 1});
    next = r.last + 1;
  }
  if (next <= kMaxCodePoint) out.push_back({next, kMaxCodePoint});
  return out;
}

}  // namespace

CharSet::CharSet(std::vector<CodePointRange> ranges, bool negated) {
  for (CodePointRange& r : ranges) r.last = std::min(r.last, kMaxCodePoint);
  std::erase_if(ranges, [](const CodePointRange& r) { return r.first > r.last; });
  ranges_ = normalize(std::move(ranges));
  if (negated) ranges_ = normalize(complement(ranges_));
  for (const CodePointRange& r : ranges_)
    for (uint32_t c = r.first; c <= std::min<uint32_t>(r.last, 127); ++c)
      ascii_[c >> 6] |= uint64_t{1} << (c & 63);
}

bool CharSet::contains(uint32_t codePoint) const {
  if (codePoint < 128) return (ascii_[codePoint >> 6] >> (codePoint & 63)) & 1;
  return intersects(codePoint, codePoint);
}

bool CharSet::intersects(uint32_t first, uint32_t last) const {
  // The first range that ends at or after `first`.
  const auto it =
      std::lower_bound(ranges_.begin(), ranges_.end(), first,
                       [](const CodePointRange& r, uint32_t value) { return r.last < value; });
  return it != ranges_.end() && it->first <= last;
}

std::optional<uint32_t> CharSet::only() const {
  if (ranges_.size() == 1 && ranges_[0].first == ranges_[0].last) return ranges_[0].first;
  return std::nullopt;
}

bool CharSet::operator==(const CharSet& other) const {
  return ranges_.size() == other.ranges_.size() &&
         std::equal(ranges_.begin(), ranges_.end(), other.ranges_.begin(),
                    [](const CodePointRange& a, const CodePointRange& b) {
                      return a.first == b.first && a.last == b.last;
                    });
}

}  // namespace strata::grammar
