#include "heatmap/heat_colors.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "strata/tiers.h"

namespace strata::app {

QRgb heatColor(float heat) {
  // Stops of an inferno-like ramp: near-background, violet, red-orange, yellow.
  struct Stop {
    float at;
    int r, g, b;
  };
  static constexpr std::array<Stop, 5> kStops = {{{0.00f, 30, 33, 45},
                                                  {0.25f, 88, 40, 140},
                                                  {0.55f, 205, 65, 75},
                                                  {0.80f, 250, 150, 40},
                                                  {1.00f, 252, 240, 150}}};
  const float h = std::isfinite(heat) ? std::clamp(heat, 0.0f, 1.0f) : 0.0f;
  for (size_t i = 1; i < kStops.size(); ++i) {
    if (h > kStops[i].at) continue;
    const Stop& a = kStops[i - 1];
    const Stop& b = kStops[i];
    const float t = (h - a.at) / (b.at - a.at);
    auto mix = [t](int x, int y) { return static_cast<int>(std::lround(x + (y - x) * t)); };
    return qRgb(mix(a.r, b.r), mix(a.g, b.g), mix(a.b, b.b));
  }
  return qRgb(kStops.back().r, kStops.back().g, kStops.back().b);
}

QRgb tierColor(uint8_t tier) {
  switch (static_cast<ExpertTier>(tier)) {
    case ExpertTier::Disk:
      return qRgb(70, 74, 86);
    case ExpertTier::Loading:
      return qRgb(77, 208, 225);
    case ExpertTier::Ram:
      return qRgb(102, 187, 106);
    case ExpertTier::Pinned:
      return qRgb(179, 136, 255);
    case ExpertTier::PageCache:
      return qRgb(255, 183, 77);
  }
  return qRgb(128, 128, 128);
}

}  // namespace strata::app
