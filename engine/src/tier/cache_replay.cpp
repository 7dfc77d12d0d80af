#include "tier/cache_replay.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#include "strata/error.h"

namespace strata::tier {
namespace {

void requireCapacity(size_t capacity) {
  if (capacity < 1) throw Error("cache replay: capacity must be at least 1 expert");
}

// nextUse[i]: the index of the next access to accesses[i]'s key, or kNever.
constexpr size_t kNever = std::numeric_limits<size_t>::max();

std::vector<size_t> nextUses(std::span<const ExpertKey> accesses) {
  std::vector<size_t> next(accesses.size());
  std::unordered_map<ExpertKey, size_t> seen;
  for (size_t i = accesses.size(); i-- > 0;) {
    auto [it, fresh] = seen.try_emplace(accesses[i], i);
    next[i] = fresh ? kNever : it->second;
    it->second = i;
  }
  return next;
}

}  // namespace

std::vector<ExpertKey> traceAccesses(const RoutingTrace& trace) {
  std::vector<ExpertKey> keys;
  for (const RoutingTraceLine& line : trace.lines)
    for (int e : line.experts) keys.push_back(expertKey(line.layer, e));  // already ascending
  return keys;
}

size_t capacityFromFraction(const RoutingTraceHeader& header, double fraction) {
  const double all = double(header.layers.size()) * double(header.expertsPerLayer);
  return std::max<size_t>(1, size_t(std::llround(fraction * all)));
}

ReplayResult replayPolicy(std::span<const ExpertKey> accesses, CachePolicy& policy,
                          size_t capacity) {
  requireCapacity(capacity);
  policy.setCapacity(capacity);
  ReplayResult r{capacity, accesses.size(), 0, 0};
  std::unordered_set<ExpertKey> resident;  // what the store holds, kept apart from the policy
  for (const ExpertKey key : accesses) {
    if (resident.count(key)) {
      ++r.hits;
      policy.touch(key);
    } else {
      while (resident.size() >= capacity) {
        const std::optional<ExpertKey> victim = policy.evict();
        if (!victim || resident.erase(*victim) == 0)
          throw Error("cache replay: the policy evicted " +
                      (victim ? expertKeyName(*victim) + ", which is not resident"
                              : std::string("nothing from a full cache")));
      }
      policy.insert(key);
      resident.insert(key);
    }
    if (policy.size() != resident.size() || !policy.contains(key))
      throw Error("cache replay: the policy holds " + std::to_string(policy.size()) +
                  " keys, the cache " + std::to_string(resident.size()));
    r.peakResident = std::max(r.peakResident, resident.size());
  }
  return r;
}

ReplayResult replayBelady(std::span<const ExpertKey> accesses, size_t capacity) {
  requireCapacity(capacity);
  const std::vector<size_t> next = nextUses(accesses);
  ReplayResult r{capacity, accesses.size(), 0, 0};
  std::unordered_map<ExpertKey, size_t> resident;  // key -> its next use
  // (next use, key), furthest first. An entry is stale once its key was used again or left;
  // stale entries are skipped when they reach the top.
  std::priority_queue<std::pair<size_t, ExpertKey>> byNextUse;
  for (size_t i = 0; i < accesses.size(); ++i) {
    const ExpertKey key = accesses[i];
    auto it = resident.find(key);
    if (it != resident.end()) {
      ++r.hits;
      it->second = next[i];
    } else {
      while (resident.size() >= capacity) {
        const auto [use, victim] = byNextUse.top();
        byNextUse.pop();
        auto v = resident.find(victim);
        if (v != resident.end() && v->second == use) resident.erase(v);
      }
      resident.emplace(key, next[i]);
    }
    byNextUse.emplace(next[i], key);
    r.peakResident = std::max(r.peakResident, resident.size());
  }
  return r;
}

ReplayResult replayBestStatic(std::span<const ExpertKey> accesses, size_t capacity) {
  requireCapacity(capacity);
  std::unordered_map<ExpertKey, uint64_t> counts;
  for (const ExpertKey key : accesses) ++counts[key];
  std::vector<std::pair<uint64_t, ExpertKey>> byCount;  // (count, key), most used first
  for (const auto& [key, count] : counts) byCount.emplace_back(count, key);
  std::sort(byCount.begin(), byCount.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first > b.first : a.second < b.second;
  });
  byCount.resize(std::min(byCount.size(), capacity - 1));
  std::unordered_map<ExpertKey, bool> kept;  // key -> loaded yet
  for (const auto& [count, key] : byCount) kept.emplace(key, false);

  ReplayResult r{capacity, accesses.size(), 0, 0};
  std::optional<ExpertKey> slot;  // the one slot shared by every other key
  size_t loadedKept = 0;
  for (const ExpertKey key : accesses) {
    auto it = kept.find(key);
    if (it != kept.end()) {
      if (it->second) {
        ++r.hits;
      } else {
        it->second = true;
        ++loadedKept;
      }
    } else if (slot == key) {
      ++r.hits;
    } else {
      slot = key;
    }
    r.peakResident = std::max(r.peakResident, loadedKept + (slot ? 1 : 0));
  }
  return r;
}

}  // namespace strata::tier
