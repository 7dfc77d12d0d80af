// strata-cli: the command-line client of the engine. Its output formats are stable interfaces
// that scripts and tests parse; errors go to stderr with a non-zero exit status.
#include <bit>
#include <charconv>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "strata/engine.h"

namespace {

static_assert(std::endian::native == std::endian::little,
              "logit files are little-endian float32; add byte swapping for this platform");

constexpr const char* kUsage = R"(usage: strata-cli <command> [options]

commands:
  eval      --model DIR --tokens IDS [--precision f32|native] [--logits-out FILE]
            [--mtp-logits-out FILE] [--attention auto|expanded|absorbed] [--dense-attention]
            [--threads N]
            Teacher-forced forward pass. Prints "top1: <id> ..." (argmax per position) and, with
            --mtp-logits-out, "mtp_top1: ...". Logit files are little-endian float32
            [tokens x vocab]; MTP logits [tokens-1 x vocab], row p predicting token p+2.
  generate  --model DIR --tokens IDS --max-new N --greedy [--precision f32|native] [--threads N]
            Greedy continuation. Prints the new ids as "ids: <id> ...".
  help      This text.

IDS is a comma-separated list of token ids, e.g. 1,2,3.
)";

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::string option(const std::string& name) { return "--" + name; }

// --name value pairs and bare --flags.
class Args {
 public:
  Args(int argc, char** argv, int first, const std::vector<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
      std::string key = argv[i];
      if (key.rfind("--", 0) != 0) throw UsageError("unexpected argument '" + key + "'");
      key = key.substr(2);
      if (std::find(flags.begin(), flags.end(), key) != flags.end()) {
        values_[key] = "";
        continue;
      }
      if (i + 1 >= argc) throw UsageError(option(key) + " needs a value");
      values_[key] = argv[++i];
    }
  }
  bool has(const std::string& key) const { return values_.count(key) > 0; }
  std::string require(const std::string& key) const {
    auto it = values_.find(key);
    if (it == values_.end()) throw UsageError("missing " + option(key));
    return it->second;
  }
  std::string get(const std::string& key, const std::string& fallback) const {
    auto it = values_.find(key);
    return it == values_.end() ? fallback : it->second;
  }
  void allowOnly(const std::vector<std::string>& known) const {
    for (const auto& [key, value] : values_)
      if (std::find(known.begin(), known.end(), key) == known.end())
        throw UsageError("unknown option " + option(key));
  }

 private:
  std::map<std::string, std::string> values_;
};

int parseInt(const std::string& text, const std::string& what) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size())
    throw UsageError(what + ": '" + text + "' is not an integer");
  return value;
}

std::vector<int32_t> parseIds(const std::string& text) {
  std::vector<int32_t> ids;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string item = text.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    ids.push_back(parseInt(item, "--tokens"));
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  if (ids.empty()) throw UsageError("--tokens: no token ids given");
  return ids;
}

strata::EngineSettings settingsFrom(const Args& args) {
  strata::EngineSettings s;
  const std::string precision = args.get("precision", "f32");
  if (precision == "f32") s.precision = strata::Precision::F32;
  else if (precision == "native") s.precision = strata::Precision::Native;
  else throw UsageError("--precision must be f32 or native, not '" + precision + "'");
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

int runEval(const Args& args) {
  args.allowOnly({"model", "tokens", "precision", "logits-out", "mtp-logits-out", "attention",
                  "dense-attention", "threads"});
  const std::vector<int32_t> tokens = parseIds(args.require("tokens"));
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
  const std::vector<int32_t> prompt = parseIds(args.require("tokens"));
  const int maxNew = parseInt(args.require("max-new"), "--max-new");
  if (maxNew < 0) throw UsageError("--max-new must be >= 0");
  auto engine = strata::Engine::open(args.require("model"), settingsFrom(args));
  auto session = engine->newSession();
  printIds("ids:", session->generateGreedy(prompt, maxNew));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string command = argc > 1 ? argv[1] : "help";
  try {
    if (command == "eval") return runEval(Args(argc, argv, 2, {"dense-attention"}));
    if (command == "generate") return runGenerate(Args(argc, argv, 2, {"greedy"}));
    if (command == "help" || command == "--help" || command == "-h") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    throw UsageError("unknown command '" + command + "'");
  } catch (const UsageError& e) {
    std::cerr << "strata-cli: " << e.what() << "\n\n" << kUsage;
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "strata-cli: error: " << e.what() << "\n";
    return 1;
  }
}
