#include "io/tensor_rows.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "io/pread_all.h"
#include "quant/convert.h"
#include "quant/int_quant.h"
#include "strata/error.h"

namespace strata::io {

TensorRows::TensorRows(const std::filesystem::path& file, const TensorEntry& entry,
                       uint64_t dataOffset, uint64_t scalesOffset)
    : file_(file), entry_(entry), dataOffset_(dataOffset), scalesOffset_(scalesOffset) {
  const auto rows = static_cast<uint64_t>(entry.rows());
  dataRowBytes_ = rows ? entry.dataBytes() / rows : 0;
  scaleRowBytes_ = rows ? entry.scalesBytes() / rows : 0;
  fd_ = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw Error(file.string() + ": cannot open: " + std::strerror(errno));
}

TensorRows::~TensorRows() {
  if (fd_ >= 0) ::close(fd_);
}

void TensorRows::readAt(void* out, uint64_t bytes, uint64_t offset) const {
  preadAll(fd_, out, bytes, offset, file_, "a row of tensor '" + entry_.name + "'");
}

void TensorRows::row(int64_t r, float* out) const {
  if (r < 0 || r >= rows())
    throw Error("tensor '" + entry_.name + "': row " + std::to_string(r) + " is out of range (" +
                std::to_string(rows()) + " rows)");
  std::vector<std::byte> data(dataRowBytes_);
  readAt(data.data(), data.size(), dataOffset_ + static_cast<uint64_t>(r) * dataRowBytes_);
  const int64_t cols = entry_.cols();
  switch (entry_.format) {
    case QuantFormat::F32:
      std::memcpy(out, data.data(), sizeof(float) * static_cast<size_t>(cols));
      return;
    case QuantFormat::BF16:
      for (int64_t c = 0; c < cols; ++c) {
        uint16_t bits;
        std::memcpy(&bits, data.data() + 2 * c, 2);
        out[c] = quant::bf16ToF32(bits);
      }
      return;
    case QuantFormat::Int8:
    case QuantFormat::Int4: {
      std::vector<std::byte> scales(scaleRowBytes_);
      readAt(scales.data(), scales.size(),
             scalesOffset_ + static_cast<uint64_t>(r) * scaleRowBytes_);
      quant::QuantizedMatrix one;  // a one-row view: the same decoding as the whole matrix's
      one.format =
          entry_.format == QuantFormat::Int8 ? quant::IntFormat::Int8 : quant::IntFormat::Int4;
      one.rows = 1;
      one.cols = cols;
      one.paddedCols = entry_.paddedCols;
      one.groupSize = entry_.groupSize;
      one.viewCodes = reinterpret_cast<const uint8_t*>(data.data());
      one.viewScales = scales.data();
      quant::dequantizeRow(one, 0, out);
      return;
    }
  }
}

}  // namespace strata::io
