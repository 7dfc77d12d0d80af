// StopMatcher: stop strings over streamed text, holding back what might still become one.
#include <algorithm>
#include <string>

#include "strata/sampling.h"

namespace strata {
namespace {

// Bytes at the end of `text` that begin a UTF-8 character not yet complete.
size_t incompleteUtf8Tail(const std::string& text) {
  const size_t n = text.size();
  for (size_t back = 1; back <= std::min<size_t>(4, n); ++back) {
    const auto b = static_cast<unsigned char>(text[n - back]);
    if ((b & 0xC0) == 0x80) continue;  // continuation byte: keep looking for the lead byte
    const size_t need = (b & 0xE0) == 0xC0   ? 2
                        : (b & 0xF0) == 0xE0 ? 3
                        : (b & 0xF8) == 0xF0 ? 4
                                             : 1;
    return need > back ? back : 0;
  }
  return 0;  // no lead byte: malformed, nothing to wait for
}

// Length of the longest proper prefix of `stop` that `text` ends with.
size_t partialMatch(const std::string& text, const std::string& stop) {
  for (size_t k = std::min(stop.size() - 1, text.size()); k > 0; --k)
    if (text.compare(text.size() - k, k, stop, 0, k) == 0) return k;
  return 0;
}

}  // namespace

StopMatcher::StopMatcher(std::vector<std::string> stopStrings, std::vector<int32_t> eosIds)
    : stops_(std::move(stopStrings)), eos_(std::move(eosIds)) {
  for (size_t i = 0; i < stops_.size(); ++i)
    if (stops_[i].empty())
      throw Error("stop[" + std::to_string(i) + "]: a stop string must not be empty");
}

bool StopMatcher::isEos(int32_t token) const {
  return std::find(eos_.begin(), eos_.end(), token) != eos_.end();
}

StopMatcher::Output StopMatcher::push(std::string_view text) {
  if (stopped_) return {"", true};
  pending_ += text;
  // pending_ is what was held back (shorter than the longest stop string, plus at most three
  // bytes of a character) and the new text, so searching all of it stays cheap.
  size_t first = std::string::npos;
  for (const std::string& stop : stops_) first = std::min(first, pending_.find(stop));
  if (first != std::string::npos) {
    Output out{pending_.substr(0, first), true};
    pending_.clear();
    stopped_ = true;
    return out;
  }
  size_t hold = incompleteUtf8Tail(pending_);
  for (const std::string& stop : stops_) hold = std::max(hold, partialMatch(pending_, stop));
  Output out{pending_.substr(0, pending_.size() - hold), false};
  pending_.erase(0, pending_.size() - hold);
  return out;
}

StopMatcher::Output StopMatcher::push(int32_t token, std::string_view text) {
  if (stopped_) return {"", true};
  if (!isEos(token)) return push(text);
  stopped_ = true;
  Output out{std::move(pending_), true};
  pending_.clear();
  return out;
}

StopMatcher::Output StopMatcher::finish() {
  Output out{std::move(pending_), stopped_};
  pending_.clear();
  return out;
}

}  // namespace strata
