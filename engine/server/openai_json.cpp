#include "openai_json.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

Json reasonOrNull(const std::string& reason) {
  return reason.empty() ? Json(nullptr) : Json(reason);
}

Json head(const ResponseIdentity& who, const char* object) {
  return {{"id", who.id}, {"object", object}, {"created", who.created}, {"model", who.model}};
}

Json tokenJson(const Tokenizer& tokenizer, int32_t id, float logprob) {
  const std::string text = tokenizer.decode(std::span<const int32_t>(&id, 1));
  Json bytes = Json::array();
  for (const unsigned char b : text) bytes.push_back(b);
  return {{"token", text}, {"logprob", logprob}, {"bytes", std::move(bytes)}};
}

// Text offsets count characters, not bytes: every byte that does not continue a UTF-8
// sequence starts one.
int64_t characters(std::string_view text) {
  int64_t n = 0;
  for (const unsigned char b : text) n += (b & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

}  // namespace

Json chatLogprobsJson(const Tokenizer& tokenizer, std::span<const TokenLogprob> tokens) {
  Json content = Json::array();
  for (const TokenLogprob& t : tokens) {
    Json entry = tokenJson(tokenizer, t.token, t.logprob);
    Json top = Json::array();
    for (const auto& [id, logprob] : t.top) top.push_back(tokenJson(tokenizer, id, logprob));
    entry["top_logprobs"] = std::move(top);
    content.push_back(std::move(entry));
  }
  return {{"content", std::move(content)}, {"refusal", nullptr}};
}

Json completionLogprobsJson(const Tokenizer& tokenizer, std::span<const TokenLogprob> tokens,
                            int top, int64_t& textOffset) {
  auto text = [&](int32_t id) { return tokenizer.decode(std::span<const int32_t>(&id, 1)); };
  Json strings = Json::array(), logprobs = Json::array(), offsets = Json::array();
  Json alternatives = top > 0 ? Json::array() : Json(nullptr);
  for (const TokenLogprob& t : tokens) {
    const std::string s = text(t.token);
    strings.push_back(s);
    logprobs.push_back(t.logprob);
    offsets.push_back(textOffset);
    textOffset += characters(s);
    if (top > 0) {
      Json map = Json::object();
      for (const auto& [id, logprob] : t.top) {
        const std::string key = text(id);
        if (!map.contains(key)) map[key] = logprob;  // two ids may spell the same text
      }
      alternatives.push_back(std::move(map));
    }
  }
  return {{"tokens", std::move(strings)},
          {"token_logprobs", std::move(logprobs)},
          {"top_logprobs", std::move(alternatives)},
          {"text_offset", std::move(offsets)}};
}

Json echoedPromptLogprobsJson(const Tokenizer& tokenizer, int32_t firstToken,
                              std::span<const TokenLogprob> rest, int top, int64_t& textOffset) {
  const std::string first = tokenizer.decode(std::span<const int32_t>(&firstToken, 1));
  Json j = {{"tokens", Json::array({first})},
            {"token_logprobs", Json::array({nullptr})},
            {"top_logprobs", top > 0 ? Json::array({nullptr}) : Json(nullptr)},
            {"text_offset", Json::array({textOffset})}};
  textOffset += characters(first);
  appendCompletionLogprobs(j, completionLogprobsJson(tokenizer, rest, top, textOffset));
  return j;
}

void appendCompletionLogprobs(Json& into, const Json& more) {
  for (const char* key : {"tokens", "token_logprobs", "top_logprobs", "text_offset"}) {
    if (!more[key].is_array()) continue;  // top_logprobs is null for both when top is 0
    into[key].insert(into[key].end(), more[key].begin(), more[key].end());
  }
}

Json usageJson(int64_t promptTokens, int64_t completionTokens) {
  return {{"prompt_tokens", promptTokens},
          {"completion_tokens", completionTokens},
          {"total_tokens", promptTokens + completionTokens}};
}

std::string openAiFinishReason(const std::string& engineReason, bool hasToolCalls) {
  if (hasToolCalls) return "tool_calls";
  return engineReason == "length" ? "length" : "stop";
}

Json chatCompletionJson(const ResponseIdentity& who, const std::vector<ChatChoice>& choices,
                        const Json& usage) {
  Json j = head(who, "chat.completion");
  j["choices"] = Json::array();
  for (size_t i = 0; i < choices.size(); ++i)
    j["choices"].push_back({{"index", i},
                            {"message", toOpenAiMessage(choices[i].reply)},
                            {"logprobs", choices[i].logprobs},
                            {"finish_reason", choices[i].finishReason}});
  j["usage"] = usage;
  return j;
}

Json chatChunkJson(const ResponseIdentity& who, int index, Json delta,
                   const std::string& finishReason, bool withUsageField, const Json& logprobs) {
  Json j = head(who, "chat.completion.chunk");
  j["choices"] = Json::array({{{"index", index},
                               {"delta", std::move(delta)},
                               {"logprobs", logprobs},
                               {"finish_reason", reasonOrNull(finishReason)}}});
  if (withUsageField) j["usage"] = nullptr;
  return j;
}

Json usageChunkJson(const ResponseIdentity& who, const char* object, const Json& usage) {
  Json j = head(who, object);
  j["choices"] = Json::array();
  j["usage"] = usage;
  return j;
}

Json toolCallDeltas(const AssistantReply& reply) {
  const Json message = toOpenAiMessage(reply);
  Json calls = Json::array();
  if (!message.contains("tool_calls")) return calls;
  int index = 0;
  for (const Json& call : message["tool_calls"]) {
    Json indexed = {{"index", index++}};
    indexed.update(call);
    calls.push_back(std::move(indexed));
  }
  return calls;
}

Json completionJson(const ResponseIdentity& who, const std::vector<CompletionChoice>& choices,
                    const Json& usage) {
  Json j = head(who, "text_completion");
  j["choices"] = Json::array();
  for (size_t i = 0; i < choices.size(); ++i)
    j["choices"].push_back({{"text", choices[i].text},
                            {"index", i},
                            {"logprobs", choices[i].logprobs},
                            {"finish_reason", choices[i].finishReason}});
  j["usage"] = usage;
  return j;
}

Json completionChunkJson(const ResponseIdentity& who, int index, const std::string& text,
                         const std::string& finishReason, bool withUsageField,
                         const Json& logprobs) {
  Json j = head(who, "text_completion");
  j["choices"] = Json::array({{{"text", text},
                               {"index", index},
                               {"logprobs", logprobs},
                               {"finish_reason", reasonOrNull(finishReason)}}});
  if (withUsageField) j["usage"] = nullptr;
  return j;
}

Json modelsJson(const std::string& modelId, int64_t created) {
  return {{"object", "list"},
          {"data", Json::array({{{"id", modelId},
                                 {"object", "model"},
                                 {"created", created},
                                 {"owned_by", "strata"}}})}};
}

}  // namespace strata::server
