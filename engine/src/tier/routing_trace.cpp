#include "tier/routing_trace.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

#include "strata/error.h"

namespace strata::tier {
namespace {

constexpr const char* kFormat = "strata-routing-trace";
constexpr int kVersion = 1;
constexpr int kMaxIndex = 0xffff;  // layer and expert must fit a 16-bit half of a cache key

// Empty when the header is usable; otherwise what is wrong with it.
std::string headerProblem(const RoutingTraceHeader& h) {
  if (h.expertsPerLayer < 1 || h.expertsPerLayer > kMaxIndex)
    return "experts_per_layer must be in [1, 65535], got " + std::to_string(h.expertsPerLayer);
  std::vector<int> sorted = h.layers;
  std::sort(sorted.begin(), sorted.end());
  if (sorted.empty()) return "layers must list at least one MoE layer";
  if (sorted.front() < 0 || sorted.back() >= kMaxIndex)
    return "layer indices must be in [0, 65535)";
  if (auto twice = std::adjacent_find(sorted.begin(), sorted.end()); twice != sorted.end())
    return "layers lists layer " + std::to_string(*twice) + " twice";
  return {};
}

}  // namespace

// The rules every line obeys, shared by the writer and the reader so that whatever one
// writes the other reads.
class TraceLineRules {
 public:
  explicit TraceLineRules(const RoutingTraceHeader& h) : experts_(h.expertsPerLayer) {
    for (size_t i = 0; i < h.layers.size(); ++i) {
      const size_t layer = size_t(h.layers[i]);
      if (layer >= position_.size()) position_.resize(layer + 1, -1);
      position_[layer] = int(i);
    }
    lastStep_.assign(h.layers.size(), -1);
  }

  // Empty when the line is valid (and then it is remembered); otherwise the problem.
  std::string check(int step, int layer, std::span<const int> ascending) {
    if (step < 0) return "step must be >= 0, got " + std::to_string(step);
    if (step < step_)
      return "step " + std::to_string(step) + " comes after step " + std::to_string(step_) +
             " (steps must not decrease)";
    const int pos = layer >= 0 && size_t(layer) < position_.size() ? position_[size_t(layer)] : -1;
    if (pos < 0) return "layer " + std::to_string(layer) + " is not in the header's layers";
    if (lastStep_[size_t(pos)] == step)
      return "layer " + std::to_string(layer) + " appears twice in step " + std::to_string(step);
    for (size_t i = 0; i < ascending.size(); ++i) {
      const int e = ascending[i];
      if (e < 0 || e >= experts_)
        return "expert " + std::to_string(e) + " is out of range [0, " + std::to_string(experts_) +
               ")";
      if (i > 0 && e <= ascending[i - 1]) return "experts must be strictly ascending";
    }
    step_ = step;
    lastStep_[size_t(pos)] = step;
    return {};
  }

 private:
  int experts_;
  int step_ = 0;
  std::vector<int> position_;  // layer index -> position in the header's list, or -1
  std::vector<int> lastStep_;  // per position: the last step it appeared in
};

namespace {

RoutingTraceHeader parseHeader(const nlohmann::json& j, const std::string& where) {
  auto fail = [&](const std::string& what) { return Error(where + ": header: " + what); };
  if (!j.is_object()) throw fail("expected a JSON object");
  if (j.value("format", "") != kFormat)
    throw fail("\"format\" must be \"" + std::string(kFormat) + "\"");
  if (!j.contains("version") || !j["version"].is_number_integer() || j["version"] != kVersion)
    throw fail("\"version\" must be " + std::to_string(kVersion));
  RoutingTraceHeader h;
  if (j.contains("model") && j["model"].is_string()) h.model = j["model"];
  if (!j.contains("layers") || !j["layers"].is_array()) throw fail("\"layers\" must be an array");
  for (const auto& l : j["layers"]) {
    if (!l.is_number_integer()) throw fail("\"layers\" must hold integers");
    h.layers.push_back(l.get<int>());
  }
  if (!j.contains("experts_per_layer") || !j["experts_per_layer"].is_number_integer())
    throw fail("\"experts_per_layer\" must be an integer");
  h.expertsPerLayer = j["experts_per_layer"].get<int>();
  if (!j.contains("expert_bytes") || !j["expert_bytes"].is_number_unsigned())
    throw fail("\"expert_bytes\" must be a non-negative integer");
  h.expertBytes = j["expert_bytes"].get<uint64_t>();
  if (const std::string problem = headerProblem(h); !problem.empty()) throw fail(problem);
  return h;
}

RoutingTraceLine parseLine(const nlohmann::json& j) {
  auto integer = [&](const char* key) {
    if (!j.contains(key) || !j[key].is_number_integer())
      throw std::invalid_argument(std::string("\"") + key + "\" must be an integer");
    return j[key].get<int64_t>();
  };
  if (!j.is_object()) throw std::invalid_argument("expected a JSON object");
  RoutingTraceLine line;
  const int64_t step = integer("step"), layer = integer("layer");
  if (step > INT32_MAX || layer > INT32_MAX || step < INT32_MIN || layer < INT32_MIN)
    throw std::invalid_argument("step or layer out of range");
  line.step = int(step);
  line.layer = int(layer);
  if (!j.contains("experts") || !j["experts"].is_array())
    throw std::invalid_argument("\"experts\" must be an array");
  for (const auto& e : j["experts"]) {
    if (!e.is_number_integer() || e.get<int64_t>() > INT32_MAX || e.get<int64_t>() < INT32_MIN)
      throw std::invalid_argument("\"experts\" must hold integers");
    line.experts.push_back(e.get<int>());
  }
  return line;
}

}  // namespace

RoutingTraceWriter::RoutingTraceWriter(const std::string& path, const RoutingTraceHeader& header)
    : path_(path), header_(header) {
  if (const std::string problem = headerProblem(header); !problem.empty())
    throw Error(path + ": routing trace header: " + problem);
  rules_ = std::make_unique<TraceLineRules>(header);
  file_ = std::fopen(path.c_str(), "wb");
  if (!file_) throw Error(path + ": cannot create routing trace: " + std::strerror(errno));
  // Ordered: the fields appear as routing_trace.h documents them.
  const nlohmann::ordered_json j = {{"format", kFormat},
                                    {"version", kVersion},
                                    {"model", header.model},
                                    {"layers", header.layers},
                                    {"experts_per_layer", header.expertsPerLayer},
                                    {"expert_bytes", header.expertBytes}};
  write(j.dump() + "\n");
}

RoutingTraceWriter::~RoutingTraceWriter() {
  if (file_) std::fclose(file_);  // errors cannot be reported here; close() reports them
}

void RoutingTraceWriter::add(int step, int layer, std::span<const int> experts) {
  if (!file_) throw Error(path_ + ": routing trace already closed");
  sorted_.assign(experts.begin(), experts.end());
  std::sort(sorted_.begin(), sorted_.end());
  sorted_.erase(std::unique(sorted_.begin(), sorted_.end()), sorted_.end());
  if (const std::string problem = rules_->check(step, layer, sorted_); !problem.empty())
    throw Error(path_ + ": routing trace line for step " + std::to_string(step) + ": " + problem);
  line_.assign("{\"step\":").append(std::to_string(step));
  line_.append(",\"layer\":").append(std::to_string(layer)).append(",\"experts\":[");
  for (size_t i = 0; i < sorted_.size(); ++i)
    line_.append(i ? "," : "").append(std::to_string(sorted_[i]));
  line_.append("]}\n");
  write(line_);
}

void RoutingTraceWriter::write(const std::string& text) {
  if (std::fwrite(text.data(), 1, text.size(), file_) != text.size())
    throw Error(path_ + ": writing routing trace failed: " + std::strerror(errno));
}

void RoutingTraceWriter::close() {
  if (!file_) return;
  const bool failed = std::fflush(file_) != 0 || std::ferror(file_);
  const int error = errno;
  const bool closeFailed = std::fclose(file_) != 0;
  file_ = nullptr;
  if (failed || closeFailed)
    throw Error(path_ + ": writing routing trace failed: " + std::strerror(error));
}

RoutingTrace readRoutingTrace(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path + ": cannot open routing trace: " + std::strerror(errno));
  RoutingTrace trace;
  std::string text;
  size_t lineNo = 0;
  bool haveHeader = false;
  std::unique_ptr<TraceLineRules> rules;
  while (std::getline(in, text)) {
    ++lineNo;
    if (!text.empty() && text.back() == '\r') text.pop_back();
    if (text.empty()) continue;
    const std::string where = path + ":" + std::to_string(lineNo);
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) throw Error(where + ": not valid JSON");
    if (!haveHeader) {
      trace.header = parseHeader(j, where);
      rules = std::make_unique<TraceLineRules>(trace.header);
      haveHeader = true;
      continue;
    }
    RoutingTraceLine line;
    try {
      line = parseLine(j);
    } catch (const std::invalid_argument& e) {
      throw Error(where + ": " + e.what());
    }
    if (const std::string problem = rules->check(line.step, line.layer, line.experts);
        !problem.empty())
      throw Error(where + ": " + problem);
    trace.lines.push_back(std::move(line));
  }
  if (in.bad()) throw Error(path + ": reading routing trace failed");
  if (!haveHeader) throw Error(path + ": empty routing trace (no header line)");
  return trace;
}

}  // namespace strata::tier
