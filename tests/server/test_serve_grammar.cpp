// strata-cli serve with response_format over HTTP: a schema the grammar engine refuses is a 400
// naming the schema path; with the bundled tiny model, chat and streamed text completions
// under a JSON schema return JSON that parses and validates, chat replies after free thinking.
#include <QJsonArray>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "engine/json_schema_check.h"
#include "http_client.h"
#include "serve_process.h"

namespace {

// Small enough that every answer ends well within the token limit.
const char* kSchema = R"({"type": "object", "properties": {
    "city": {"type": "string", "maxLength": 16}, "population": {"type": "integer"},
    "capital": {"type": "boolean"}, "rank": {"enum": ["low", "high"]}},
  "required": ["city", "capital"]})";

QJsonObject schemaFormat(const QByteArray& schema) {
  return {{"type", "json_schema"},
          {"json_schema", QJsonObject{{"name", "answer"},
                                      {"strict", true},
                                      {"schema", QJsonDocument::fromJson(schema).object()}}}};
}

// Empty when `text` is JSON that the schema accepts; otherwise why not.
QString validates(const QString& text, const char* schemaText) {
  const auto schema = nlohmann::ordered_json::parse(schemaText);
  try {
    const auto value = nlohmann::ordered_json::parse(text.toStdString());
    return QString::fromStdString(json_schema_check::check(value, schema, schema));
  } catch (const std::exception& e) {
    return "not JSON: " + text;
  }
}

}  // namespace

class TestServeGrammar : public QObject {
  Q_OBJECT

  ServeProcess server_;

 private slots:
  void initTestCase() { QVERIFY2(server_.start({"--slots", "1"}), qPrintable(server_.error)); }
  void cleanupTestCase() { QCOMPARE(server_.stop(), 0); }

  void unsupportedSchemaIs400() {
    const QJsonObject body{
        {"model", "strata-tiny"},
        {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", "hi"}}}},
        {"response_format",
         schemaFormat(
             R"({"type": "object", "properties": {"x": {"type": "string", "format": "email"}}})")}};
    const HttpResponse r = postJson(server_.port, "/v1/chat/completions", body);
    QCOMPARE(r.status, 400);
    const QJsonObject error = r.json().value("error").toObject();
    QCOMPARE(error.value("param").toString(),
             QString("response_format.json_schema.schema.properties.x.format"));
    QVERIFY2(error.value("message").toString().contains("'format' is not supported"),
             r.body.constData());
  }

  // Needs the session to apply GenerateOptions::grammar.
  void chatAnswerFollowsTheSchema() {
    for (int seed : {1, 2, 3}) {
      const QJsonObject body{
          {"model", "strata-tiny"},
          {"messages",
           QJsonArray{QJsonObject{{"role", "user"}, {"content", "Tell me about Paris as JSON."}}}},
          {"response_format", schemaFormat(kSchema)},
          {"temperature", 0.9},
          {"seed", seed},
          {"max_tokens", 80}};
      const HttpResponse r = postJson(server_.port, "/v1/chat/completions", body);
      QCOMPARE(r.status, 200);
      const QJsonObject choice = r.json().value("choices").toArray().at(0).toObject();
      const QString content = choice.value("message").toObject().value("content").toString();
      const QString why = validates(content, kSchema);
      QVERIFY2(why.isEmpty(), qPrintable(why + " in " + QString::fromUtf8(r.body)));
      QCOMPARE(choice.value("finish_reason").toString(), QString("stop"));
    }
  }

  // Thinking stays on under a schema: the reasoning comes back apart and free (the schema
  // would not allow its first character), the content follows the schema. Needs the server to
  // start the grammar after `</think>`.
  void reasoningComesFirstThenTheSchema() {
    const QJsonObject body{
        {"model", "strata-tiny"},
        {"messages",
         QJsonArray{QJsonObject{{"role", "user"}, {"content", "Tell me about Paris as JSON."}}}},
        {"response_format", schemaFormat(kSchema)},
        {"temperature", 0},
        {"max_tokens", 80}};
    const HttpResponse r = postJson(server_.port, "/v1/chat/completions", body);
    QCOMPARE(r.status, 200);
    const QJsonObject message =
        r.json().value("choices").toArray().at(0).toObject().value("message").toObject();
    const QString reasoning = message.value("reasoning_content").toString();
    QVERIFY2(!reasoning.trimmed().isEmpty() && !reasoning.trimmed().startsWith("{"), r.body.constData());
    const QString why = validates(message.value("content").toString(), kSchema);
    QVERIFY2(why.isEmpty(), qPrintable(why + " in " + QString::fromUtf8(r.body)));
  }

  // Needs the session to apply GenerateOptions::grammar.
  void streamedCompletionFollowsTheSchema() {
    const QJsonObject body{{"model", "strata-tiny"},
                           {"prompt", "The answer as JSON:"},
                           {"response_format", schemaFormat(kSchema)},
                           {"temperature", 0.9},
                           {"seed", 4},
                           {"max_tokens", 80},
                           {"stream", true}};
    const HttpResponse r = postJson(server_.port, "/v1/completions", body);
    QCOMPARE(r.status, 200);
    QString text;
    for (const QByteArray& data : sseData(r.body)) {
      if (data == "[DONE]") break;
      text += QJsonDocument::fromJson(data)
                  .object()
                  .value("choices")
                  .toArray()
                  .at(0)
                  .toObject()
                  .value("text")
                  .toString();
    }
    const QString why = validates(text, kSchema);
    QVERIFY2(why.isEmpty(), qPrintable(why));
  }
};

QTEST_GUILESS_MAIN(TestServeGrammar)
#include "test_serve_grammar.moc"
