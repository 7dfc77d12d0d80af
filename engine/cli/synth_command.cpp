// synth: a synthetic GLM-5-shaped model (random weights) written as a Strata container.
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "byte_sizes.h"
#include "commands.h"
#include "strata/inspect.h"
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

std::string knownPolicies() {
  std::string known;
  for (const std::string& name : synthPolicyNames()) known += (known.empty() ? "" : ", ") + name;
  return known;
}

// Whether resident weights plus the KV cache fit this machine's RAM, as inspect judges it.
const char* fitWord(const SynthReport& r, const MachineSummary& machine, int context) {
  ModelSummary model;
  model.isContainer = true;
  model.residentBytes = r.heldResidentBytes;
  model.kvBytesPerToken = r.kvBytesPerToken;
  const FitVerdict v = fitVerdict(model, machine, context);
  return v.fits ? "fits" : v.fitsTotal ? "tight" : "does not fit";
}

// --dry-run: each policy's sizes, planned from the config alone, and whether it fits here.
int printDryRun(SynthOptions options, const std::vector<std::string>& policies, int context) {
  const MachineSummary machine = inspectMachine(".");
  std::vector<SynthReport> reports;
  for (const std::string& policy : policies) {
    options.policy = policy;
    reports.push_back(synthesizeModel(options, {}));
  }
  const SynthReport& first = reports.front();
  std::printf(
      "plan: %.3f billion parameters, %lld routed experts streamed from disk, KV cache %s "
      "per token\n",
      first.parameters / 1e9, static_cast<long long>(first.experts),
      decimalSize(first.kvBytesPerToken).c_str());
  std::printf("this machine: %.1f GB of RAM available of %.1f GB\n", machine.ramAvailable / 1e9,
              machine.ramTotal / 1e9);
  std::printf("%-10s %10s %11s %16s %10s  %s\n", "policy", "container", "one expert",
              "resident in RAM", "+ KV", "verdict");
  for (size_t i = 0; i < reports.size(); ++i) {
    const SynthReport& r = reports[i];
    const uint64_t withKv = r.heldResidentBytes + r.kvBytesPerToken * uint64_t(context);
    std::printf("%-10s %10s %11s %16s %10s  %s\n", policies[i].c_str(),
                decimalSize(r.containerBytes).c_str(), decimalSize(r.expertBytes).c_str(),
                decimalSize(r.heldResidentBytes).c_str(), decimalSize(withKv).c_str(),
                fitWord(r, machine, context));
  }
  std::printf(
      "resident in RAM: the weights the engine holds at native precision (all but the routed\n"
      "experts and the embedding table, which stay on disk); + KV: with the f32 KV cache for %d\n"
      "tokens (--context). Experts stream from disk through the expert cache in the RAM left\n"
      "over; `convert --policy NAME` stores a checkpoint so.\n",
      context);
  return 0;
}

}  // namespace

int runSynth(const Args& args) {
  args.allowOnly(
      {"out", "preset", "from-config", "zipf", "seed", "threads", "policy", "dry-run", "context"});
  SynthOptions options;
  options.dryRun = args.has("dry-run");
  if (!options.dryRun) options.output = args.require("out");
  if (args.has("context") && !options.dryRun) throw UsageError("--context goes with --dry-run");
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
  if (args.has("policy")) {
    options.policy = args.require("policy");
    const std::vector<std::string> names = synthPolicyNames();
    if (std::find(names.begin(), names.end(), options.policy) == names.end())
      throw UsageError("unknown policy '" + options.policy + "' (known: " + knownPolicies() + ")");
  }

  if (options.dryRun) {
    int context = 8192;
    if (args.has("context")) context = parseInt(args.require("context"), "--context");
    if (context < 1) throw UsageError("--context must be at least 1 token");
    const std::vector<std::string> policies =
        args.has("policy") ? std::vector<std::string>{options.policy} : synthPolicyNames();
    return printDryRun(options, policies, context);
  }
  ProgressPrinter printer;
  const SynthReport r = synthesizeModel(options, [&](const SynthProgress& p) { printer(p); });
  std::printf(
      "synthesized: %.3f billion parameters, %lld tensors and experts (seed %llu, zipf %g, "
      "policy %s)\n",
      r.parameters / 1e9, static_cast<long long>(r.units),
      static_cast<unsigned long long>(options.seed), options.zipf, options.policy.c_str());
  std::printf("container: %s, %.1f MB (resident %.1f MB, experts %.1f MB)\n",
              options.output.c_str(), r.containerBytes / 1e6, r.residentBytes / 1e6,
              (r.containerBytes - r.residentBytes) / 1e6);
  std::printf("written: %llu bytes in %.2f s, %.1f MB/s\n",
              static_cast<unsigned long long>(r.containerBytes), r.seconds, r.mbPerSecond);
  return 0;
}

}  // namespace strata::cli
