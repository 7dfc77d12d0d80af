#include "convert/disk_space.h"

#include <sys/stat.h>

#include <algorithm>

#include "core/text.h"
#include "strata/error.h"

namespace strata::convert {

uint64_t bytesToWrite(const std::vector<io::ContainerFile>& files, const std::filesystem::path& dir) {
  uint64_t needed = 0;
  for (const io::ContainerFile& file : files) {
    struct stat st {};
    const uint64_t onDisk =
        ::stat((dir / file.name).c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_blocks) * 512 : 0;
    needed += file.fileBytes - std::min(file.fileBytes, onDisk);
  }
  return needed;
}

void requireRoom(uint64_t needed, uint64_t available, const std::filesystem::path& dir) {
  if (needed <= available) return;
  throw Error(dir.string() + ": the container needs " + bytesText(static_cast<int64_t>(needed)) +
              " more, and the disk has " + bytesText(static_cast<int64_t>(available)) +
              " free; free some space and rerun (the conversion resumes), choose another disk, "
              "or convert with --delete-input");
}

}  // namespace strata::convert
