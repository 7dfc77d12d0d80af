#include "token_endpoints.h"

#include "api_error.h"
#include "completion_endpoint.h"
#include "completion_request.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

const Tokenizer& tokenizerOf(const Engine& engine) {
  const Tokenizer* tokenizer = engine.tokenizer();
  if (!tokenizer) throw ApiError(500, "the model has no tokenizer.json", "", "no_tokenizer");
  return *tokenizer;
}

const Json& textField(const Json& body, const char* name) {
  const Json& v = body.at(name);
  if (!v.is_string())
    throw ApiError(400, std::string(name) + ": expected a string, not " + v.type_name(), name,
                   "invalid_value");
  return v;
}

// A token's text: a string, or (llama.cpp's way) its bytes when they are not whole UTF-8.
Json piece(const Tokenizer& tokenizer, int32_t id) {
  const std::string text = tokenizer.decode(std::span<const int32_t>(&id, 1));
  try {
    (void)Json(text).dump();  // throws on bytes that are not whole UTF-8 characters
    return text;
  } catch (const Json::type_error&) {
    Json bytes = Json::array();
    for (const unsigned char c : text) bytes.push_back(c);
    return bytes;
  }
}

}  // namespace

Json tokenizeJson(const Engine& engine, const ServerSettings& settings, const Json& body) {
  const Tokenizer& tokenizer = tokenizerOf(engine);
  std::vector<int32_t> ids;
  if (body.contains("messages")) {
    // Exactly what the chat endpoint renders: parsed as a chat request for this model.
    Json chat = body;
    if (!chat.contains("model")) chat["model"] = settings.modelId;
    CompletionRequest parsed = parseChatCompletionRequest(chat, settings, 0);
    ids = tokenizer.encode(renderChatPrompt(engine, parsed));
  } else if (body.contains("content")) {
    ids = tokenizer.encode(textField(body, "content").get<std::string>());
  } else if (body.contains("prompt")) {
    ids = tokenizer.encode(textField(body, "prompt").get<std::string>());
  } else {
    throw ApiError(400, "content, prompt or messages: required", "content",
                   "missing_required_parameter");
  }
  const bool withPieces = body.contains("with_pieces") && body.at("with_pieces").is_boolean() &&
                          body.at("with_pieces").get<bool>();
  Json tokens = Json::array();
  for (const int32_t id : ids)
    tokens.push_back(withPieces ? Json{{"id", id}, {"piece", piece(tokenizer, id)}} : Json(id));
  return {{"tokens", std::move(tokens)},
          {"count", ids.size()},
          {"max_model_len", settings.maxPromptTokens}};
}

Json detokenizeJson(const Engine& engine, const Json& body) {
  const Tokenizer& tokenizer = tokenizerOf(engine);
  if (!body.contains("tokens"))
    throw ApiError(400, "tokens: required", "tokens", "missing_required_parameter");
  const Json& tokens = body.at("tokens");
  if (!tokens.is_array())
    throw ApiError(400, "tokens: expected an array of token ids", "tokens", "invalid_value");
  const int vocab = engine.info().vocabSize;
  std::vector<int32_t> ids;
  for (size_t i = 0; i < tokens.size(); ++i) {
    const Json& t = tokens[i];
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= vocab)
      throw ApiError(400,
                     "tokens[" + std::to_string(i) + "]: expected a token id in [0, " +
                         std::to_string(vocab) + "), not " + t.dump(),
                     "tokens", "invalid_value");
    ids.push_back(static_cast<int32_t>(t.get<int64_t>()));
  }
  const std::string text = tokenizer.decode(ids);
  return {{"content", text}, {"prompt", text}};
}

}  // namespace strata::server
