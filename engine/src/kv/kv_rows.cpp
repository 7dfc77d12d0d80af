#include "kv/kv_rows.h"

#include <sys/mman.h>

#include <algorithm>
#include <bit>
#include <cstring>

#include "quant/convert.h"

namespace strata::kv {

void KvRows::append(const float* values, size_t count) {
  switch (precision_) {
    case KvPrecision::F32:
      f32_.insert(f32_.end(), values, values + count);
      return;
    case KvPrecision::BF16:
      for (size_t i = 0; i < count; ++i) half_.push_back(quant::f32ToBf16(values[i]));
      return;
    case KvPrecision::F16:
      for (size_t i = 0; i < count; ++i) half_.push_back(quant::f32ToF16(values[i]));
      return;
  }
}

void KvRows::appendEncoded(const uint8_t* bytes, size_t count) {
  if (precision_ == KvPrecision::F32) {
    const size_t old = f32_.size();
    f32_.resize(old + count);
    std::memcpy(f32_.data() + old, bytes, count * sizeof(float));
  } else {
    const size_t old = half_.size();
    half_.resize(old + count);
    std::memcpy(half_.data() + old, bytes, count * sizeof(uint16_t));
  }
}

namespace {

// Faulting in hundreds of MiB page by page costs more than reading them from a file, so big
// reservations ask for transparent huge pages (advice: ignored where THP is off).
template <typename T>
void reserveHuge(std::vector<T>& v, size_t count) {
  constexpr uintptr_t kHugePage = uintptr_t{2} << 20;
  v.reserve(count);
  const auto begin = (reinterpret_cast<uintptr_t>(v.data()) + kHugePage - 1) & ~(kHugePage - 1);
  const auto end = reinterpret_cast<uintptr_t>(v.data() + count) & ~(kHugePage - 1);
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
}

}  // namespace

void KvRows::reserveValues(size_t count) {
  if (precision_ == KvPrecision::F32)
    reserveHuge(f32_, count);
  else
    reserveHuge(half_, count);
}

void KvRows::truncateRows(int64_t rows) {
  const auto values = static_cast<size_t>(rows * width_);
  if (values >= valueCount()) return;
  f32_.resize(precision_ == KvPrecision::F32 ? values : 0);
  half_.resize(precision_ == KvPrecision::F32 ? 0 : values);
}

KvRows KvRows::prefix(int64_t rows) const {
  KvRows out(width_, precision_);
  const auto values = std::min(valueCount(), static_cast<size_t>(rows * width_));
  if (precision_ == KvPrecision::F32)
    out.f32_.assign(f32_.begin(), f32_.begin() + static_cast<ptrdiff_t>(values));
  else
    out.half_.assign(half_.begin(), half_.begin() + static_cast<ptrdiff_t>(values));
  return out;
}

KvRows KvRows::convertedTo(KvPrecision precision) const {
  if (precision == precision_) return *this;
  KvRows out(width_, precision);
  const std::vector<float> values = toF32();
  out.append(values.data(), values.size());
  return out;
}

void KvRows::widen(size_t first, size_t count, float* out) const {
  const uint16_t* from = half_.data() + first;
  if (precision_ == KvPrecision::BF16) {
    // bf16 is the top half of a binary32: a shift (written out so the loop vectorizes).
    for (size_t i = 0; i < count; ++i) out[i] = std::bit_cast<float>(static_cast<uint32_t>(from[i]) << 16);
  } else {
    for (size_t i = 0; i < count; ++i) out[i] = quant::f16ToF32(from[i]);
  }
}

const float* KvRows::row(int64_t r, float* scratch) const {
  const auto first = static_cast<size_t>(r * width_);
  if (precision_ == KvPrecision::F32) return f32_.data() + first;
  widen(first, static_cast<size_t>(width_), scratch);
  return scratch;
}

const float* KvRows::rowsF32(int64_t first, int64_t count, std::vector<float>& scratch) const {
  const auto begin = static_cast<size_t>(first * width_);
  const auto n = static_cast<size_t>(count * width_);
  if (precision_ == KvPrecision::F32) return f32_.data() + begin;
  if (scratch.size() < n) scratch.resize(n);
  widen(begin, n, scratch.data());
  return scratch.data();
}

void KvRows::encode(size_t first, size_t count, KvPrecision precision, uint8_t* out) const {
  if (precision == precision_) {
    if (precision_ == KvPrecision::F32)
      std::memcpy(out, f32_.data() + first, count * sizeof(float));
    else
      std::memcpy(out, half_.data() + first, count * sizeof(uint16_t));
    return;
  }
  std::vector<float> values(count);
  if (precision_ == KvPrecision::F32)
    std::memcpy(values.data(), f32_.data() + first, count * sizeof(float));
  else
    widen(first, count, values.data());
  for (size_t i = 0; i < count; ++i) {
    if (precision == KvPrecision::F32) {
      std::memcpy(out + 4 * i, &values[i], 4);
    } else {
      const uint16_t bits =
          precision == KvPrecision::BF16 ? quant::f32ToBf16(values[i]) : quant::f32ToF16(values[i]);
      std::memcpy(out + 2 * i, &bits, 2);
    }
  }
}

std::vector<float> KvRows::toF32() const {
  if (precision_ == KvPrecision::F32) return f32_;
  std::vector<float> out(half_.size());
  widen(0, half_.size(), out.data());
  return out;
}

}  // namespace strata::kv
