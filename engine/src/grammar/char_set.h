#pragma once
// A set of Unicode code points, the terminal of a grammar: a literal character, a class such
// as [a-z] or [^"\\], or `.`. Stored as sorted, disjoint ranges (a negated class is kept as
// its complement), with a bitmap for ASCII, the common case while matching.
#include <cstdint>
#include <optional>
#include <vector>

namespace strata::grammar {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

struct CodePointRange {
  uint32_t first = 0;
  uint32_t last = 0;
};

class CharSet {
 public:
  // `ranges` in any order, possibly overlapping; `negated`: every character except those.
  // Surrogates (U+D800..U+DFFF) are never members: UTF-8 text cannot hold them.
  CharSet(std::vector<CodePointRange> ranges, bool negated);
  static CharSet single(uint32_t codePoint) { return CharSet({{codePoint, codePoint}}, false); }
  static CharSet any() { return CharSet({}, true); }

  bool contains(uint32_t codePoint) const;
  // Whether some member lies in [first, last] (the characters a partial UTF-8 sequence can
  // still become).
  bool intersects(uint32_t first, uint32_t last) const;
  // The member when there is exactly one.
  std::optional<uint32_t> only() const;
  bool empty() const { return ranges_.empty(); }
  const std::vector<CodePointRange>& ranges() const { return ranges_; }

  bool operator==(const CharSet& other) const;

 private:
  std::vector<CodePointRange> ranges_;
  uint64_t ascii_[2] = {0, 0};
};

}  // namespace strata::grammar
