#pragma once
// The heatmap's colours: heat (0 cold .. 1 hottest) on a dark-to-bright ramp, and one colour per
// expert tier for the stripe under each cell.
#include <QColor>
#include <cstdint>

namespace strata::app {

QRgb heatColor(float heat);    // heat is clamped to [0, 1]
QRgb tierColor(uint8_t tier);  // a strata::ExpertTier value; unknown values are grey

}  // namespace strata::app
