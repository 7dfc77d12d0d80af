// response_format in chat and text completion requests: each type picks the grammar it names
// (checked by what the grammar accepts), and every malformed field is a 400 naming it, down to
// the schema keyword at fault.
#include <QtTest>

#include "api_error.h"
#include "completion_request.h"
#include "strata/grammar.h"
#include "strata/tokenizer.h"

using Json = nlohmann::ordered_json;
using strata::server::ApiError;

namespace {

strata::server::ServerSettings settings() {
  strata::server::ServerSettings s;
  s.modelId = "tiny";
  return s;
}

Json chatBody(const Json& format) {
  return {{"model", "tiny"},
          {"messages", Json::array({{{"role", "user"}, {"content", "Hi"}}})},
          {"response_format", format}};
}

// Whether `grammar` accepts exactly `text`, fed one byte token at a time.
bool accepts(const std::shared_ptr<const strata::Grammar>& grammar, const std::string& text) {
  static const auto tokenizer = strata::Tokenizer::load(std::string(STRATA_RESOURCES_DIR) +
                                                        "/models/strata-tiny/tokenizer.json");
  static const auto vocabulary = strata::GrammarVocabulary::build(*tokenizer, {});
  strata::GrammarMatcher m(grammar, vocabulary);
  for (char c : text) {
    const auto ids = tokenizer->encode(std::string(1, c));
    if (ids.size() != 1 || !m.accept(ids[0])) return false;
  }
  return m.complete();
}

// The same, fed the tokenizer's own tokens for the text (special tokens included).
bool acceptsTokens(const std::shared_ptr<const strata::Grammar>& grammar, const std::string& text) {
  static const auto tokenizer = strata::Tokenizer::load(std::string(STRATA_RESOURCES_DIR) +
                                                        "/models/strata-tiny/tokenizer.json");
  static const auto vocabulary = strata::GrammarVocabulary::build(*tokenizer, {});
  strata::GrammarMatcher m(grammar, vocabulary);
  for (const int32_t id : tokenizer->encode(text))
    if (!m.accept(id)) return false;
  return m.complete();
}

Json weatherTools() {
  return Json::parse(R"([
    {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {"type": "string"}},
      "required": ["city"]}}},
    {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
      "properties": {"zone": {"type": "string"}}, "required": ["zone"]}}}])");
}

Json toolBody(const Json& choice) {
  return {{"model", "tiny"},
          {"messages", Json::array({{{"role", "user"}, {"content", "Weather in Paris?"}}})},
          {"tools", weatherTools()},
          {"tool_choice", choice}};
}

}  // namespace

class TestResponseFormat : public QObject {
  Q_OBJECT

 private slots:
  void typesPickTheirGrammar() {
    using strata::server::parseChatCompletionRequest;
    QVERIFY(!parseChatCompletionRequest(chatBody(nullptr), settings(), 1).generate.grammar);
    const auto text = parseChatCompletionRequest(chatBody({{"type", "text"}}), settings(), 1);
    QVERIFY(!text.generate.grammar);
    QVERIFY(text.enableThinking);

    const auto object =
        parseChatCompletionRequest(chatBody({{"type", "json_object"}}), settings(), 1);
    QVERIFY(object.generate.grammar);
    QVERIFY(object.enableThinking);  // the server starts the grammar after the thinking
    QVERIFY(accepts(object.generate.grammar, "{\"any\": [\"thing\", 1]}"));
    QVERIFY(!accepts(object.generate.grammar, "[1]"));

    const Json format = {{"type", "json_schema"},
                         {"json_schema",
                          {{"name", "city"},
                           {"strict", true},
                           {"schema",
                            {{"type", "object"},
                             {"properties", {{"city", {{"type", "string"}}}}},
                             {"required", {"city"}}}}}}};
    const auto schema = parseChatCompletionRequest(chatBody(format), settings(), 1);
    QVERIFY(accepts(schema.generate.grammar, "{\"city\": \"Paris\"}"));
    QVERIFY(!accepts(schema.generate.grammar, "{\"any\": [\"thing\", 1]}"));

    Json completion = {{"model", "tiny"}, {"prompt", "Hi"}, {"response_format", format}};
    const auto r = strata::server::parseCompletionRequest(completion, settings(), 1);
    QVERIFY(accepts(r.generate.grammar, "{\"city\": \"Rome\"}"));
  }

  void toolChoiceConstrainsTheReply() {
    using strata::server::parseChatCompletionRequest;
    const std::string weather =
        "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value>"
        "<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>";
    const std::string time =
        "<tool_call>get_time<arg_key>zone</arg_key><arg_value>CET</arg_value></tool_call>";

    QVERIFY(!parseChatCompletionRequest(toolBody("auto"), settings(), 1).generate.grammar);
    const auto none = parseChatCompletionRequest(toolBody("none"), settings(), 1);
    QVERIFY(!none.generate.grammar);
    QVERIFY(none.tools.empty());

    const auto required = parseChatCompletionRequest(toolBody("required"), settings(), 1);
    QVERIFY(required.generate.grammar);
    QVERIFY(required.enableThinking);
    QVERIFY(accepts(required.generate.grammar, weather));
    QVERIFY(acceptsTokens(required.generate.grammar, weather));  // the tags' special tokens
    QVERIFY(accepts(required.generate.grammar, weather + time));
    QVERIFY(!accepts(required.generate.grammar, "It is sunny in Paris."));
    // The required parameter must be there; an unknown one must not.
    QVERIFY(!accepts(required.generate.grammar, "<tool_call>get_weather<arg_key>days</arg_key><arg_value>3</arg_value></tool_call>"));
    QVERIFY(!accepts(required.generate.grammar, "<tool_call>get_time<arg_key>zone</arg_key><arg_value>CET</arg_value><arg_key>x</arg_key><arg_value>1</arg_value></tool_call>"));
    // Non-string parameters are JSON.
    QVERIFY(!accepts(required.generate.grammar, "<tool_call>get_weather<arg_key>city</arg_key><arg_value>Paris</arg_value><arg_key>days</arg_key><arg_value>three</arg_value></tool_call>"));

    const Json named = {{"type", "function"}, {"function", {{"name", "get_time"}}}};
    const auto one = parseChatCompletionRequest(toolBody(named), settings(), 1);
    QVERIFY(accepts(one.generate.grammar, time));
    QVERIFY(!accepts(one.generate.grammar, weather));
    QVERIFY(!accepts(one.generate.grammar, time + time));
  }

  void invalidToolChoicesAreNamed_data() {
    QTest::addColumn<QByteArray>("body");
    QTest::addColumn<QString>("param");
    auto body = [](const Json& b) { return QByteArray::fromStdString(b.dump()); };
    QTest::newRow("unknown string") << body(toolBody("always")) << "tool_choice";
    QTest::newRow("number") << body(toolBody(1)) << "tool_choice";
    QTest::newRow("unknown function") << body(toolBody({{"type", "function"}, {"function", {{"name", "fly"}}}}))
                                      << "tool_choice.function.name";
    QTest::newRow("no name") << body(toolBody({{"type", "function"}, {"function", Json::object()}}))
                             << "tool_choice.function.name";
    QTest::newRow("wrong type") << body(toolBody({{"type", "tool"}, {"function", {{"name", "get_time"}}}}))
                                << "tool_choice.type";
    Json noTools = toolBody("required");
    noTools.erase("tools");
    QTest::newRow("required without tools") << body(noTools) << "tool_choice";
    Json both = toolBody("required");
    both["response_format"] = {{"type", "json_object"}};
    QTest::newRow("with response_format") << body(both) << "tool_choice";
  }

  void invalidToolChoicesAreNamed() {
    QFETCH(QByteArray, body);
    QFETCH(QString, param);
    try {
      strata::server::parseChatCompletionRequest(Json::parse(body.toStdString()), settings(), 1);
      QFAIL("accepted");
    } catch (const ApiError& e) {
      QCOMPARE(e.status(), 400);
      QCOMPARE(QString::fromStdString(e.param()), param);
    }
  }

  void invalidFormatsAreNamed_data() {
    QTest::addColumn<QString>("format");
    QTest::addColumn<QString>("param");
    QTest::addColumn<QString>("mentions");
    QTest::newRow("not an object") << R"("json")"
                                   << "response_format"
                                   << "expected an object";
    QTest::newRow("no type") << R"({})"
                             << "response_format.type"
                             << "required";
    QTest::newRow("unknown type") << R"({"type": "xml"})"
                                  << "response_format.type"
                                  << "\"xml\"";
    QTest::newRow("no json_schema") << R"({"type": "json_schema"})"
                                    << "response_format.json_schema"
                                    << "required";
    QTest::newRow("json_schema type") << R"({"type": "json_schema", "json_schema": []})"
                                      << "response_format.json_schema"
                                      << "expected an object";
    QTest::newRow("no schema") << R"({"type": "json_schema", "json_schema": {"name": "x"}})"
                               << "response_format.json_schema.schema"
                               << "required";
    QTest::newRow("name type")
        << R"({"type": "json_schema", "json_schema": {"name": 3, "schema": {}}})"
        << "response_format.json_schema.name"
        << "string";
    QTest::newRow("strict type")
        << R"({"type": "json_schema", "json_schema": {"strict": "yes", "schema": {}}})"
        << "response_format.json_schema.strict"
        << "true or false";
    QTest::newRow("schema keyword")
        << R"({"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object", "properties": {"x": {"type": "strin"}}}}})"
        << "response_format.json_schema.schema.properties.x.type"
        << "unknown type";
    QTest::newRow("unsupported keyword")
        << R"({"type": "json_schema", "json_schema": {"schema": {"type": "string", "pattern": "^a"}}})"
        << "response_format.json_schema.schema.pattern"
        << "not supported";
    QTest::newRow("schema itself") << R"({"type": "json_schema", "json_schema": {"schema": 5}})"
                                   << "response_format.json_schema.schema"
                                   << "expected a schema";
  }
  void invalidFormatsAreNamed() {
    QFETCH(QString, format);
    QFETCH(QString, param);
    QFETCH(QString, mentions);
    for (bool chat : {true, false}) {
      Json body = chat ? chatBody(nullptr) : Json{{"model", "tiny"}, {"prompt", "Hi"}};
      body["response_format"] = Json::parse(format.toStdString());
      try {
        if (chat)
          strata::server::parseChatCompletionRequest(body, settings(), 1);
        else
          strata::server::parseCompletionRequest(body, settings(), 1);
        QFAIL("accepted an invalid response_format");
      } catch (const ApiError& e) {
        QCOMPARE(e.status(), 400);
        QCOMPARE(QString::fromStdString(e.param()), param);
        QVERIFY2(QString(e.what()).startsWith(param + ": "), e.what());
        QVERIFY2(QString(e.what()).contains(mentions), e.what());
      }
    }
  }
};

QTEST_GUILESS_MAIN(TestResponseFormat)
#include "test_response_format.moc"
