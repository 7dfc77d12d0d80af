// eval and generate: run a model's forward pass from token ids.
#include <bit>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "commands.h"
#include "precision_options.h"
#include "strata/engine.h"

namespace strata::cli {
namespace {

static_assert(std::endian::native == std::endian::little,
              "logit files are little-endian float32; add byte swapping for this platform");

strata::EngineSettings settingsFrom(const Args& args) {
  strata::EngineSettings s;
  applyPrecisionOptions(args, s);
  const std::string form = args.get("attention", "auto");
  if (form == "auto") s.attentionForm = strata::AttentionForm::Automatic;
  else if (form == "expanded") s.attentionForm = strata::AttentionForm::Expanded;
  else if (form == "absorbed") s.attentionForm = strata::AttentionForm::Absorbed;
  else throw UsageError("--attention must be auto, expanded or absorbed, not '" + form + "'");
  s.denseAttention = args.has("dense-attention");
  if (args.has("threads")) s.threads = parseInt(args.require("threads"), "--threads");
  return s;
}

void writeFloats(const std::string& path, const std::vector<float>& values) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(values.data()),
            static_cast<std::streamsize>(values.size() * sizeof(float)));
  out.close();
  if (!out) throw strata::Error(path + ": could not write the logits (disk full or no permission?)");
}

void printIds(const char* label, const std::vector<int32_t>& ids) {
  std::string line = label;
  for (int32_t id : ids) line.append(" ").append(std::to_string(id));
  std::puts(line.c_str());
}

std::vector<int32_t> argmaxRows(const std::vector<float>& logits, int vocab) {
  std::vector<int32_t> top;
  for (size_t row = 0; row * vocab < logits.size(); ++row)
    top.push_back(strata::argmax({logits.data() + row * vocab, static_cast<size_t>(vocab)}));
  return top;
}

}  // namespace

int runEval(const Args& args) {
  args.allowOnly({"model", "tokens", "precision", "logits-out", "mtp-logits-out", "attention",
                  "dense-attention", "threads"});
  const std::vector<int32_t> tokens = parseIds(args.require("tokens"), "--tokens");
  auto engine = strata::Engine::open(args.require("model"), settingsFrom(args));
  const int vocab = engine->info().vocabSize;
  auto session = engine->newSession();
  const strata::Session::StepResult step = session->append(tokens);
  printIds("top1:", argmaxRows(step.logits, vocab));
  if (args.has("logits-out")) writeFloats(args.require("logits-out"), step.logits);

  if (args.has("mtp-logits-out")) {
    if (!engine->info().hasMtp) throw strata::Error("--mtp-logits-out: this model has no MTP layer");
    const size_t rows = tokens.size() - 1;
    const size_t width = static_cast<size_t>(engine->info().hiddenSize);
    const std::vector<float> mtp = session->appendMtp(
        {step.hidden.data(), rows * width}, {tokens.data() + 1, rows});
    printIds("mtp_top1:", argmaxRows(mtp, vocab));
    writeFloats(args.require("mtp-logits-out"), mtp);
  }
  return 0;
}

int runGenerate(const Args& args) {
  args.allowOnly({"model", "tokens", "max-new", "greedy", "precision", "attention", "threads"});
  if (!args.has("greedy"))
    throw UsageError("generate: only --greedy decoding is available so far (sampling comes with the tokenizer/sampling work)");
  const std::vector<int32_t> prompt = parseIds(args.require("tokens"), "--tokens");
  const int maxNew = parseInt(args.require("max-new"), "--max-new");
  if (maxNew < 0) throw UsageError("--max-new must be >= 0");
  auto engine = strata::Engine::open(args.require("model"), settingsFrom(args));
  auto session = engine->newSession();
  strata::GenerateOptions options;
  options.sampling.temperature = 0.0f;  // greedy
  options.maxNewTokens = maxNew;
  if (maxNew == 0) {
    printIds("ids:", {});
    return 0;
  }
  printIds("ids:", session->generate(prompt, options).tokens);
  return 0;
}

}  // namespace strata::cli
