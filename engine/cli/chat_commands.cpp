// chat-format: render OpenAI-shaped messages into the GLM prompt text.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "commands.h"
#include "strata/chat.h"

namespace strata::cli {
namespace {

using Json = nlohmann::ordered_json;

Json readJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw strata::Error(path + ": cannot open");
  std::stringstream text;
  text << in.rdbuf();
  try {
    return Json::parse(text.str());
  } catch (const Json::parse_error& e) {
    throw strata::Error(path + ": not valid JSON (" + e.what() + ")");
  }
}

// A bare array, or the array under `key` of an object (an OpenAI request body).
Json arrayOrMember(const Json& document, const char* key) {
  if (document.is_object() && document.contains(key)) return document[key];
  return document;
}

bool parseSwitch(const Args& args, const std::string& name, bool fallback) {
  if (!args.has(name)) return fallback;
  const std::string value = args.require(name);
  if (value == "1") return true;
  if (value == "0") return false;
  throw UsageError("--" + name + " must be 0 or 1, not '" + value + "'");
}

}  // namespace

int runChatFormat(const Args& args) {
  args.allowOnly(
      {"messages", "tools", "add-generation-prompt", "enable-thinking", "clear-thinking"});
  const std::string messagesPath = args.require("messages");
  ChatOptions options;
  options.addGenerationPrompt = args.has("add-generation-prompt");
  options.enableThinking = parseSwitch(args, "enable-thinking", true);
  options.clearThinking = parseSwitch(args, "clear-thinking", true);

  std::vector<ChatMessage> messages;
  try {
    messages = parseChatMessages(arrayOrMember(readJsonFile(messagesPath), "messages"));
  } catch (const strata::Error& e) {
    const std::string what = e.what();
    throw strata::Error(what.rfind(messagesPath, 0) == 0 ? what : messagesPath + ": " + what);
  }
  std::vector<Json> tools;
  if (args.has("tools")) {
    const std::string toolsPath = args.require("tools");
    try {
      tools = parseChatTools(arrayOrMember(readJsonFile(toolsPath), "tools"));
    } catch (const strata::Error& e) {
      const std::string what = e.what();
      throw strata::Error(what.rfind(toolsPath, 0) == 0 ? what : toolsPath + ": " + what);
    }
  }
  const std::string prompt = renderGlmChat(messages, tools, options);
  if (std::fwrite(prompt.data(), 1, prompt.size(), stdout) != prompt.size() ||
      std::fflush(stdout) != 0)
    throw strata::Error("could not write the prompt to stdout");
  return 0;
}

}  // namespace strata::cli
