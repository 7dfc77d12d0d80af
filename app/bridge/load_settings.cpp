#include "bridge/load_settings.h"

#include <filesystem>

namespace strata::app {

EngineSettings engineSettingsFor(const LoadRequest& r) {
  EngineSettings s;
  s.threads = r.threads;
  // BF16 weights (the bundled model, Hugging Face checkpoints) stay 16-bit: the kernels widen
  // them exactly, so the numbers are f32's, in half the memory and faster (README "strata-cli").
  s.precision = Precision::Native;
  s.memory.budgetBytes = r.memoryBudgetBytes;
  s.memory.sessions = std::max(1, r.sessions);
  s.memory.pinnedFraction = std::clamp(r.tiers.pinnedPercent, 0, 90) / 100.0;
  s.memory.prefetch = r.tiers.prefetch;
  if (auto io = parseIoBackend(r.io.toStdString())) s.memory.io = *io;
  if (!r.dataDir.isEmpty()) s.memory.dataDirectory = std::filesystem::path(r.dataDir.toStdString());
  if (auto kv = parseKvPrecision(r.kvPrecision.toStdString())) s.kvPrecision = *kv;
  s.kernelPath =
      r.kernelPath == QLatin1String("dequantize") ? KernelPath::Dequantize : KernelPath::Automatic;
  return s;
}

}  // namespace strata::app
