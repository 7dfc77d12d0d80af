#include "model/fingerprint.h"

#include <xxhash.h>

#include "io/container.h"
#include "io/container_format.h"
#include "io/durable_file.h"
#include "io/safetensors.h"

namespace strata::model {

std::string modelFingerprint(const io::Container& container) {
  const std::string manifest = io::readFileText(container.directory() / io::kManifestName);
  return io::hex64(XXH3_64bits(manifest.data(), manifest.size()));
}

std::string modelFingerprint(const std::filesystem::path& dir, const io::TensorStore& store) {
  std::string identity = io::readFileText(dir / "config.json");
  for (size_t i = 0; i < store.files().size(); ++i)
    identity += io::hex64(store.headerChecksum(static_cast<int>(i)));
  return io::hex64(XXH3_64bits(identity.data(), identity.size()));
}

}  // namespace strata::model
