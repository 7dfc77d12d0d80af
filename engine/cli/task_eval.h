#pragma once
// Exact-match scoring of a model on a task set (JSONL rows {"task", "messages", "answer"}):
// greedy, GLM chat format with the template's defaults (generation prompt, thinking on), the
// reply's visible content (reasoning excluded, stripped) compared with the answer.
#include <filesystem>
#include <functional>
#include <map>
#include <string>

#include "strata/engine.h"

namespace strata::cli {

struct TaskScore {
  int correct = 0;
  int total = 0;
  double accuracy() const { return total ? static_cast<double>(correct) / total : 0.0; }
};

struct TaskEvalResult {
  std::map<std::string, TaskScore> tasks;
  TaskScore overall;
};

// `limit` > 0 stops after that many rows. onRow (optional) sees each row's outcome.
TaskEvalResult evaluateTasks(
    Engine& engine, const std::filesystem::path& tasksFile, int maxNewTokens, int limit,
    const std::function<void(const std::string& task, bool ok, const std::string& expected,
                             const std::string& got)>& onRow = {});

}  // namespace strata::cli
