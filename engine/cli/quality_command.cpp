// bench quality: what each quantization policy and kernel path costs in quality, against the
// f32 model in the same run — teacher-forced top-1 agreement (every position), perplexity on
// held-out text and task accuracy (task_eval.h).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "core/work_directory.h"
#include "commands.h"
#include "strata/chat.h"
#include "strata/convert.h"
#include "strata/engine.h"
#include "task_eval.h"

namespace strata::cli {
namespace {

// Held-out text with the positions that count for perplexity. From a task set: each row's
// prompt rendered with the generation prompt, thinking off (as in training, the prompt is not
// scored), followed by the expected answer and the <|user|> that ends the reply (scored).
// From a plain text file: every token is scored.
struct HeldOut {
  std::vector<int32_t> tokens;
  std::vector<bool> scored;

  void add(const std::vector<int32_t>& ids, bool score) {
    tokens.insert(tokens.end(), ids.begin(), ids.end());
    scored.insert(scored.end(), ids.size(), score);
  }
};

HeldOut heldOutFromTasks(const std::filesystem::path& tasksFile, const Tokenizer& tokenizer, size_t maxTokens) {
  std::ifstream in(tasksFile);
  if (!in) throw Error(tasksFile.string() + ": cannot open the task file");
  ChatOptions chat;
  chat.addGenerationPrompt = true;
  chat.enableThinking = false;
  HeldOut h;
  std::string line;
  while (std::getline(in, line) && h.tokens.size() < maxTokens) {
    if (line.empty()) continue;
    const auto row = nlohmann::ordered_json::parse(line);
    h.add(tokenizer.encode(renderGlmChat(parseChatMessages(row.at("messages")), {}, chat)), false);
    h.add(tokenizer.encode(row.at("answer").get<std::string>() + "<|user|>"), true);
  }
  return h;
}

struct Measured {
  double top1Agreement = 1.0;
  double perplexity = 0;
  TaskEvalResult tasks;
};

Measured measure(Engine& engine, const std::vector<int32_t>& tokens, const std::vector<bool>& scored,
                 const std::vector<int32_t>& referenceTop1,
                 const std::filesystem::path& tasksFile, int limit, std::vector<int32_t>* top1Out) {
  Measured m;
  const auto logits = engine.newSession()->append(tokens).logits;
  const size_t vocab = static_cast<size_t>(engine.info().vocabSize);
  double nll = 0;
  int agree = 0;
  int64_t counted = 0;
  for (size_t p = 0; p + 1 < tokens.size(); ++p) {
    const float* row = logits.data() + p * vocab;
    const int32_t top = argmax({row, vocab});
    if (top1Out) top1Out->push_back(top);
    if (!referenceTop1.empty() && top == referenceTop1[p]) ++agree;
    if (!scored[p + 1]) continue;
    ++counted;
    double maxLogit = row[0], sum = 0;
    for (size_t v = 1; v < vocab; ++v) maxLogit = std::max<double>(maxLogit, row[v]);
    for (size_t v = 0; v < vocab; ++v) sum += std::exp(row[v] - maxLogit);
    nll += maxLogit + std::log(sum) - row[tokens[p + 1]];
  }
  const double predictions = static_cast<double>(tokens.size() - 1);
  if (!referenceTop1.empty()) m.top1Agreement = agree / predictions;
  m.perplexity = std::exp(nll / static_cast<double>(std::max<int64_t>(counted, 1)));
  m.tasks = evaluateTasks(engine, tasksFile, 256, limit);
  return m;
}

}  // namespace

int runBenchQuality(const Args& args) {
  args.allowOnly({"model", "tasks", "text-file", "policies", "tokens", "limit", "work", "json"});
  const std::filesystem::path model = args.require("model");
  const std::filesystem::path tasksFile = args.get("tasks", (model / "eval.jsonl").string());
  // Converted copies go to --work (kept) or a temporary folder removed at the end.
  const WorkDirectory scratch(args.get("work", ""), "strata-bench-quality-");
  const std::filesystem::path work = scratch.path();
  const int maxTokens = parseInt(args.get("tokens", "2048"), "--tokens");
  const int limit = parseInt(args.get("limit", "0"), "--limit");
  const bool json = args.has("json");
  std::vector<std::string> policies;
  std::stringstream list(args.get("policies", "int8,default,int4-g32,int4-g64,int4-g128,int4-row"));
  for (std::string p; std::getline(list, p, ',');) policies.push_back(p);

  auto reference = Engine::open(model);
  if (!reference->tokenizer()) throw Error(model.string() + ": no tokenizer.json");
  HeldOut heldOut;
  if (args.has("text-file")) {
    std::ifstream in(args.require("text-file"), std::ios::binary);
    if (!in) throw Error(args.require("text-file") + ": cannot open");
    heldOut.add(reference->tokenizer()->encode(std::string(std::istreambuf_iterator<char>(in), {})), true);
  } else {
    heldOut = heldOutFromTasks(tasksFile, *reference->tokenizer(), static_cast<size_t>(maxTokens));
  }
  if (heldOut.tokens.size() > static_cast<size_t>(maxTokens)) {
    heldOut.tokens.resize(static_cast<size_t>(maxTokens));
    heldOut.scored.resize(static_cast<size_t>(maxTokens));
  }
  const std::vector<int32_t>& tokens = heldOut.tokens;
  const std::vector<bool>& scored = heldOut.scored;
  if (tokens.size() < 2) throw Error("bench quality: the held-out text is shorter than two tokens");

  auto report = [&](const std::string& policy, const std::string& kernels, const Measured& m,
                    double f32Perplexity, double f32Accuracy) {
    if (json) {
      nlohmann::ordered_json tasks = nlohmann::ordered_json::object();
      for (const auto& [task, s] : m.tasks.tasks) tasks[task] = s.accuracy();
      std::puts(nlohmann::ordered_json({{"policy", policy}, {"kernels", kernels},
                                        {"top1_agreement", m.top1Agreement}, {"perplexity", m.perplexity},
                                        {"perplexity_ratio", m.perplexity / f32Perplexity},
                                        {"task_accuracy", m.tasks.overall.accuracy()},
                                        {"task_accuracy_delta", m.tasks.overall.accuracy() - f32Accuracy},
                                        {"tasks", tasks}, {"tokens", tokens.size()}})
                    .dump()
                    .c_str());
    } else {
      std::printf("%-10s %-8s %8.2f%% %10.4f %+7.2f%% %8.1f%% %+6.1f\n", policy.c_str(), kernels.c_str(),
                  100 * m.top1Agreement, m.perplexity, 100 * (m.perplexity / f32Perplexity - 1),
                  100 * m.tasks.overall.accuracy(), 100 * (m.tasks.overall.accuracy() - f32Accuracy));
    }
    std::fflush(stdout);
  };

  if (!json)
    std::printf("%-10s %-8s %9s %10s %8s %9s %6s\n", "policy", "kernels", "top1-agr", "ppl", "Δppl",
                "tasks", "Δpts");
  std::vector<int32_t> top1;
  const Measured f32 = measure(*reference, tokens, scored, {}, tasksFile, limit, &top1);
  report("f32", "f32", f32, f32.perplexity, f32.tasks.overall.accuracy());
  reference.reset();

  for (const std::string& policy : policies) {
    ConvertOptions convert;
    convert.input = model;
    convert.output = work / policy;
    convert.policy = policy;
    convertModel(convert);  // resumes or reuses a finished conversion
    for (auto [path, name] : {std::pair{KernelPath::Dequantize, "dequant"}, std::pair{KernelPath::Automatic, "integer"}}) {
      EngineSettings settings;
      settings.kernelPath = path;
      auto engine = Engine::open(convert.output, settings);
      report(policy, name, measure(*engine, tokens, scored, top1, tasksFile, limit, nullptr), f32.perplexity,
             f32.tasks.overall.accuracy());
    }
  }
  return 0;
}

}  // namespace strata::cli
