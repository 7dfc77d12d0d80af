#pragma once
// A model's identity for files that must only be used with the same weights (saved KV caches,
// expert usage history): 16 hex digits of XXH3-64. A container: its manifest (which records
// every file's header checksum). A Hugging Face checkpoint: config.json and every safetensors
// header (names, shapes, dtypes, offsets); the tensor bytes are not read.
#include <filesystem>
#include <string>

namespace strata::io {
class Container;
class TensorStore;
}  // namespace strata::io

namespace strata::model {

std::string modelFingerprint(const io::Container& container);
// `store` is the checkpoint's in `modelDir` (config.json is read from the folder).
std::string modelFingerprint(const std::filesystem::path& modelDir, const io::TensorStore& store);

}  // namespace strata::model
