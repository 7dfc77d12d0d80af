#pragma once
// strata-cli's commands. Each returns the process exit status and throws UsageError (exit 2)
// or strata::Error (exit 1) on failure. Output formats are stable interfaces: scripts and
// tests parse them.
#include <string>
#include <vector>

#include "args.h"

namespace strata::cli {

struct Command {
  std::string name;
  std::vector<std::string> flags;  // options without a value
  int (*run)(const Args& args);
  std::string usage;               // shown by `strata-cli help`
};

// model_commands.cpp
int runEval(const Args& args);
int runGenerate(const Args& args);

// conversation_commands.cpp
int runRun(const Args& args);
int runChat(const Args& args);

// eval_tasks_command.cpp
int runEvalTasks(const Args& args);

// bench_commands.cpp
int runBenchKernels(const Args& args);

// cache_bench_command.cpp
int runBenchCache(const Args& args);

// resume_bench_command.cpp
int runBenchResume(const Args& args);

// decode_bench_command.cpp
int runBenchDecode(const Args& args);

// spec_bench_command.cpp
int runBenchSpec(const Args& args);
int runBenchServe(const Args& args);

// quality_command.cpp
int runBenchQuality(const Args& args);

// chat_commands.cpp
int runChatFormat(const Args& args);

// tokenizer_commands.cpp
int runTokenize(const Args& args);
int runDetokenize(const Args& args);
int runBenchTokenizer(const Args& args);

// convert_commands.cpp
int runConvert(const Args& args);

// synth_command.cpp
int runSynth(const Args& args);

// inspect_commands.cpp
int runInspect(const Args& args);

// serve_command.cpp
int runServe(const Args& args);

}  // namespace strata::cli
