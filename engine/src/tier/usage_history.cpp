#include "tier/usage_history.h"

#include <nlohmann/json.hpp>

#include "core/logging.h"
#include "io/durable_file.h"
#include "strata/error.h"

namespace strata::tier {

namespace fs = std::filesystem;
using nlohmann::json;

fs::path usageHistoryPath(const fs::path& dataDirectory, const std::string& fingerprint) {
  return dataDirectory / "usage" / (fingerprint + ".json");
}

UsageCounts loadUsageHistory(const fs::path& path, const std::vector<int>& layers,
                             int expertsPerLayer) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return {};
  try {
    const json j = json::parse(io::readFileText(path));
    if (j.at("format") != "strata-usage-history" || j.at("version") != 1 ||
        j.at("layers").get<std::vector<int>>() != layers ||
        j.at("experts_per_layer").get<int>() != expertsPerLayer)
      throw Error("written for a different model shape");
    UsageCounts counts = j.at("counts").get<UsageCounts>();
    if (counts.size() != layers.size() * static_cast<size_t>(expertsPerLayer))
      throw Error("wrong number of counts");
    return counts;
  } catch (const std::exception& e) {
    log().warn("{}: ignoring the expert usage history: {}", path.string(), e.what());
    return {};
  }
}

void saveUsageHistory(const fs::path& path, const std::vector<int>& layers, int expertsPerLayer,
                      const UsageCounts& counts) {
  const json j = {{"format", "strata-usage-history"},
                  {"version", 1},
                  {"layers", layers},
                  {"experts_per_layer", expertsPerLayer},
                  {"counts", counts}};
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  if (ec) throw Error(path.parent_path().string() + ": cannot create: " + ec.message());
  io::writeFileAtomically(path, j.dump());
}

}  // namespace strata::tier
