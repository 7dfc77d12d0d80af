// eval-tasks: exact-match accuracy of a model's answers on a held-out task set, per task and
// overall (scoring in task_eval.h).
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "precision_options.h"
#include "task_eval.h"

namespace strata::cli {

int runEvalTasks(const Args& args) {
  args.allowOnly({"model", "tasks", "precision", "threads", "json", "max-new", "limit", "verbose",
                  "kv-precision"});
  const std::string modelDir = args.require("model");
  const std::string tasksFile = args.get("tasks", modelDir + "/eval.jsonl");
  const int maxNew = parseInt(args.get("max-new", "256"), "--max-new");
  const int limit = parseInt(args.get("limit", "0"), "--limit");
  const bool json = args.has("json");

  EngineSettings settings;
  applyPrecisionOptions(args, settings);
  if (args.has("threads")) settings.threads = parseInt(args.require("threads"), "--threads");
  auto engine = Engine::open(modelDir, settings);

  using RowCallback = std::function<void(const std::string&, bool, const std::string&, const std::string&)>;
  const RowCallback printRow = [](const std::string& task, bool ok, const std::string& expected, const std::string& got) {
    std::fprintf(stderr, "%s %s: expected \"%s\", got \"%s\"\n", ok ? "ok  " : "FAIL", task.c_str(),
                 expected.c_str(), got.c_str());
  };
  const TaskEvalResult result = evaluateTasks(*engine, tasksFile, maxNew, limit,
                                              args.has("verbose") ? printRow : RowCallback());

  nlohmann::ordered_json tasks = nlohmann::ordered_json::object();
  nlohmann::ordered_json counts = nlohmann::ordered_json::object();
  for (const auto& [task, s] : result.tasks) {
    tasks[task] = s.accuracy();
    counts[task] = {{"correct", s.correct}, {"total", s.total}};
    if (!json) std::printf("%-12s %4d / %-4d %6.1f %%\n", task.c_str(), s.correct, s.total, 100 * s.accuracy());
  }
  const TaskScore& all = result.overall;
  if (json)
    std::puts(nlohmann::ordered_json(
                  {{"overall", all.accuracy()},
                   {"tasks", tasks},
                   {"counts", counts},
                   {"model", modelDir},
                   {"precision", settings.precision == Precision::Native ? "native" : "f32"}})
                  .dump()
                  .c_str());
  else
    std::printf("%-12s %4d / %-4d %6.1f %%\n", "overall", all.correct, all.total, 100 * all.accuracy());
  return 0;
}

}  // namespace strata::cli
