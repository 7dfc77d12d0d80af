#pragma once
// A benchmark's scratch folder: the one the user named (kept), or a fresh one under the system's
// temporary folder that is removed when the benchmark ends.
#include <filesystem>
#include <random>
#include <string>
#include <system_error>

namespace strata {

class WorkDirectory {
 public:
  WorkDirectory(const std::filesystem::path& given, const std::string& prefix) : path_(given) {
    if (path_.empty()) {
      std::random_device rd;
      path_ = std::filesystem::temp_directory_path() / (prefix + std::to_string(rd()));
      owned_ = true;
    }
    std::filesystem::create_directories(path_);
  }
  ~WorkDirectory() {
    std::error_code ec;
    if (owned_) std::filesystem::remove_all(path_, ec);
  }
  WorkDirectory(const WorkDirectory&) = delete;
  WorkDirectory& operator=(const WorkDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  bool owned_ = false;
};

}  // namespace strata
