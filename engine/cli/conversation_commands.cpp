// run and chat: talk to a model in the terminal. The answer goes to stdout; the model's
// thinking and the speed line go to stderr, so scripts can take stdout as the answer.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "commands.h"
#include "memory_options.h"
#include "strata/chat.h"
#include "strata/engine.h"

namespace strata::cli {
namespace {

struct ConversationSetup {
  std::unique_ptr<Engine> engine;
  GenerateOptions generate;
  ChatOptions chat;
  std::string system;
};

const std::vector<std::string> kConversationOptions = {
    "model", "system", "max-new", "temperature", "top-p", "top-k", "min-p", "repeat-penalty",
    "seed", "no-think", "threads", "precision", "ram-gb", "io"};

float parseFloat(const std::string& text, const std::string& what) {
  try {
    size_t used = 0;
    const float value = std::stof(text, &used);
    if (used == text.size()) return value;
  } catch (const std::exception&) {
  }
  throw UsageError(what + ": '" + text + "' is not a number");
}

ConversationSetup setUp(const Args& args) {
  ConversationSetup s;
  EngineSettings settings;
  if (args.has("threads")) settings.threads = parseInt(args.require("threads"), "--threads");
  const std::string precision = args.get("precision", "f32");
  if (precision == "native") settings.precision = Precision::Native;
  else if (precision != "f32") throw UsageError("--precision must be f32 or native");
  applyMemoryOptions(args, settings.memory);
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
  validateSamplingParams(p);
  s.generate.maxNewTokens = parseInt(args.get("max-new", "512"), "--max-new");
  s.chat.addGenerationPrompt = true;
  s.chat.enableThinking = !args.has("no-think");
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

void printSpeed(const GenerateResult& r) {
  const double tokensPerSecond =
      r.decodeSeconds > 0 ? static_cast<double>(r.tokens.size() - 1) / r.decodeSeconds : 0.0;
  std::fprintf(stderr, "[%zu tokens, %.1f tokens/s, prompt %lld tokens (%lld reused) in %.0f ms, %s]\n",
               r.tokens.size(), tokensPerSecond, static_cast<long long>(r.promptTokens),
               static_cast<long long>(r.reusedTokens), r.prefillSeconds * 1000.0,
               r.finishReason.c_str());
}

// One assistant turn: render, generate, print; returns the reply as a message for history.
ChatMessage reply(ConversationSetup& s, Session& session, const std::vector<ChatMessage>& messages) {
  const std::string prompt = renderGlmChat(messages, {}, s.chat);
  const std::vector<int32_t> ids = s.engine->tokenizer()->encode(prompt);
  ReplyPrinter printer(s.chat.enableThinking);
  const GenerateResult r = session.generate(ids, s.generate, std::ref(printer));
  printer.finish();
  printSpeed(r);
  const AssistantReply parsed = parseGlmReply(r.text, s.chat.enableThinking);
  ChatMessage m;
  m.role = ChatRole::Assistant;
  m.content = parsed.content;
  m.reasoningContent = parsed.reasoning;
  m.toolCalls = parsed.toolCalls;
  return m;
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

int runChat(const Args& args) {
  args.allowOnly(kConversationOptions);
  ConversationSetup s = setUp(args);
  auto session = s.engine->newSession();
  std::vector<ChatMessage> messages = startMessages(s);
  const bool tty = isatty(0);
  if (tty) std::fputs("Type a message; an empty line or /exit ends the chat.\n", stderr);
  std::string line;
  while (true) {
    if (tty) std::fputs("> ", stderr);
    if (!std::getline(std::cin, line) || line.empty() || line == "/exit") break;
    messages.push_back({ChatRole::User, line, {}, {}, {}, {}});
    messages.push_back(reply(s, *session, messages));
  }
  return 0;
}

}  // namespace strata::cli
