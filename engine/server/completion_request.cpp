#include "completion_request.h"

#include <algorithm>

#include "api_error.h"
#include "response_format.h"

namespace strata::server {
namespace {

using Json = nlohmann::ordered_json;

// A present, non-null field (OpenAI treats null as absent).
const Json* field(const Json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

[[noreturn]] void invalid(const std::string& name, const std::string& expected) {
  throw ApiError(400, name + ": " + expected, name, "invalid_value");
}

double number(const Json& body, const char* name, double fallback, double low, double high) {
  const Json* v = field(body, name);
  if (!v) return fallback;
  if (!v->is_number()) invalid(name, "expected a number, not " + std::string(v->type_name()));
  const double x = v->get<double>();
  if (x < low || x > high)
    invalid(name, "expected a number in [" + Json(low).dump() + ", " + Json(high).dump() +
                      "], not " + v->dump());
  return x;
}

int64_t integer(const Json& body, const char* name, int64_t fallback, int64_t low, int64_t high) {
  const Json* v = field(body, name);
  if (!v) return fallback;
  if (!v->is_number_integer())
    invalid(name, "expected an integer, not " + (v->is_number() ? v->dump() : v->type_name()));
  if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(high))
    invalid(name, "expected an integer in [" + std::to_string(low) + ", " + std::to_string(high) +
                      "], not " + v->dump());
  const int64_t x = v->get<int64_t>();
  if (x < low || x > high)
    invalid(name, "expected an integer in [" + std::to_string(low) + ", " + std::to_string(high) +
                      "], not " + v->dump());
  return x;
}

bool boolean(const Json& body, const char* name, bool fallback) {
  const Json* v = field(body, name);
  if (!v) return fallback;
  if (!v->is_boolean()) invalid(name, "expected true or false, not " + std::string(v->type_name()));
  return v->get<bool>();
}

void checkModel(const Json& body, const ServerSettings& settings) {
  const Json* v = field(body, "model");
  if (!v)
    throw ApiError(400, "model: required (this server serves '" + settings.modelId + "')", "model",
                   "missing_required_parameter");
  if (!v->is_string()) invalid("model", "expected a string, not " + std::string(v->type_name()));
  if (v->get<std::string>() != settings.modelId)
    throw ApiError(404,
                   "The model '" + v->get<std::string>() +
                       "' does not exist; this server serves '" + settings.modelId + "'",
                   "model", "model_not_found");
}

std::vector<std::string> stopStrings(const Json& body) {
  const Json* v = field(body, "stop");
  if (!v) return {};
  std::vector<std::string> stops;
  if (v->is_string()) {
    stops.push_back(v->get<std::string>());
  } else if (v->is_array()) {
    if (v->size() > 4) invalid("stop", "at most 4 stop strings, not " + std::to_string(v->size()));
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string())
        invalid("stop[" + std::to_string(i) + "]",
                "expected a string, not " + std::string((*v)[i].type_name()));
      stops.push_back((*v)[i].get<std::string>());
    }
  } else {
    invalid("stop", "expected a string or an array of strings, not " + std::string(v->type_name()));
  }
  for (const std::string& s : stops)
    if (s.empty()) invalid("stop", "stop strings must not be empty");
  return stops;
}

// logit_bias: {"token id": bias} (ids are JSON keys, so strings), biases in [-100, 100]. The
// ids are checked against the vocabulary at admission (CompletionEndpoint::admitPrompt).
std::vector<std::pair<int32_t, float>> logitBias(const Json& v) {
  if (!v.is_object())
    invalid("logit_bias",
            "expected an object mapping token ids to biases, not " + std::string(v.type_name()));
  std::vector<std::pair<int32_t, float>> biases;
  for (const auto& [key, value] : v.items()) {
    const bool digits =
        !key.empty() && key.size() <= 9 &&
        std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (!digits) invalid("logit_bias", "keys are token ids such as \"123\", not \"" + key + "\"");
    if (!value.is_number() || value.get<double>() < -100.0 || value.get<double>() > 100.0)
      invalid("logit_bias",
              "token " + key + ": expected a bias in [-100, 100], not " + value.dump());
    biases.emplace_back(std::stoi(key), value.get<float>());
  }
  return biases;
}

// OpenAI's own limit on n.
constexpr int64_t kMaxChoices = 128;

// The fields both endpoints share: sampling, limits, stop, streaming, n.
void parseCommon(const Json& body, const ServerSettings& settings, uint64_t seed,
                 int defaultMaxTokens, CompletionRequest& r) {
  checkModel(body, settings);
  r.choicesPerPrompt = static_cast<int>(integer(body, "n", 1, 1, kMaxChoices));
  SamplingParams& p = r.generate.sampling;
  p.temperature = static_cast<float>(number(body, "temperature", 1.0, 0.0, 2.0));
  p.topP = static_cast<float>(number(body, "top_p", 1.0, 0.0, 1.0));
  if (p.topP <= 0) invalid("top_p", "expected a number in (0, 1], not 0");
  p.topK = static_cast<int>(integer(body, "top_k", 0, 0, 1 << 30));
  p.minP = static_cast<float>(number(body, "min_p", 0.0, 0.0, 1.0));
  p.presencePenalty = static_cast<float>(number(body, "presence_penalty", 0.0, -2.0, 2.0));
  p.frequencyPenalty = static_cast<float>(number(body, "frequency_penalty", 0.0, -2.0, 2.0));
  p.repetitionPenalty = static_cast<float>(number(body, "repetition_penalty", 1.0, 1e-3, 100.0));
  if (const Json* bias = field(body, "logit_bias")) p.logitBias = logitBias(*bias);
  const Json* seedField = field(body, "seed");
  p.seed = seedField ? static_cast<uint64_t>(integer(body, "seed", 0, INT64_MIN, INT64_MAX)) : seed;

  const int64_t limit = 1 << 30;
  // 0 only scores an echoed prompt (checked by the caller, which knows about echo).
  int64_t maxTokens = integer(body, "max_tokens", defaultMaxTokens, 0, limit);
  maxTokens = integer(body, "max_completion_tokens", maxTokens, 0, limit);
  r.generate.maxNewTokens = static_cast<int>(maxTokens);
  r.generate.stop = stopStrings(body);
  r.generate.ignoreEos = boolean(body, "ignore_eos", false);  // vLLM's extension

  r.generate.grammar = parseResponseFormat(body);
  r.generate.prefillChunkTokens = settings.prefillChunkTokens;

  r.stream = boolean(body, "stream", false);
  if (const Json* options = field(body, "stream_options")) {
    if (!options->is_object())
      invalid("stream_options", "expected an object, not " + std::string(options->type_name()));
    if (!r.stream) invalid("stream_options", "only allowed when stream is true");
    r.includeUsage = boolean(*options, "include_usage", false);
  }
}

// One prompt: a string or an array of token ids.
PromptInput onePrompt(const Json& prompt, const std::string& name) {
  PromptInput p;
  if (prompt.is_string()) {
    p.text = prompt.get<std::string>();
  } else if (prompt.is_array()) {
    for (const Json& id : prompt) {
      if (!id.is_number_integer() || id.get<int64_t>() < 0 || id.get<int64_t>() > INT32_MAX)
        invalid(name, "token ids must be non-negative integers, not " + id.dump());
      p.ids.push_back(id.get<int32_t>());
    }
  } else {
    invalid(name,
            "expected a string or an array of token ids, not " + std::string(prompt.type_name()));
  }
  if (p.text.empty() && p.ids.empty()) invalid(name, "must not be empty");
  return p;
}

// A string or token ids, or a batch of them (["a", "b"], [[1, 2], [3]]): a choice for each.
std::vector<PromptInput> parsePrompts(const Json& prompt) {
  const bool batch =
      prompt.is_array() && !prompt.empty() && (prompt[0].is_string() || prompt[0].is_array());
  if (!batch) return {onePrompt(prompt, "prompt")};
  std::vector<PromptInput> prompts;
  for (size_t i = 0; i < prompt.size(); ++i) {
    const std::string name = "prompt[" + std::to_string(i) + "]";
    if (prompt[i].is_string() != prompt[0].is_string())
      invalid(name, "a batch holds strings or token arrays, not both");
    prompts.push_back(onePrompt(prompt[i], name));
  }
  return prompts;
}

}  // namespace

Json parseJsonBody(const std::string& body) {
  try {
    Json j = Json::parse(body);
    if (!j.is_object())
      throw ApiError(400, "request body: expected a JSON object, not " + std::string(j.type_name()),
                     "", "invalid_json");
    return j;
  } catch (const Json::parse_error& e) {
    throw ApiError(400, std::string("request body is not valid JSON: ") + e.what(), "",
                   "invalid_json");
  }
}

// tool_choice: "none" leaves the tools out of the prompt, "auto" lets the model choose, and
// "required" or {"type": "function", "function": {"name": ...}} constrain the reply to tool
// calls (of that function) with a grammar. Returns that grammar, or the response_format's.
std::shared_ptr<const Grammar> toolChoiceGrammar(const Json& choice, CompletionRequest& r) {
  std::string onlyFunction;
  if (choice.is_string()) {
    const std::string c = choice.get<std::string>();
    if (c != "none" && c != "auto" && c != "required")
      invalid("tool_choice", "expected \"none\", \"auto\", \"required\" or an object, not " + choice.dump());
    if (c == "none") r.tools.clear();
    if (c != "required") return r.generate.grammar;
  } else if (choice.is_object()) {
    if (!choice.contains("type") || choice["type"] != "function")
      invalid("tool_choice.type", "expected \"function\"");
    const Json* fn = field(choice, "function");
    if (!fn || !fn->is_object() || !fn->contains("name") || !(*fn)["name"].is_string())
      invalid("tool_choice.function.name", "expected the name of one of the tools");
    onlyFunction = (*fn)["name"].get<std::string>();
  } else {
    invalid("tool_choice", "expected a string or an object, not " + std::string(choice.type_name()));
  }
  const std::string param = onlyFunction.empty() ? "tool_choice" : "tool_choice.function.name";
  if (r.tools.empty()) invalid(param, "needs tools to call");
  if (r.generate.grammar)
    invalid("tool_choice", "a reply of tool calls cannot also follow response_format");
  try {
    return Grammar::fromGbnf(toolCallGbnf(r.tools, onlyFunction));
  } catch (const Error& e) {
    invalid(param, e.what());
  }
}

// The model reads text only. The chat template drops image and audio parts, so the model
// would answer as if they had not been sent: refuse them instead, naming the part.
void refuseNonTextParts(const Json& messages) {
  for (size_t i = 0; i < messages.size(); ++i) {
    const Json* content = messages[i].is_object() ? field(messages[i], "content") : nullptr;
    if (!content || !content->is_array()) continue;
    for (size_t j = 0; j < content->size(); ++j) {
      const Json& part = (*content)[j];
      const auto type = part.is_object() ? part.find("type") : part.end();
      if (type == part.end() || !type->is_string() || *type == "text") continue;
      throw ApiError(400,
                     "messages[" + std::to_string(i) + "].content[" + std::to_string(j) + "]: a '" +
                         type->get<std::string>() + "' part, but this model reads text only",
                     "messages", "invalid_value");
    }
  }
}

CompletionRequest parseChatCompletionRequest(const Json& body, const ServerSettings& settings,
                                             uint64_t seed) {
  CompletionRequest r;
  r.chat = true;
  parseCommon(body, settings, seed, settings.defaultMaxTokens, r);
  const Json* messages = field(body, "messages");
  if (!messages)
    throw ApiError(400, "messages: required", "messages", "missing_required_parameter");
  if (!messages->is_array() || messages->empty())
    invalid("messages", "expected a non-empty array of messages");
  refuseNonTextParts(*messages);
  try {
    r.messages = parseChatMessages(*messages);
  } catch (const Error& e) {
    throw ApiError(400, e.what(), "messages", "invalid_value");
  }
  try {
    if (const Json* tools = field(body, "tools")) r.tools = parseChatTools(*tools);
  } catch (const Error& e) {
    throw ApiError(400, e.what(), "tools", "invalid_value");
  }
  if (r.generate.maxNewTokens == 0) invalid("max_tokens", "must be at least 1");
  if (const Json* choice = field(body, "tool_choice")) r.generate.grammar = toolChoiceGrammar(*choice, r);
  // OpenAI's shape: logprobs true, then top_logprobs alternatives (0..20) per token.
  const bool logprobs = boolean(body, "logprobs", false);
  const int64_t top = integer(body, "top_logprobs", 0, 0, kMaxTopLogprobs);
  if (field(body, "top_logprobs") && !logprobs)
    invalid("top_logprobs", "needs \"logprobs\": true");
  if (logprobs) r.generate.topLogprobs = static_cast<int>(top);
  if (const Json* kwargs = field(body, "chat_template_kwargs")) {
    if (!kwargs->is_object())
      invalid("chat_template_kwargs",
              "expected an object, not " + std::string(kwargs->type_name()));
    r.enableThinking = boolean(*kwargs, "enable_thinking", true);
  }
  return r;
}

CompletionRequest parseCompletionRequest(const Json& body, const ServerSettings& settings,
                                         uint64_t seed) {
  CompletionRequest r;
  r.chat = false;
  parseCommon(body, settings, seed, /*defaultMaxTokens=*/16,
              r);  // OpenAI's default for completions
  const Json* prompt = field(body, "prompt");
  if (!prompt) throw ApiError(400, "prompt: required", "prompt", "missing_required_parameter");
  r.prompts = parsePrompts(*prompt);
  // The older shape: logprobs is the number of alternatives per token (0..20).
  if (field(body, "logprobs"))
    r.generate.topLogprobs = static_cast<int>(integer(body, "logprobs", 0, 0, kMaxTopLogprobs));
  // echo: the reply repeats the prompt, scored token by token with logprobs (how evaluation
  // harnesses compute log-likelihoods: max_tokens 0 or 1, logprobs 1).
  r.echo = boolean(body, "echo", false);
  r.generate.promptLogprobs = r.echo && r.generate.topLogprobs >= 0;
  if (r.generate.maxNewTokens == 0 && !r.echo)
    invalid("max_tokens", "0 is allowed only with \"echo\": true (scoring the prompt)");
  if (field(body, "suffix")) invalid("suffix", "suffix (fill-in-the-middle) is not supported");
  return r;
}

}  // namespace strata::server
