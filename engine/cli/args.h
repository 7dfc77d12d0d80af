#pragma once
// Command-line parsing shared by strata-cli's commands: `--name value` pairs and bare flags.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace strata::cli {

// A mistake in how the command was called: printed with the usage text, exit status 2.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

class Args {
 public:
  // Parses argv[first..]; `flags` are the options that take no value.
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
      std::string key = argv[i];
      if (key.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + key + "'");
      key.erase(0, 2);
      if (std::find(flags.begin(), flags.end(), key) != flags.end()) {
        values_[key] = "";
        continue;
      }
      if (i + 1 >= argc) throw UsageError("--" + key + " needs a value");
      values_[key] = argv[++i];
    }
  }

  bool has(const std::string& key) const { return values_.count(key) > 0; }

  std::string require(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) throw UsageError("missing --" + key);
    return it->second;
  }

  std::string get(const std::string& key, const std::string& fallback) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }

  // Rejects options the command does not know (typos must not be silently ignored).
  void allowOnly(const std::vector<std::string>& known) const {
    for (const auto& [key, value] : values_)
      if (std::find(known.begin(), known.end(), key) == known.end())
        throw UsageError("unknown option --" + key);
  }

 private:
  std::map<std::string, std::string> values_;
};

inline int parseInt(const std::string& text, const std::string& what) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw UsageError(what + ": '" + text + "' is not an integer");
  return value;
}

// A finite number (from_chars would also take "inf" and "nan").
inline double parseDouble(const std::string& text, const std::string& what) {
  double value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty() || !std::isfinite(value))
    throw UsageError(what + ": '" + text + "' is not a number");
  return value;
}

// "1,2,3" -> {1, 2, 3}
inline std::vector<int32_t> parseIds(const std::string& text, const std::string& what) {
  std::vector<int32_t> ids;
  size_t start = 0;
  while (true) {
    const size_t comma = text.find(',', start);
    ids.push_back(parseInt(text.substr(start, comma == std::string::npos ? comma : comma - start), what));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return ids;
}

}  // namespace strata::cli
