#include "convert/journal.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>

#include "io/container_format.h"
#include "io/durable_file.h"
#include "strata/error.h"

namespace strata::convert {

using nlohmann::json;

Journal::Journal(const std::filesystem::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw Error(path.string() + ": cannot open: " + std::strerror(errno));
  const std::string text = io::readFileText(path);
  size_t start = 0, lineNumber = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    if (end == std::string::npos) {
      // Cut short by a kill: drop it, and cut it off so the next line starts cleanly.
      if (::ftruncate(fd_, static_cast<off_t>(start)) != 0)
        throw Error(path.string() + ": cannot truncate: " + std::strerror(errno));
      break;
    }
    ++lineNumber;
    const std::string where = path.string() + ":" + std::to_string(lineNumber);
    try {
      const json line = json::parse(text.substr(start, end - start));
      if (line.contains("done")) {
        std::vector<uint64_t> checksums;
        for (const json& c : line.at("xxh3")) {
          const auto value = io::parseHex64(c.get<std::string>());
          if (!value) throw Error(where + ": bad checksum");
          checksums.push_back(*value);
        }
        done_[line["done"].get<std::string>()] = std::move(checksums);
      } else if (line.contains("deleted")) {
        deleted_.insert(line["deleted"].get<std::string>());
      } else {
        throw Error(where + ": unknown journal record");
      }
    } catch (const json::exception& e) {
      throw Error(where + ": corrupt journal line (" + e.what() +
                  "); delete the output directory and start over");
    }
    start = end + 1;
  }
}

Journal::~Journal() {
  if (fd_ >= 0) ::close(fd_);
}

void Journal::addDone(const std::string& unit, const std::vector<uint64_t>& checksums) {
  json line;
  line["done"] = unit;
  json sums = json::array();
  for (uint64_t c : checksums) sums.push_back(io::hex64(c));
  line["xxh3"] = sums;
  pending_ += line.dump() + "\n";
  done_[unit] = checksums;
}

void Journal::append(const std::string& lines) {
  size_t done = 0;
  while (done < lines.size()) {
    const ssize_t n = ::write(fd_, lines.data() + done, lines.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(path_.string() + ": write failed: " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  if (::fdatasync(fd_) != 0) throw Error(path_.string() + ": fdatasync failed");
}

void Journal::commit() {
  if (pending_.empty()) return;
  append(pending_);
  pending_.clear();
}

void Journal::addDeleted(const std::string& shard) {
  json line;
  line["deleted"] = shard;
  append(line.dump() + "\n");
  deleted_.insert(shard);
}

}  // namespace strata::convert
