#pragma once
// How the app's LoadRequest becomes the engine's settings: used when the worker opens a model
// and when Settings shows the memory plan before loading, so both mean the same thing.
#include <QString>

#include "bridge/bridge_types.h"
#include "strata/engine.h"

namespace strata::app {

// Speculation is not part of it (the worker applies the live choice).
EngineSettings engineSettingsFor(const LoadRequest& request);

}  // namespace strata::app
