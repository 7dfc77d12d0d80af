// convert: a Hugging Face checkpoint into a Strata container, with progress on the terminal.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

#include "byte_sizes.h"
#include "commands.h"
#include "strata/convert.h"
#include "strata/inspect.h"

namespace strata::cli {
namespace {

// A "Key:   123 kB" line of /proc/self/status, in kB (VmRSS now, VmHWM the peak so far).
long statusKb(const std::string& key) {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind(key + ":", 0) == 0) return std::stol(line.substr(key.size() + 1));
  return -1;
}

std::string clock(double seconds) {
  if (seconds < 0) return "--:--:--";
  const long s = static_cast<long>(seconds + 0.5);
  char text[32];
  std::snprintf(text, sizeof text, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  return text;
}

// One status line, redrawn in place on a terminal and printed every few seconds otherwise.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(::isatty(STDERR_FILENO) != 0) {}

  void operator()(const ConvertProgress& p) {
    const bool last = p.phase != ConvertProgress::Phase::Converting;
    const double every = tty_ ? 0.2 : 5.0;
    if (!last && p.seconds - printedAt_ < every) return;
    printedAt_ = p.seconds;
    const char* phase = p.phase == ConvertProgress::Phase::Converting  ? "converting"
                        : p.phase == ConvertProgress::Phase::Finishing ? "finishing "
                                                                       : "done      ";
    std::fprintf(stderr, "%s%s %5.1f%%  %lld/%lld  %8.1f MB/s  ETA %s  %-40.40s%s",
                 tty_ ? "\r" : "", phase, p.percent(), static_cast<long long>(p.unitsDone),
                 static_cast<long long>(p.unitsTotal), p.mbPerSecond, clock(p.etaSeconds).c_str(),
                 p.current.c_str(), tty_ && !(p.phase == ConvertProgress::Phase::Done) ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  bool tty_;
  double printedAt_ = -1e9;
};

// Hours before the result could tell: a note when this machine could not hold the converted
// model's resident weights, and the policy that would fit. Converting for another machine is
// fine, so it is only a note. A folder inspect cannot read is left to convertModel's errors.
void warnIfTooLargeForThisMachine(const ConvertOptions& options) {
  ModelSummary model;
  MachineSummary machine;
  try {
    model = inspectModel(options.input);
    machine = inspectMachine(options.input);
  } catch (const std::exception&) {
    return;
  }
  for (const ConvertedSize& c : model.conversions) {
    const uint64_t needed = c.residentBytes + model.kvBytesPerToken * 8192;
    if (c.policy != options.policy || needed <= machine.ramTotal) continue;
    const std::string better = policyThatFits(model, machine);
    std::fprintf(stderr,
                 "note: with --policy %s the engine holds %s of resident weights (+ KV for 8192 "
                 "tokens: %s), more than this machine's %s of RAM; %s\n",
                 c.policy.c_str(), decimalSize(c.residentBytes).c_str(),
                 decimalSize(needed).c_str(), decimalSize(machine.ramTotal).c_str(),
                 better.empty() ? "no policy fits it"
                                : ("--policy " + better + " fits (strata-cli inspect IN)").c_str());
  }
}

}  // namespace

int runConvert(const Args& args) {
  args.allowOnly({"in", "out", "policy", "threads", "delete-input", "chunk-mb"});
  const long startKb = statusKb("VmRSS");
  ConvertOptions options;
  options.input = args.require("in");
  options.output = args.require("out");
  options.policy = args.get("policy", "default");
  if (args.has("threads")) options.threads = parseInt(args.require("threads"), "--threads");
  if (options.threads < 0) throw UsageError("--threads must be 0 (all cores) or more");
  if (args.has("chunk-mb")) {
    const int mb = parseInt(args.require("chunk-mb"), "--chunk-mb");
    if (mb < 1) throw UsageError("--chunk-mb must be at least 1");
    options.chunkBytes = static_cast<uint64_t>(mb) << 20;
  }
  options.deleteInput = args.has("delete-input");

  warnIfTooLargeForThisMachine(options);
  ProgressPrinter printer;
  const ConvertReport r = convertModel(options, [&](const ConvertProgress& p) { printer(p); });
  if (r.alreadyComplete) {
    std::printf("already converted: %s is a finished container of this model and policy\n",
                options.output.c_str());
    return 0;
  }
  std::printf(
      "converted: %lld tensors and experts (%lld done by an earlier run), %.1f MB in "
      "%.1f s, %.1f MB/s\n",
      static_cast<long long>(r.unitsConverted), static_cast<long long>(r.unitsResumed),
      r.sourceBytes / 1e6, r.seconds, r.mbPerSecond);
  std::printf("container: %s, %.1f MB (resident %.1f MB, experts %.1f MB)\n",
              options.output.c_str(), r.containerBytes / 1e6, r.residentBytes / 1e6,
              (r.containerBytes - r.residentBytes) / 1e6);
  if (options.deleteInput) std::printf("source shards deleted: %d\n", r.shardsDeleted);
  std::printf("source fingerprint: %s\n", r.fingerprint.c_str());
  std::printf("memory: peak_rss_kb=%ld start_rss_kb=%ld\n", statusKb("VmHWM"), startKb);
  return 0;
}

}  // namespace strata::cli
