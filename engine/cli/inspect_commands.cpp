// inspect: one screen about a model folder (Hugging Face or Strata container) and this machine.
#include <cstdio>
#include <string>

#include "byte_sizes.h"
#include "commands.h"
#include "strata/inspect.h"

namespace strata::cli {
namespace {

std::string size(uint64_t bytes) { return decimalSize(bytes); }

const char* yesNo(bool value) { return value ? "yes" : "no"; }

}  // namespace

int runInspect(const Args& args) {
  args.allowOnly({"model", "context"});
  int context = 8192;
  if (args.has("context")) context = parseInt(args.require("context"), "--context");
  if (context < 1) throw UsageError("--context must be at least 1 token");
  const std::string dir = args.require("model");
  const ModelSummary m = inspectModel(dir);
  const MachineSummary machine = inspectMachine(dir);

  std::printf("model:        %s\n", dir.c_str());
  std::printf("kind:         %s\n", m.weightFormat.c_str());
  std::printf("architecture: %s (%s), hidden %d, vocabulary %d\n", m.architecture.c_str(),
              m.modelType.c_str(), m.hiddenSize, m.vocabSize);
  std::printf("layers:       %d (%d dense, %d MoE)%s\n", m.layers, m.denseLayers, m.moeLayers,
              m.hasMtp ? " + 1 MTP" : "");
  std::printf("experts:      %d routed per MoE layer, %d per token, %d shared\n", m.routedExperts,
              m.expertsPerToken, m.sharedExperts);
  std::printf("on disk:      %s\n", size(m.bytesOnDisk).c_str());
  std::printf("resident:     %s in RAM; streamed: %s of routed experts (one expert %s)\n",
              size(m.residentBytes).c_str(), size(m.streamedBytes).c_str(),
              size(m.expertBytes).c_str());
  for (size_t i = 0; i < m.conversions.size(); ++i) {
    const ConvertedSize& c = m.conversions[i];
    std::printf("%s%s resident, %s streamed, one expert %s (policy %s)\n",
                i == 0 ? "converted:    " : "              ", size(c.residentBytes).c_str(),
                size(c.streamedBytes).c_str(), size(c.expertBytes).c_str(), c.policy.c_str());
  }
  std::printf("KV cache:     %s per token, %s for %d tokens\n", size(m.kvBytesPerToken).c_str(),
              size(m.kvBytesPerToken * static_cast<uint64_t>(context)).c_str(), context);
  std::printf("fingerprint:  %s\n\n", m.sourceFingerprint.c_str());

  std::printf("  %-22s %-10s %8s %12s\n", "role", "format", "tensors", "bytes");
  for (const TensorCensusRow& row : m.census)
    std::printf("  %-22s %-10s %8lld %12s\n", row.role.c_str(), row.format.c_str(),
                static_cast<long long>(row.tensors), size(row.bytes).c_str());

  std::printf("\nmachine:      RAM %s total, %s available; %s free on disk; %d CPUs%s%s\n",
              size(machine.ramTotal).c_str(), size(machine.ramAvailable).c_str(),
              size(machine.diskFree).c_str(), machine.cpus, machine.cpuModel.empty() ? "" : ", ",
              machine.cpuModel.c_str());
  std::printf("cpu features: avx2 %s, avx512f %s, avx512vnni %s, avx-vnni %s; integer kernels %s\n",
              yesNo(machine.avx2), yesNo(machine.avx512f), yesNo(machine.avx512vnni),
              yesNo(machine.avxvnni), machine.integerKernels.c_str());
  const FitVerdict verdict = fitVerdict(m, machine, context);
  std::printf("verdict:      %s\n", verdict.text.c_str());
  if (!m.isContainer && !verdict.fits) {
    const std::string policy = policyThatFits(m, machine, context);
    if (policy.empty())
      std::printf("advice:       no conversion policy fits the RAM available now\n");
    else
      std::printf("advice:       convert with --policy %s: its resident weights fit\n",
                  policy.c_str());
  }
  return 0;
}

}  // namespace strata::cli
