#pragma once
// How much of each routed expert the OS page cache holds: the page-cache tier's gauge.
//
// mincore() over a whole GLM-5 container (~370 GB, ~90 M pages) costs seconds of CPU, too much
// for a gauge polled ten times a second (and one mincore() call costs ~1 us here, whatever its
// length). So each expert is estimated from its first and last page (buffered reads bring an
// expert in or out as a whole), and each update() looks at a bounded number of experts, round
// robin: the estimate of the whole is at most one sweep old. The files are mapped PROT_READ without touching them;
// mapping reads nothing. Linux reports page-cache residency of a mapped file only to a caller
// that could write it (or owns it); for other files every page reads as absent, so the probe
// says it cannot measure (available() false) instead of reporting zero.
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <vector>

namespace strata::tier {

struct ProbedRange {
  int fileIndex = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
};

class PageCacheProbe {
 public:
  static constexpr int kSamplesPerRange = 2;  // its first and last page

  // Maps `files` (unreadable or unwritable ones make the probe unavailable; never throws).
  PageCacheProbe(const std::vector<std::filesystem::path>& files, std::vector<ProbedRange> ranges);
  PageCacheProbe(const PageCacheProbe&) = delete;
  PageCacheProbe& operator=(const PageCacheProbe&) = delete;
  ~PageCacheProbe();

  bool available() const { return available_; }
  // Looks at the next `maxRanges` ranges (round robin); returns the estimated bytes of all
  // ranges in the page cache. Thread-safe.
  int64_t update(size_t maxRanges);
  // Per range, as of its last look: whether at least half its sampled pages were in the cache.
  std::vector<bool> mostlyResident() const;
  int64_t totalBytes() const { return totalBytes_; }

 private:
  struct Mapping {
    void* address = nullptr;
    uint64_t length = 0;
  };
  // The range's sampled pages found in the page cache, of kSamplesPerRange.
  int residentSamples(const ProbedRange& range) const;
  int64_t estimate(size_t i) const;  // bytes, from samples_[i]

  std::vector<Mapping> mappings_;
  std::vector<ProbedRange> ranges_;
  bool available_ = false;
  int64_t totalBytes_ = 0;
  mutable std::mutex mutex_;
  std::vector<uint8_t> samples_;  // per range: resident samples at its last look
  size_t next_ = 0;
  int64_t residentBytes_ = 0;     // sum of estimate(i)
};

}  // namespace strata::tier
