// run and chat: talk to a model in the terminal. The answer goes to stdout; the model's
// thinking and the speed line go to stderr, so scripts can take stdout as the answer.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "commands.h"
#include "io/durable_file.h"
#include "memory_options.h"
#include "precision_options.h"
#include "speculation_options.h"
#include "strata/chat.h"
#include "strata/engine.h"
#include "strata/grammar.h"

namespace strata::cli {
namespace {

struct ConversationSetup {
  std::unique_ptr<Engine> engine;
  GenerateOptions generate;
  ChatOptions chat;
  std::string system;
};

const std::vector<std::string> kConversationOptions = {
    "model",     "system",         "max-new",     "temperature",  "top-p",    "top-k",
    "min-p",     "repeat-penalty", "logit-bias",  "seed",         "no-think", "threads",
    "precision", "ram-gb",         "io",          "kv-precision", "grammar",  "json-schema",
    "speculate", "mtp-depth",      "mtp-min-prob", "mtp-vocab"};

// --grammar FILE (GBNF) or --json-schema FILE: every reply must follow it. Read before the
// model opens, so a bad file fails at once, its message naming the file.
std::shared_ptr<const Grammar> grammarOption(const Args& args) {
  if (args.has("grammar") && args.has("json-schema"))
    throw UsageError("give --grammar or --json-schema, not both");
  const bool gbnf = args.has("grammar");
  if (!gbnf && !args.has("json-schema")) return nullptr;
  const std::string path = args.require(gbnf ? "grammar" : "json-schema");
  const std::string text = io::readFileText(path);
  try {
    return gbnf ? Grammar::fromGbnf(text) : Grammar::fromJsonSchema(text);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

float parseFloat(const std::string& text, const std::string& what) {
  return static_cast<float>(parseDouble(text, what));
}

// --logit-bias ID=BIAS[,ID=BIAS...]: added to those tokens' logits (-100 bans, +100 forces).
std::vector<std::pair<int32_t, float>> logitBiasOption(const Args& args, int vocabSize) {
  std::vector<std::pair<int32_t, float>> biases;
  if (!args.has("logit-bias")) return biases;
  const std::string text = args.require("logit-bias");
  for (size_t start = 0; start <= text.size();) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string item = text.substr(start, comma - start);
    const size_t equals = item.find('=');
    if (equals == std::string::npos)
      throw UsageError("--logit-bias: '" + item + "' is not ID=BIAS");
    const int id = parseInt(item.substr(0, equals), "--logit-bias");
    if (id < 0 || id >= vocabSize)
      throw UsageError("--logit-bias: token " + std::to_string(id) +
                       " is not in the model's vocabulary of " + std::to_string(vocabSize));
    const float bias = parseFloat(item.substr(equals + 1), "--logit-bias");
    if (bias < -100.0f || bias > 100.0f)
      throw UsageError("--logit-bias: token " + std::to_string(id) +
                       ": the bias must be in [-100, 100]");
    biases.emplace_back(id, bias);
    start = comma + 1;
  }
  return biases;
}

ConversationSetup setUp(const Args& args) {
  ConversationSetup s;
  s.generate.grammar = grammarOption(args);
  EngineSettings settings;
  if (args.has("threads")) settings.threads = parseInt(args.require("threads"), "--threads");
  applyPrecisionOptions(args, settings);
  applyMemoryOptions(args, settings.memory);
  applySpeculationOptions(args, settings.speculation);
  s.engine = Engine::open(args.require("model"), settings);
  if (!s.engine->tokenizer())
    throw Error(args.require("model") + ": no tokenizer.json, so there is no text to chat with");

  SamplingParams& p = s.generate.sampling;
  p.temperature = parseFloat(args.get("temperature", "0.7"), "--temperature");
  p.topP = parseFloat(args.get("top-p", "0.95"), "--top-p");
  p.topK = parseInt(args.get("top-k", "0"), "--top-k");
  p.minP = parseFloat(args.get("min-p", "0"), "--min-p");
  p.repetitionPenalty = parseFloat(args.get("repeat-penalty", "1"), "--repeat-penalty");
  p.seed = static_cast<uint64_t>(parseInt(args.get("seed", "0"), "--seed"));
  p.logitBias = logitBiasOption(args, s.engine->info().vocabSize);
  validateSamplingParams(p);
  s.generate.maxNewTokens = parseInt(args.get("max-new", "512"), "--max-new");
  s.chat.addGenerationPrompt = true;
  s.chat.enableThinking = thinkBeforeGrammar(s.engine->tokenizer(), !args.has("no-think"), s.generate);
  s.system = args.get("system", "");
  return s;
}

// Routes streamed reply text: thinking (up to "</think>") to stderr, the answer to stdout.
class ReplyPrinter {
 public:
  explicit ReplyPrinter(bool thinkingOpen) : thinking_(thinkingOpen), tty_(isatty(2)) {}

  void operator()(std::string_view text) {
    buffer_ += text;
    while (!buffer_.empty()) {
      if (thinking_) {
        const size_t end = buffer_.find("</think>");
        // Hold back a tail that might be the start of "</think>".
        const size_t safe = end != std::string::npos ? end : safeLength(buffer_, "</think>");
        writeThinking(buffer_.substr(0, safe));
        if (end == std::string::npos) {
          buffer_.erase(0, safe);
          return;
        }
        buffer_.erase(0, end + 8);
        thinking_ = false;
        if (tty_) std::fputs("\x1b[0m", stderr);
        std::fputs("\n", stderr);
      } else {
        std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
        std::fflush(stdout);
        buffer_.clear();
      }
    }
  }

  void finish() {
    if (thinking_) writeThinking(buffer_);
    else std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    buffer_.clear();
    if (thinking_ && started_) std::fputs(tty_ ? "\x1b[0m\n" : "\n", stderr);  // cut off mid-thought
    std::fputs("\n", stdout);
    std::fflush(stdout);
  }

 private:
  static size_t safeLength(const std::string& text, std::string_view marker) {
    for (size_t keep = std::min(text.size(), marker.size() - 1); keep > 0; --keep)
      if (text.compare(text.size() - keep, keep, marker, 0, keep) == 0) return text.size() - keep;
    return text.size();
  }

  void writeThinking(std::string_view text) {
    if (text.empty()) return;
    if (!started_) {
      std::fputs(tty_ ? "\x1b[2mthinking: " : "thinking: ", stderr);
      started_ = true;
    }
    std::fwrite(text.data(), 1, text.size(), stderr);
    std::fflush(stderr);
  }

  bool thinking_;
  bool tty_;
  bool started_ = false;
  std::string buffer_;
};

// Speculation in one reply, and each drafter's measured acceptance and speed-up so far.
std::string speculationLine(const Engine& engine, const SpeculationSummary& s) {
  if (s.drafted == 0) return "";
  char text[96];
  std::snprintf(text, sizeof text, ", %.2f tokens/pass, %lld of %lld drafts kept", s.tokensPerForward(),
                static_cast<long long>(s.accepted), static_cast<long long>(s.drafted));
  std::string line = text;
  for (const DrafterStats& d : engine.speculationStats()) {
    if (d.rounds == 0) continue;
    const std::string depth = d.depth > 0 ? ", depth " + std::to_string(d.depth) : "";
    std::snprintf(text, sizeof text, " (%s %.0f%%, x%.2f%s%s)", d.name.c_str(), 100.0 * d.acceptance,
                  d.speedup, depth.c_str(), d.active ? "" : ", paused");
    line += text;
  }
  return line;
}

void printSpeed(const Engine& engine, const GenerateResult& r) {
  const double tokensPerSecond =
      r.decodeSeconds > 0 ? static_cast<double>(r.tokens.size() - 1) / r.decodeSeconds : 0.0;
  std::fprintf(stderr, "[%zu tokens, %.1f tokens/s, prompt %lld tokens (%lld reused) in %.0f ms, %s%s]\n",
               r.tokens.size(), tokensPerSecond, static_cast<long long>(r.promptTokens),
               static_cast<long long>(r.reusedTokens), r.prefillSeconds * 1000.0,
               r.finishReason.c_str(), speculationLine(engine, r.speculation).c_str());
}

// One assistant turn: render, generate, print; returns the parsed reply.
AssistantReply reply(ConversationSetup& s, Session& session, const std::vector<ChatMessage>& messages) {
  const std::string prompt = renderGlmChat(messages, {}, s.chat);
  const std::vector<int32_t> ids = s.engine->tokenizer()->encode(prompt);
  ReplyPrinter printer(s.chat.enableThinking);
  const GenerateResult r = session.generate(ids, s.generate, std::ref(printer));
  printer.finish();
  printSpeed(*s.engine, r);
  return parseGlmReply(r.text, s.chat.enableThinking);
}

ChatMessage asMessage(const AssistantReply& parsed) {
  ChatMessage m;
  m.role = ChatRole::Assistant;
  m.content = parsed.content;
  m.reasoningContent = parsed.reasoning;
  m.toolCalls = parsed.toolCalls;
  return m;
}

// `chat --session FILE`: the conversation (OpenAI-shaped messages) in FILE, its KV cache in
// FILE.kv (docs/kv-file-format.md). Both are saved after every turn; reopening loads the KV
// cache instead of recomputing the conversation, or recomputes it if the cache is unusable.
class SavedChat {
 public:
  explicit SavedChat(std::filesystem::path file) : file_(std::move(file)) {}
  std::filesystem::path kvFile() const { return file_.string() + ".kv"; }
  bool exists() const { return std::filesystem::exists(file_); }

  nlohmann::ordered_json load() const {
    try {
      const auto j = nlohmann::ordered_json::parse(io::readFileText(file_));
      if (!j.is_object() || j.value("format", "") != "strata-chat" || !j.contains("messages"))
        throw Error("not a strata-chat file");
      return j.at("messages");
    } catch (const std::exception& e) {
      throw Error(file_.string() + ": cannot read the conversation: " + e.what());
    }
  }

  void save(const nlohmann::ordered_json& messages, Session& session) const {
    const nlohmann::ordered_json j = {{"format", "strata-chat"}, {"version", 1}, {"messages", messages}};
    io::writeFileAtomically(file_, j.dump(1));
    session.save(kvFile());
  }

 private:
  std::filesystem::path file_;
};

// The saved session if its KV file is usable, else a fresh one (and why, on stderr).
std::unique_ptr<Session> resumeOrStart(Engine& engine, const SavedChat& saved) {
  if (!std::filesystem::exists(saved.kvFile())) return engine.newSession();
  try {
    auto session = engine.resumeSession(saved.kvFile());
    std::fprintf(stderr, "[resumed %zu tokens from %s]\n", session->tokens().size(),
                 saved.kvFile().string().c_str());
    return session;
  } catch (const Error& e) {
    std::fprintf(stderr, "[the saved KV cache cannot be used (%s); the conversation is recomputed]\n",
                 e.what());
    return engine.newSession();
  }
}

std::vector<ChatMessage> startMessages(const ConversationSetup& s) {
  std::vector<ChatMessage> messages;
  if (!s.system.empty()) messages.push_back({ChatRole::System, s.system, {}, {}, {}, {}});
  return messages;
}

}  // namespace

int runRun(const Args& args) {
  std::vector<std::string> known = kConversationOptions;
  known.push_back("prompt");
  args.allowOnly(known);
  const std::string prompt = args.require("prompt");
  ConversationSetup s = setUp(args);
  auto session = s.engine->newSession();
  std::vector<ChatMessage> messages = startMessages(s);
  messages.push_back({ChatRole::User, prompt, {}, {}, {}, {}});
  reply(s, *session, messages);
  return 0;
}

nlohmann::ordered_json userMessage(const std::string& text) {
  return {{"role", "user"}, {"content", text}};
}

int runChat(const Args& args) {
  std::vector<std::string> known = kConversationOptions;
  known.push_back("session");
  args.allowOnly(known);
  ConversationSetup s = setUp(args);
  std::optional<SavedChat> saved;
  if (args.has("session")) saved.emplace(args.require("session"));
  nlohmann::ordered_json transcript = nlohmann::ordered_json::array();
  if (saved && saved->exists()) {
    transcript = saved->load();
  } else if (!s.system.empty()) {
    transcript.push_back({{"role", "system"}, {"content", s.system}});
  }
  std::vector<ChatMessage> messages = parseChatMessages(transcript);
  auto session = saved ? resumeOrStart(*s.engine, *saved) : s.engine->newSession();
  const bool tty = isatty(0);
  if (tty) std::fputs("Type a message; an empty line or /exit ends the chat.\n", stderr);
  std::string line;
  while (true) {
    if (tty) std::fputs("> ", stderr);
    if (!std::getline(std::cin, line) || line.empty() || line == "/exit") break;
    messages.push_back({ChatRole::User, line, {}, {}, {}, {}});
    transcript.push_back(userMessage(line));
    const AssistantReply answer = reply(s, *session, messages);
    messages.push_back(asMessage(answer));
    transcript.push_back(toOpenAiMessage(answer));
    if (saved) saved->save(transcript, *session);
  }
  return 0;
}

}  // namespace strata::cli
