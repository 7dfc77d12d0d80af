// eval-tasks: exact-match accuracy of a model's answers on a held-out task set (JSONL rows
// {"task", "messages", "answer"}), per task and overall. Greedy decoding; the answer compared
// is the reply's visible content (reasoning excluded, stripped), as the trainer's Python eval.
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "strata/chat.h"
#include "strata/engine.h"

namespace strata::cli {
namespace {

struct TaskScore {
  int correct = 0;
  int total = 0;
  double accuracy() const { return total ? static_cast<double>(correct) / total : 0.0; }
};

}  // namespace

int runEvalTasks(const Args& args) {
  args.allowOnly({"model", "tasks", "precision", "threads", "json", "max-new", "limit", "verbose"});
  const std::string modelDir = args.require("model");
  const std::string tasksFile = args.get("tasks", modelDir + "/eval.jsonl");
  const int maxNew = parseInt(args.get("max-new", "256"), "--max-new");
  const int limit = parseInt(args.get("limit", "0"), "--limit");
  const bool json = args.has("json");
  const bool verbose = args.has("verbose");

  EngineSettings settings;
  const std::string precision = args.get("precision", "f32");
  if (precision == "native") settings.precision = Precision::Native;
  else if (precision != "f32") throw UsageError("--precision must be f32 or native");
  if (args.has("threads")) settings.threads = parseInt(args.require("threads"), "--threads");
  auto engine = Engine::open(modelDir, settings);
  if (!engine->tokenizer()) throw Error(modelDir + ": no tokenizer.json");
  auto session = engine->newSession();

  std::ifstream in(tasksFile);
  if (!in) throw Error(tasksFile + ": cannot open the task file");
  GenerateOptions options;
  options.sampling.temperature = 0.0f;
  options.maxNewTokens = maxNew;
  ChatOptions chat;
  chat.addGenerationPrompt = true;

  std::map<std::string, TaskScore> scores;
  std::string line;
  int lineNumber = 0;
  int done = 0;
  while (std::getline(in, line) && (limit <= 0 || done < limit)) {
    ++lineNumber;
    if (line.empty()) continue;
    nlohmann::ordered_json row;
    try {
      row = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw Error(tasksFile + ":" + std::to_string(lineNumber) + ": not JSON: " + e.what());
    }
    if (!row.is_object() || !row.contains("task") || !row["task"].is_string() ||
        !row.contains("answer") || !row["answer"].is_string() || !row.contains("messages"))
      throw Error(tasksFile + ":" + std::to_string(lineNumber) +
                  ": expected {\"task\": string, \"messages\": [...], \"answer\": string}");
    const std::string prompt = renderGlmChat(parseChatMessages(row["messages"]), {}, chat);
    const GenerateResult r = session->generate(engine->tokenizer()->encode(prompt), options);
    const AssistantReply reply = parseGlmReply(r.text, chat.enableThinking);
    const std::string expected = row["answer"].get<std::string>();
    const bool ok = reply.content == expected;
    TaskScore& s = scores[row["task"].get<std::string>()];
    s.total += 1;
    s.correct += ok ? 1 : 0;
    ++done;
    if (verbose)
      std::fprintf(stderr, "%s %s: expected \"%s\", got \"%s\"\n", ok ? "ok  " : "FAIL",
                   row["task"].get<std::string>().c_str(), expected.c_str(), reply.content.c_str());
  }
  if (done == 0) throw Error(tasksFile + ": no tasks");

  TaskScore overall;
  nlohmann::ordered_json tasks = nlohmann::ordered_json::object();
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  for (const auto& [task, s] : scores) {
    overall.correct += s.correct;
    overall.total += s.total;
    tasks[task] = s.accuracy();
    counts[task] = {{"correct", s.correct}, {"total", s.total}};
    if (!json) std::printf("%-12s %4d / %-4d %6.1f %%\n", task.c_str(), s.correct, s.total, 100 * s.accuracy());
  }
  if (json) {
    const nlohmann::ordered_json summary = {
        {"overall", overall.accuracy()}, {"tasks", tasks}, {"counts", counts},
        {"model", modelDir}, {"precision", precision}};
    std::puts(summary.dump().c_str());
  } else {
    std::printf("%-12s %4d / %-4d %6.1f %%\n", "overall", overall.correct, overall.total,
                100 * overall.accuracy());
  }
  return 0;
}

}  // namespace strata::cli
