#pragma once
// Routing traces: which routed experts each MoE layer needed at each forward step, recorded
// from real decoding (`strata-cli bench decode --record-trace`) or made by
// tools/traces/*.py, and replayed by `strata-cli bench cache` against cache policies.
//
// Format: JSON lines, UTF-8. The first line is a header object
//   {"format":"strata-routing-trace","version":1,"model":"<name or path>",
//    "layers":[MoE layer indices],"experts_per_layer":E,"expert_bytes":B}
// then one line per (forward step, layer) that needed experts:
//   {"step":s,"layer":L,"experts":[e0,e1,...]}
// - step: forward-step counter (a prefill chunk or one decoded token), >= 0, non-decreasing
//   through the file; the steps of several conversations simply continue counting.
// - layer: one of the header's layers; at most one line per (step, layer).
// - experts: the union of the experts that layer needed in that step (all tokens of a
//   prefill chunk), strictly ascending, each in [0, E). Their order within a line carries no
//   meaning; replay takes them in ascending order.
// - Empty lines are ignored. Other fields are ignored, so later versions can add some.
// Layer indices and expert indices must be below 65535 (they form a 32-bit cache key).
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace strata::tier {

class TraceLineRules;  // routing_trace.cpp: the checks shared by the writer and the reader

struct RoutingTraceHeader {
  std::string model;
  std::vector<int> layers;  // MoE layer indices, as the model numbers them
  int expertsPerLayer = 0;
  uint64_t expertBytes = 0;  // bytes of one routed expert (all are the same size)
};

struct RoutingTraceLine {
  int step = 0;
  int layer = 0;
  std::vector<int> experts;  // ascending, unique
};

struct RoutingTrace {
  RoutingTraceHeader header;
  std::vector<RoutingTraceLine> lines;  // in file order
  int stepCount() const { return lines.empty() ? 0 : lines.back().step + 1; }
};

// Writes a trace line by line. Throws strata::Error naming the file on any I/O failure or on
// a line the reader would reject. close() (or the destructor, which cannot report errors)
// flushes; call close() to learn whether the file is complete.
class RoutingTraceWriter {
 public:
  RoutingTraceWriter(const std::string& path, const RoutingTraceHeader& header);
  ~RoutingTraceWriter();
  RoutingTraceWriter(const RoutingTraceWriter&) = delete;
  RoutingTraceWriter& operator=(const RoutingTraceWriter&) = delete;

  // experts: in any order, duplicates allowed (they are sorted and merged).
  void add(int step, int layer, std::span<const int> experts);
  void close();

 private:
  void write(const std::string& text);

  std::string path_;
  RoutingTraceHeader header_;
  std::FILE* file_ = nullptr;
  std::unique_ptr<TraceLineRules> rules_;
  std::vector<int> sorted_;  // reused per line
  std::string line_;         // reused per line
};

// Reads and validates a whole trace; errors name the file and line number.
RoutingTrace readRoutingTrace(const std::string& path);

}  // namespace strata::tier
