#pragma once
// POST /tokenize and POST /detokenize, as the llama.cpp and vLLM servers offer them (clients
// count tokens before sending, or show pieces). One answer serves both shapes:
//   /tokenize   {"content": TEXT} (llama.cpp) or {"prompt": TEXT} (vLLM) -> the text's ids;
//               {"messages": [...], "tools": [...]} -> the ids of the prompt the chat endpoint
//               renders for them (so "count" is a chat request's usage.prompt_tokens);
//               answers {"tokens": [ids], "count": N, "max_model_len": the server's prompt
//               limit}; "with_pieces": true makes each token {"id", "piece"} (llama.cpp).
//   /detokenize {"tokens": [ids]} -> {"content": TEXT, "prompt": TEXT}.
// The GLM tokenizer adds no BOS, so add_special / add_special_tokens change nothing.
#include <nlohmann/json.hpp>

#include "server_settings.h"
#include "strata/engine.h"

namespace strata::server {

// Throw ApiError (400 naming the field) for bad input.
nlohmann::ordered_json tokenizeJson(const Engine& engine, const ServerSettings& settings,
                                    const nlohmann::ordered_json& body);
nlohmann::ordered_json detokenizeJson(const Engine& engine, const nlohmann::ordered_json& body);

}  // namespace strata::server
