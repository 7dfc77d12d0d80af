#include "task_eval.h"

#include <fstream>
#include <nlohmann/json.hpp>

#include "strata/chat.h"

namespace strata::cli {

TaskEvalResult evaluateTasks(
    Engine& engine, const std::filesystem::path& tasksFile, int maxNewTokens, int limit,
    const std::function<void(const std::string&, bool, const std::string&, const std::string&)>& onRow) {
  const std::string name = tasksFile.string();
  if (!engine.tokenizer()) throw Error(engine.info().directory.string() + ": no tokenizer.json");
  std::ifstream in(tasksFile);
  if (!in) throw Error(name + ": cannot open the task file");
  auto session = engine.newSession();
  GenerateOptions options;
  options.sampling.temperature = 0.0f;
  options.maxNewTokens = maxNewTokens;
  ChatOptions chat;
  chat.addGenerationPrompt = true;

  TaskEvalResult result;
  std::string line;
  int lineNumber = 0;
  while (std::getline(in, line) && (limit <= 0 || result.overall.total < limit)) {
    ++lineNumber;
    if (line.empty()) continue;
    const std::string where = name + ":" + std::to_string(lineNumber);
    nlohmann::ordered_json row;
    try {
      row = nlohmann::ordered_json::parse(line);
    } catch (const nlohmann::json::exception& e) {
      throw Error(where + ": not JSON: " + e.what());
    }
    if (!row.is_object() || !row.contains("task") || !row["task"].is_string() ||
        !row.contains("answer") || !row["answer"].is_string() || !row.contains("messages"))
      throw Error(where + ": expected {\"task\": string, \"messages\": [...], \"answer\": string}");
    const std::string prompt = renderGlmChat(parseChatMessages(row["messages"]), {}, chat);
    const GenerateResult r = session->generate(engine.tokenizer()->encode(prompt), options);
    const std::string got = parseGlmReply(r.text, chat.enableThinking).content;
    const std::string expected = row["answer"].get<std::string>();
    const bool ok = got == expected;
    const std::string task = row["task"].get<std::string>();
    for (TaskScore* s : {&result.tasks[task], &result.overall}) {
      s->total += 1;
      s->correct += ok ? 1 : 0;
    }
    if (onRow) onRow(task, ok, expected, got);
  }
  if (result.overall.total == 0) throw Error(name + ": no tasks");
  return result;
}

}  // namespace strata::cli
