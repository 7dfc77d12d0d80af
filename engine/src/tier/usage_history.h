#pragma once
// Which experts a model used, kept across runs in the user's data folder (never the model's),
// one file per model: <data>/usage/<fingerprint>.json. The next start pins the most used.
#include <filesystem>
#include <string>
#include <vector>

#include "tier/expert_store.h"

namespace strata::tier {

// <data>/usage/<model fingerprint>.json (model/fingerprint.h)
std::filesystem::path usageHistoryPath(const std::filesystem::path& dataDirectory,
                                       const std::string& fingerprint);

// Counts in ExpertStore order, or empty when there is no history or it does not match the
// model's shape (a warning is logged; a bad file never stops the model from loading).
UsageCounts loadUsageHistory(const std::filesystem::path& path, const std::vector<int>& layers,
                             int expertsPerLayer);

// Written atomically. Throws strata::Error naming the file on failure.
void saveUsageHistory(const std::filesystem::path& path, const std::vector<int>& layers,
                      int expertsPerLayer, const UsageCounts& counts);

}  // namespace strata::tier
