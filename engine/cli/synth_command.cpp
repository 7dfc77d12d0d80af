// synth: a synthetic GLM-5-shaped model (random weights) written as a Strata container.
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "commands.h"
#include "strata/synth.h"

namespace strata::cli {
namespace {

double parseZipf(const std::string& text) {
  const double value = parseDouble(text, "--zipf");
  if (value < 0) throw UsageError("--zipf: '" + text + "' is not a number >= 0");
  return value;
}

uint64_t parseSeed(const std::string& text) {
  uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw UsageError("--seed: '" + text + "' is not a non-negative integer");
  return value;
}

// One status line, redrawn in place on a terminal and printed every few seconds otherwise.
class ProgressPrinter {
 public:
  ProgressPrinter() : tty_(::isatty(STDERR_FILENO) != 0) {}

  void operator()(const SynthProgress& p) {
    const bool last = p.unitsDone == p.unitsTotal;
    if (!last && p.seconds - printedAt_ < (tty_ ? 0.2 : 5.0)) return;
    printedAt_ = p.seconds;
    const double percent = p.bytesTotal ? 100.0 * double(p.bytesDone) / double(p.bytesTotal) : 100;
    std::fprintf(stderr, "%swriting %5.1f%%  %lld/%lld tensors and experts  %8.1f MB/s%s",
                 tty_ ? "\r" : "", percent, static_cast<long long>(p.unitsDone),
                 static_cast<long long>(p.unitsTotal), p.mbPerSecond, tty_ && !last ? "" : "\n");
    std::fflush(stderr);
  }

 private:
  bool tty_;
  double printedAt_ = -1e9;
};

}  // namespace

int runSynth(const Args& args) {
  args.allowOnly({"out", "preset", "from-config", "zipf", "seed", "threads", "dry-run"});
  SynthOptions options;
  options.dryRun = args.has("dry-run");
  if (!options.dryRun) options.output = args.require("out");
  if (args.has("preset") == args.has("from-config"))
    throw UsageError("synth needs exactly one of --preset and --from-config");
  if (args.has("preset")) {
    options.preset = args.require("preset");
    std::string known;
    bool found = false;
    for (const std::string& name : synthPresetNames()) {
      known += (known.empty() ? "" : ", ") + name;
      found = found || name == options.preset;
    }
    if (!found) throw UsageError("unknown preset '" + options.preset + "' (known: " + known + ")");
  } else {
    options.configFile = args.require("from-config");
  }
  if (args.has("zipf")) options.zipf = parseZipf(args.require("zipf"));
  if (args.has("seed")) options.seed = parseSeed(args.require("seed"));
  if (args.has("threads")) options.threads = parseInt(args.require("threads"), "--threads");
  if (options.threads < 0) throw UsageError("--threads must be 0 (all cores) or more");

  if (options.dryRun) {
    const SynthReport r = synthesizeModel(options, {});
    std::printf("plan: %.3f billion parameters, stored as convert --policy default stores them\n",
                r.parameters / 1e9);
    std::printf("container: %.2f GB (resident file %.2f GB; %lld routed experts, one %.2f MiB)\n",
                r.containerBytes / 1e9, r.residentBytes / 1e9, static_cast<long long>(r.experts),
                r.expertBytes / 1048576.0);
    std::printf(
        "in RAM: %.2f GB of resident weights at native precision, plus the KV cache "
        "and the expert cache\n",
        r.heldResidentBytes / 1e9);
    return 0;
  }
  ProgressPrinter printer;
  const SynthReport r = synthesizeModel(options, [&](const SynthProgress& p) { printer(p); });
  std::printf(
      "synthesized: %.3f billion parameters, %lld tensors and experts (seed %llu, zipf %g)\n",
      r.parameters / 1e9, static_cast<long long>(r.units),
      static_cast<unsigned long long>(options.seed), options.zipf);
  std::printf("container: %s, %.1f MB (resident %.1f MB, experts %.1f MB)\n",
              options.output.c_str(), r.containerBytes / 1e6, r.residentBytes / 1e6,
              (r.containerBytes - r.residentBytes) / 1e6);
  std::printf("written: %llu bytes in %.2f s, %.1f MB/s\n",
              static_cast<unsigned long long>(r.containerBytes), r.seconds, r.mbPerSecond);
  return 0;
}

}  // namespace strata::cli
