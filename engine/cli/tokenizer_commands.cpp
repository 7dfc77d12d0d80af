// tokenize, detokenize and bench tokenizer: a tokenizer.json from the command line.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "commands.h"
#include "core/median.h"
#include "strata/tokenizer.h"

namespace strata::cli {
namespace {

// A file's bytes exactly as they are (no newline handling).
std::string readBytes(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw strata::Error(path + ": cannot open the " + what + " (does it exist?)");
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void writeBytes(const std::string& bytes) {
  std::fwrite(bytes.data(), 1, bytes.size(), stdout);
  std::fflush(stdout);
}

std::string idsLine(const std::vector<int32_t>& ids) {
  std::string line = "ids:";
  for (int32_t id : ids) line.append(" ").append(std::to_string(id));
  return line.append("\n");
}

std::string jsonArray(const std::vector<int32_t>& ids) {
  std::string line = "[";
  for (size_t i = 0; i < ids.size(); ++i) line.append(i ? "," : "").append(std::to_string(ids[i]));
  return line.append("]\n");
}

// Each line of the file is a JSON string; prints the ids of each as a JSON array, in order.
void tokenizeJsonLines(const Tokenizer& tokenizer, const std::string& path) {
  std::istringstream lines(readBytes(path, "JSON-lines file"));
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    nlohmann::json text;
    try {
      text = nlohmann::json::parse(line);
    } catch (const nlohmann::json::parse_error&) {
      throw strata::Error(path + " line " + std::to_string(number) +
                          ": not a JSON string (each line must be one, e.g. \"Hello\")");
    }
    if (!text.is_string())
      throw strata::Error(path + " line " + std::to_string(number) +
                          ": expected a JSON string, found " + text.type_name());
    writeBytes(jsonArray(tokenizer.encode(text.get_ref<const std::string&>())));
  }
}

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since).count();
}

}  // namespace

int runTokenize(const Args& args) {
  args.allowOnly({"tokenizer", "text", "text-file", "jsonl"});
  const int sources = int(args.has("text")) + int(args.has("text-file")) + int(args.has("jsonl"));
  if (sources != 1) throw UsageError("give exactly one of --text, --text-file or --jsonl");
  const auto tokenizer = Tokenizer::load(args.require("tokenizer"));
  if (args.has("jsonl")) {
    tokenizeJsonLines(*tokenizer, args.require("jsonl"));
    return 0;
  }
  const std::string text =
      args.has("text") ? args.require("text") : readBytes(args.require("text-file"), "text file");
  writeBytes(idsLine(tokenizer->encode(text)));
  return 0;
}

int runDetokenize(const Args& args) {
  args.allowOnly({"tokenizer", "ids"});
  const std::vector<int32_t> ids = parseIds(args.require("ids"), "--ids");
  const auto tokenizer = Tokenizer::load(args.require("tokenizer"));
  writeBytes(tokenizer->decode(ids));
  return 0;
}

int runBenchTokenizer(const Args& args) {
  args.allowOnly({"tokenizer", "text-file", "repeats", "json"});
  const int repeats = args.has("repeats") ? parseInt(args.require("repeats"), "--repeats") : 5;
  if (repeats < 1) throw UsageError("--repeats must be at least 1");
  const std::string path = args.require("tokenizer");
  const std::string text = readBytes(args.require("text-file"), "text file");

  std::vector<double> load, cold, warm, decode;
  size_t tokens = 0;
  for (int r = 0; r < repeats; ++r) {
    auto start = std::chrono::steady_clock::now();
    const auto tokenizer = Tokenizer::load(path);
    load.push_back(seconds(start));
    start = std::chrono::steady_clock::now();
    const std::vector<int32_t> ids = tokenizer->encode(text);  // empty word cache
    cold.push_back(seconds(start));
    start = std::chrono::steady_clock::now();
    tokens = tokenizer->encode(text).size();  // words cached by the first pass
    warm.push_back(seconds(start));
    start = std::chrono::steady_clock::now();
    const std::string back = tokenizer->decode(ids);
    decode.push_back(seconds(start));
    if (back != text) throw strata::Error(path + ": decode(encode(text)) differs from the text");
  }
  const double megabytes = static_cast<double>(text.size()) / 1e6;
  const nlohmann::json result = {
      {"bench", "tokenizer"},
      {"bytes", text.size()},
      {"tokens", tokens},
      {"repeats", repeats},
      {"load_s", median(load)},
      {"encode_cold_s", median(cold)},
      {"encode_warm_s", median(warm)},
      {"decode_s", median(decode)},
      {"encode_cold_mb_per_s", megabytes / median(cold)},
      // The target: 1 MB of text encoded in well under a second (below 1 is inside it).
      {"cold_ratio_to_1s_per_mb", median(cold) / std::max(megabytes, 1e-9)},
  };
  if (args.has("json")) {
    std::puts(result.dump().c_str());
  } else {
    std::printf(
        "%zu bytes -> %zu tokens; median of %d: load %.3f s, encode %.3f s cold (%.1f MB/s), "
        "%.3f s warm, decode %.4f s\n",
        text.size(), tokens, repeats, median(load), median(cold), megabytes / median(cold),
        median(warm), median(decode));
  }
  return 0;
}

}  // namespace strata::cli
