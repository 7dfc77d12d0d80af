#include "tier/page_cache_probe.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace strata::tier {

namespace {

// mincore() answers for a file only to its owner or someone who could write it (Linux >= 5.2).
bool mincoreAnswersFor(const std::filesystem::path& file, const struct stat& st) {
  return st.st_uid == geteuid() || faccessat(AT_FDCWD, file.c_str(), W_OK, AT_EACCESS) == 0;
}

}  // namespace

PageCacheProbe::PageCacheProbe(const std::vector<std::filesystem::path>& files,
                               std::vector<ProbedRange> ranges)
    : ranges_(std::move(ranges)), samples_(ranges_.size(), 0) {
  available_ = !files.empty();
  for (const std::filesystem::path& file : files) {
    Mapping m;
    const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
    struct stat st {};
    if (fd >= 0 && fstat(fd, &st) == 0 && st.st_size > 0 && mincoreAnswersFor(file, st)) {
      void* address = mmap(nullptr, static_cast<size_t>(st.st_size), PROT_READ, MAP_SHARED, fd, 0);
      if (address != MAP_FAILED) m = {address, static_cast<uint64_t>(st.st_size)};
    }
    if (fd >= 0) ::close(fd);
    available_ = available_ && m.address;
    mappings_.push_back(m);
  }
  for (const ProbedRange& r : ranges_) {
    totalBytes_ += static_cast<int64_t>(r.bytes);
    const bool inside = r.fileIndex >= 0 && static_cast<size_t>(r.fileIndex) < mappings_.size() &&
                        r.offset + r.bytes <= mappings_[static_cast<size_t>(r.fileIndex)].length;
    available_ = available_ && inside && r.bytes > 0;
  }
}

PageCacheProbe::~PageCacheProbe() {
  for (const Mapping& m : mappings_)
    if (m.address) munmap(m.address, m.length);
}

int PageCacheProbe::residentSamples(const ProbedRange& range) const {
  static const uint64_t kPage = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  auto* base = static_cast<unsigned char*>(mappings_[static_cast<size_t>(range.fileIndex)].address);
  int resident = 0;
  for (int k = 0; k < kSamplesPerRange; ++k) {
    // First byte, last byte (and evenly between them), each rounded down to its page.
    const uint64_t at = range.offset + (range.bytes - 1) * static_cast<uint64_t>(k) / (kSamplesPerRange - 1);
    unsigned char in = 0;
    if (mincore(base + at / kPage * kPage, kPage, &in) == 0 && (in & 1)) ++resident;
  }
  return resident;
}

int64_t PageCacheProbe::estimate(size_t i) const {
  return static_cast<int64_t>(ranges_[i].bytes) * samples_[i] / kSamplesPerRange;
}

int64_t PageCacheProbe::update(size_t maxRanges) {
  std::lock_guard lock(mutex_);
  if (!available_ || ranges_.empty()) return 0;
  for (size_t n = std::min(maxRanges, ranges_.size()); n > 0; --n) {
    const size_t i = next_;
    next_ = (next_ + 1) % ranges_.size();
    residentBytes_ -= estimate(i);
    samples_[i] = static_cast<uint8_t>(residentSamples(ranges_[i]));
    residentBytes_ += estimate(i);
  }
  return residentBytes_;
}

std::vector<bool> PageCacheProbe::mostlyResident() const {
  std::lock_guard lock(mutex_);
  std::vector<bool> held(samples_.size());
  for (size_t i = 0; i < samples_.size(); ++i) held[i] = 2 * samples_[i] >= kSamplesPerRange;
  return held;
}

}  // namespace strata::tier
