// The server's pieces without HTTP: request validation, the streaming reply splitter, the
// error shape, the API-key comparison.
#include <QtTest>

#include "api_error.h"
#include "completion_request.h"
#include "http_server.h"
#include "reply_stream.h"
#include "strata/chat.h"

using Json = nlohmann::ordered_json;
using strata::server::ApiError;
using strata::server::ReplyStream;
using strata::server::ServerSettings;

namespace {

ServerSettings settings() {
  ServerSettings s;
  s.modelId = "tiny";
  s.defaultMaxTokens = 100;
  return s;
}

Json chatBody() {
  return {{"model", "tiny"}, {"messages", Json::array({{{"role", "user"}, {"content", "Hi"}}})}};
}

struct Streamed {
  std::string reasoning;
  std::string content;
};

// Feeds `text` in pieces of `step` bytes and concatenates the deltas.
Streamed streamInPieces(const std::string& text, bool thinkingOpen, size_t step, bool toolCalls) {
  ReplyStream stream(thinkingOpen);
  Streamed out;
  auto take = [&](const ReplyStream::Delta& d) {
    out.reasoning += d.reasoning;
    out.content += d.content;
  };
  for (size_t at = 0; at < text.size(); at += step) take(stream.push(text.substr(at, step)));
  take(stream.finish(toolCalls));
  return out;
}

}  // namespace

class TestServerUnits : public QObject {
  Q_OBJECT

 private slots:
  void chatRequestFields() {
    Json body = chatBody();
    body["temperature"] = 0.5;
    body["top_p"] = 0.9;
    body["top_k"] = 40;
    body["max_tokens"] = 7;
    body["max_completion_tokens"] = 9;
    body["stop"] = "END";
    body["seed"] = 42;
    body["stream"] = true;
    body["stream_options"] = {{"include_usage", true}};
    body["user"] = "ignored";
    body["logprobs"] = true;
    body["top_logprobs"] = 4;
    body["logit_bias"] = {{"12", -100}, {"7", 2.5}};
    const auto r = strata::server::parseChatCompletionRequest(body, settings(), 7);
    using Bias = std::vector<std::pair<int32_t, float>>;
    QCOMPARE(r.generate.sampling.logitBias, (Bias{{12, -100.0f}, {7, 2.5f}}));
    QCOMPARE(r.generate.topLogprobs, 4);
    QCOMPARE(r.generate.sampling.temperature, 0.5f);
    QCOMPARE(r.generate.sampling.topP, 0.9f);
    QCOMPARE(r.generate.sampling.topK, 40);
    QCOMPARE(r.generate.maxNewTokens, 9);  // max_completion_tokens wins
    QCOMPARE(r.generate.stop, std::vector<std::string>{"END"});
    QCOMPARE(r.generate.sampling.seed, uint64_t{42});
    QVERIFY(r.stream && r.includeUsage);
    QCOMPARE(r.messages.size(), size_t{1});
    QCOMPARE(r.messages[0].content, std::string("Hi"));
  }

  void defaults() {
    const auto chat = strata::server::parseChatCompletionRequest(chatBody(), settings(), 1234);
    QCOMPARE(chat.generate.maxNewTokens, 100);              // the server's default
    QCOMPARE(chat.generate.sampling.seed, uint64_t{1234});  // the server's fresh seed
    QCOMPARE(chat.generate.sampling.temperature, 1.0f);     // OpenAI's default
    QVERIFY(!chat.stream);
    QCOMPARE(chat.generate.topLogprobs, -1);  // no log probabilities unless asked
    const auto completion = strata::server::parseCompletionRequest(
        {{"model", "tiny"}, {"prompt", Json::array({"Once"})}}, settings(), 1);
    QCOMPARE(completion.generate.maxNewTokens, 16);  // OpenAI's default for completions
    QCOMPARE(completion.prompts.size(), size_t{1});
    QCOMPARE(completion.prompts[0].text, std::string("Once"));
    QCOMPARE(completion.generate.topLogprobs, -1);
    // /v1/completions' logprobs: the number of alternatives per token.
    const auto scored = strata::server::parseCompletionRequest(
        {{"model", "tiny"}, {"prompt", "Once"}, {"logprobs", 3}}, settings(), 1);
    QCOMPARE(scored.generate.topLogprobs, 3);
    QVERIFY_THROWS_EXCEPTION(ApiError, strata::server::parseCompletionRequest(
        {{"model", "tiny"}, {"prompt", "Once"}, {"logprobs", 21}}, settings(), 1));
    QVERIFY_THROWS_EXCEPTION(ApiError, strata::server::parseCompletionRequest(
        {{"model", "tiny"}, {"prompt", "Once"}, {"logprobs", true}}, settings(), 1));
  }

  void invalidFieldsAreNamed_data() {
    QTest::addColumn<QString>("patch");  // merged into a valid chat body
    QTest::addColumn<int>("status");
    QTest::addColumn<QString>("param");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("temperature type") << R"({"temperature": "hot"})" << 400 << "temperature"
                                      << "number";
    QTest::newRow("temperature range") << R"({"temperature": 3})" << 400 << "temperature"
                                       << "2.0]";
    QTest::newRow("top_p zero") << R"({"top_p": 0})" << 400 << "top_p"
                                << "(0, 1]";
    QTest::newRow("max_tokens zero") << R"({"max_tokens": 0})" << 400 << "max_tokens"
                                     << "at least 1";
    QTest::newRow("max_tokens negative") << R"({"max_tokens": -1})" << 400 << "max_tokens"
                                         << "integer";
    QTest::newRow("max_tokens float") << R"({"max_tokens": 1.5})" << 400 << "max_tokens"
                                      << "1.5";
    QTest::newRow("max_tokens huge")
        << R"({"max_tokens": 18446744073709551615})" << 400 << "max_tokens"
        << "integer";
    QTest::newRow("logit_bias type") << R"({"logit_bias": [1]})" << 400 << "logit_bias"
                                     << "object";
    QTest::newRow("logit_bias key") << R"({"logit_bias": {"Paris": 5}})" << 400 << "logit_bias"
                                    << "\"Paris\"";
    QTest::newRow("logit_bias negative id") << R"({"logit_bias": {"-3": 5}})" << 400 << "logit_bias"
                                            << "\"-3\"";
    QTest::newRow("logit_bias range") << R"({"logit_bias": {"12": 101}})" << 400 << "logit_bias"
                                      << "token 12";
    QTest::newRow("logit_bias value") << R"({"logit_bias": {"12": "ban"}})" << 400 << "logit_bias"
                                      << "[-100, 100]";
    QTest::newRow("stop item") << R"({"stop": ["a", 1]})" << 400 << "stop[1]"
                               << "string";
    QTest::newRow("stop empty") << R"({"stop": ""})" << 400 << "stop"
                                << "empty";
    QTest::newRow("messages type") << R"({"messages": "hi"})" << 400 << "messages"
                                   << "array";
    QTest::newRow("messages role")
        << R"({"messages": [{"role": "robot", "content": "x"}]})" << 400 << "messages"
        << "messages[0].role";
    QTest::newRow("image part")
        << R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "What is this?"},
              {"type": "image_url", "image_url": {"url": "https://example.com/cat.png"}}]}]})"
        << 400 << "messages" << "messages[0].content[1]: a 'image_url' part, but this model reads text only";
    QTest::newRow("model type") << R"({"model": 5})" << 400 << "model"
                                << "string";
    QTest::newRow("model unknown") << R"({"model": "gpt-4"})" << 404 << "model"
                                   << "gpt-4";
    QTest::newRow("stream type") << R"({"stream": "yes"})" << 400 << "stream"
                                 << "true or false";
    QTest::newRow("stream_options without stream")
        << R"({"stream_options": {"include_usage": true}})" << 400 << "stream_options"
        << "stream";
    QTest::newRow("n") << R"({"n": 0})" << 400 << "n"
                       << "integer";
    QTest::newRow("tools type") << R"({"tools": 3})" << 400 << "tools"
                                << "tools";
    QTest::newRow("top_logprobs alone") << R"({"top_logprobs": 2})" << 400 << "top_logprobs"
                                        << "logprobs";
    QTest::newRow("top_logprobs range") << R"({"logprobs": true, "top_logprobs": 21})" << 400
                                        << "top_logprobs" << "20";
    QTest::newRow("logprobs type") << R"({"logprobs": 1})" << 400 << "logprobs"
                                   << "true or false";
  }

  void invalidFieldsAreNamed() {
    QFETCH(QString, patch);
    QFETCH(int, status);
    QFETCH(QString, param);
    QFETCH(QString, mentions);
    Json body = chatBody();
    body.update(Json::parse(patch.toStdString()));
    try {
      strata::server::parseChatCompletionRequest(body, settings(), 1);
      QFAIL("accepted an invalid request");
    } catch (const ApiError& e) {
      QCOMPARE(e.status(), status);
      QCOMPARE(QString::fromStdString(e.param()), param);
      QVERIFY2(QString(e.what()).contains(mentions), e.what());
    }
  }

  void missingModelAndBadJson() {
    Json body = chatBody();
    body.erase("model");
    QVERIFY_THROWS_EXCEPTION(ApiError,
                             strata::server::parseChatCompletionRequest(body, settings(), 1));
    try {
      strata::server::parseJsonBody("{\"model\": ");
      QFAIL("accepted truncated JSON");
    } catch (const ApiError& e) {
      QCOMPARE(e.status(), 400);
      QCOMPARE(e.code(), std::string("invalid_json"));
    }
    QVERIFY_THROWS_EXCEPTION(ApiError, strata::server::parseJsonBody("[1, 2]"));
    // Token ids, alone or in a batch, and batches of strings; mixed or fractional ids refused.
    const auto ids = strata::server::parseCompletionRequest(
        {{"model", "tiny"}, {"prompt", Json::array({Json::array({7, 2}), Json::array({5})})}},
        settings(), 1);
    QCOMPARE(ids.prompts.size(), size_t{2});
    QVERIFY(ids.prompts[0].ids == std::vector<int32_t>({7, 2}) && ids.prompts[0].text.empty());
    QVERIFY(ids.prompts[1].ids == std::vector<int32_t>({5}));
    QCOMPARE(strata::server::parseCompletionRequest(
                 {{"model", "tiny"}, {"prompt", Json::array({3})}}, settings(), 1)
                 .prompts.size(),
             size_t{1});
    const auto texts = strata::server::parseCompletionRequest(
        {{"model", "tiny"}, {"prompt", Json::array({"a", "b", "c"})}}, settings(), 1);
    QCOMPARE(texts.prompts.size(), size_t{3});
    QCOMPARE(texts.prompts[2].text, std::string("c"));
    for (const Json& prompt : {Json::array({1.5}), Json::array(), Json::array({"a", 3}),
                               Json::array({Json::array({1}), "b"})}) {
      try {
        strata::server::parseCompletionRequest({{"model", "tiny"}, {"prompt", prompt}}, settings(),
                                               1);
        QFAIL(qPrintable("accepted the prompt " + QString::fromStdString(prompt.dump())));
      } catch (const ApiError& e) {
        QVERIFY2(QString::fromStdString(e.param()).startsWith("prompt"), e.what());
      }
    }
    // A batch streams too (its choices' chunks interleave, each with its index).
    const strata::server::CompletionRequest streamed = strata::server::parseCompletionRequest(
        {{"model", "tiny"}, {"prompt", Json::array({"a", "b"})}, {"stream", true}, {"n", 2}},
        settings(), 1);
    QVERIFY(streamed.stream);
    QCOMPARE(streamed.prompts.size(), size_t{2});
    QCOMPARE(streamed.choicesPerPrompt, 2);
  }

  void errorShape() {
    const Json j = ApiError(429, "busy", "", "server_busy").toJson();
    QCOMPARE(j["error"]["message"].get<std::string>(), std::string("busy"));
    QCOMPARE(j["error"]["type"].get<std::string>(), std::string("rate_limit_error"));
    QVERIFY(j["error"]["param"].is_null());
    QCOMPARE(j["error"]["code"].get<std::string>(), std::string("server_busy"));
    QCOMPARE(ApiError(400, "x", "temperature").toJson()["error"]["param"].get<std::string>(),
             std::string("temperature"));
  }

  void apiKeyComparison() {
    using strata::server::constantTimeEquals;
    QVERIFY(constantTimeEquals("secret-key", "secret-key"));
    QVERIFY(!constantTimeEquals("secret-key", "secret-kez"));
    QVERIFY(!constantTimeEquals("secret-key", "secret-key2"));
    QVERIFY(!constantTimeEquals("secret", "secret-key"));
    QVERIFY(!constantTimeEquals("", "secret"));
  }

  // The deltas of a reply, streamed in pieces of any size, concatenate to what parseGlmReply
  // (the engine's parser, run on the whole text) returns.
  void replyStreamMatchesParser_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<bool>("thinkingOpen");
    QTest::newRow("thinking then answer")
        << "  Let me see.\n3 + 4 = 7 </think>\n\nThe answer is 7.\n"
        << true;
    QTest::newRow("empty thinking") << "</think>Paris is the capital of France." << true;
    QTest::newRow("no thinking") << "\n  Hello there,  friend.  \n" << false;
    QTest::newRow("reply opens think") << " <think>hmm</think> ok" << false;
    QTest::newRow("cut off while thinking") << "still thinking about < and </thi" << true;
    QTest::newRow("angle brackets") << "</think>a < b and <tool means nothing" << true;
    QTest::newRow("unclosed tool call")
        << "</think>Calling <tool_call>get_weather<arg_key>city" << true;
  }

  void replyStreamMatchesParser() {
    QFETCH(QString, text);
    QFETCH(bool, thinkingOpen);
    const std::string t = text.toStdString();
    const strata::AssistantReply parsed = strata::parseGlmReply(t, thinkingOpen);
    QVERIFY(parsed.toolCalls.empty());
    for (size_t step : {size_t{1}, size_t{2}, size_t{3}, size_t{7}, t.size()}) {
      const Streamed s = streamInPieces(t, thinkingOpen, step, false);
      QCOMPARE(s.reasoning, parsed.reasoning);
      QCOMPARE(s.content, parsed.content);
    }
  }

  void replyStreamHoldsToolCalls() {
    const std::string t =
        "</think>Let me check. <tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris"
        "</arg_value></tool_call>";
    const auto parsed = strata::parseGlmReply(t, true);
    QCOMPARE(parsed.toolCalls.size(), size_t{1});
    QCOMPARE(parsed.toolCalls[0].arguments["city"].get<std::string>(), std::string("Paris"));
    for (size_t step : {size_t{1}, size_t{4}, t.size()}) {
      const Streamed s = streamInPieces(t, true, step, true);
      QCOMPARE(s.content, std::string("Let me check."));
      QCOMPARE(s.content, parsed.content);
    }
  }

  void replyStreamEmitsEarly() {
    // Text is released as it comes, not at the end: only a possible marker start and trailing
    // whitespace wait.
    ReplyStream stream(true);
    QCOMPARE(stream.push("I think ").reasoning, std::string("I think"));
    QCOMPARE(stream.push("so</th").reasoning, std::string(" so"));
    const auto d = stream.push("ink>Yes <tool");
    QVERIFY(d.reasoning.empty());
    QCOMPARE(d.content, std::string("Yes"));
    QCOMPARE(stream.push("s are fine").content, std::string(" <tools are fine"));
  }
};

QTEST_APPLESS_MAIN(TestServerUnits)
#include "test_server_units.moc"
