#pragma once
// The conversion's progress journal: one JSON object per line, appended and fsync'd.
//   {"done": "<unit id>", "xxh3": ["<16 hex>", ...]}   a unit's bytes are durable in the output
//   {"deleted": "<shard file>"}                          --delete-input removed a source shard
// "done" lines are written only after the output files are synced, so whatever the journal
// says is on disk. A line cut short by a kill is dropped (and cut off the file) when reopened.
#include <cstdint>
#include <filesystem>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

namespace strata::convert {

class Journal {
 public:
  // Opens `path`, creating it if absent, and reads what an earlier run recorded.
  explicit Journal(const std::filesystem::path& path);
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;
  ~Journal();  // pending lines are dropped, as a kill would drop them

  const std::unordered_map<std::string, std::vector<uint64_t>>& done() const { return done_; }
  const std::set<std::string>& deleted() const { return deleted_; }

  // Records a finished unit; written at the next commit (after the caller synced its data).
  void addDone(const std::string& unit, const std::vector<uint64_t>& checksums);
  bool hasPending() const { return !pending_.empty(); }
  // Appends the pending lines and fsyncs the journal.
  void commit();
  // Records a removed shard at once (appended and fsync'd).
  void addDeleted(const std::string& shard);

 private:
  void append(const std::string& lines);

  std::filesystem::path path_;
  int fd_ = -1;
  std::unordered_map<std::string, std::vector<uint64_t>> done_;
  std::set<std::string> deleted_;
  std::string pending_;
};

}  // namespace strata::convert
