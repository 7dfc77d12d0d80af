// The GLM chat format: prompts byte-equal to the upstream jinja template (fixtures rendered by
// tools/chat_format/render_fixtures.py with python3-jinja2), the chat-format CLI, the reply
// parser, and errors that name the malformed field.
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "chat/python_text.h"
#include "fixtures.h"
#include "strata/chat.h"

using Json = nlohmann::ordered_json;

namespace {

std::filesystem::path chatDir() { return fixtures::dataDir() / "chat_format"; }

std::string readBytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open fixture " + path.string());
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

Json readCase(const std::string& name) {
  return Json::parse(readBytes(chatDir() / (name + ".json")));
}

strata::ChatOptions optionsOf(const Json& c) {
  strata::ChatOptions o;
  const Json opts = c.value("options", Json::object());
  o.addGenerationPrompt = opts.value("add_generation_prompt", false);
  o.enableThinking = opts.value("enable_thinking", true);
  o.clearThinking = opts.value("clear_thinking", true);
  return o;
}

std::string render(const Json& c) {
  return strata::renderGlmChat(strata::parseChatMessages(c["messages"]),
                               strata::parseChatTools(c.value("tools", Json())), optionsOf(c));
}

const Json kWeatherTools = Json::parse(R"([{"type": "function", "function": {
  "name": "get_weather",
  "parameters": {"type": "object", "properties": {
    "city": {"type": "string"}, "days": {"type": "integer"}, "opts": {"type": "object"}}}}}])");

// Shows the first differing byte; QCOMPARE on two long std::strings prints nothing useful.
QString firstDifference(const std::string& got, const std::string& want) {
  size_t i = 0;
  while (i < got.size() && i < want.size() && got[i] == want[i]) ++i;
  return QStringLiteral("differs at byte %1 (got %2 bytes, want %3): got '%4' want '%5'")
      .arg(i)
      .arg(got.size())
      .arg(want.size())
      .arg(QString::fromStdString(got.substr(i, 60)), QString::fromStdString(want.substr(i, 60)));
}

// Readable QCOMPARE failures for std::string and JSON values.
QString q(const char* text) { return QString::fromUtf8(text); }
QString q(const std::string& text) { return QString::fromStdString(text); }
QString q(const Json& value) { return QString::fromStdString(value.dump()); }

}  // namespace

class TestChatFormat : public QObject {
  Q_OBJECT

 private slots:
  void renderMatchesTemplate_data() {
    QTest::addColumn<QString>("name");
    int count = 0;
    for (const auto& entry : std::filesystem::directory_iterator(chatDir())) {
      if (entry.path().extension() != ".json") continue;
      const std::string name = entry.path().stem().string();
      QTest::newRow(name.c_str()) << QString::fromStdString(name);
      ++count;
    }
    // The fixture set must be there: an empty directory would otherwise pass vacuously.
    QVERIFY2(count >= 25, qPrintable(QStringLiteral("only %1 fixtures").arg(count)));
  }
  void renderMatchesTemplate() {
    QFETCH(QString, name);
    const std::string want = readBytes(chatDir() / (name.toStdString() + ".txt"));
    const std::string got = render(readCase(name.toStdString()));
    QVERIFY2(got == want, qPrintable(firstDifference(got, want)));
  }

  void cliPrintsThePromptExactly() {
    const QString input =
        QString::fromStdString((chatDir() / "tools_with_system_and_history.json").string());
    QProcess p;
    p.start(STRATA_CLI_PATH, {"chat-format", "--messages", input, "--tools", input,
                              "--add-generation-prompt", "--clear-thinking", "0"});
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), 0);
    const QByteArray out = p.readAllStandardOutput();
    const std::string want = readBytes(chatDir() / "tools_with_system_and_history.txt");
    QCOMPARE(out, QByteArray::fromStdString(want));
    QVERIFY(!out.endsWith('\n'));
  }

  void cliReportsBadInput_data() {
    QTest::addColumn<QString>("messages");
    QTest::addColumn<QStringList>("extra");
    QTest::addColumn<int>("exitCode");
    QTest::addColumn<QString>("message");
    QTest::newRow("bad role") << R"([{"role": "narrator", "content": "x"}])" << QStringList{} << 1
                              << "messages[0].role: expected one of system, developer, user, assistant, tool";
    QTest::newRow("not json") << "[{" << QStringList{} << 1 << "not valid JSON";
    QTest::newRow("bad switch") << R"([])" << QStringList{"--enable-thinking", "yes"} << 2
                                << "--enable-thinking must be 0 or 1";
  }
  void cliReportsBadInput() {
    QFETCH(QString, messages);
    QFETCH(QStringList, extra);
    QFETCH(int, exitCode);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const QString path = dir.filePath("messages.json");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(messages.toUtf8());
    file.close();
    QProcess p;
    p.start(STRATA_CLI_PATH, QStringList{"chat-format", "--messages", path} + extra);
    QVERIFY(p.waitForFinished(60000));
    QCOMPARE(p.exitCode(), exitCode);
    const QString err = QString::fromUtf8(p.readAllStandardError());
    QVERIFY2(err.contains(message), qPrintable(err));
    QVERIFY(p.readAllStandardOutput().isEmpty());
  }

  // Python facts, written down by hand: ' \u00a0x\u3000 '.strip() == 'x', and so on.
  void pythonStripIsStrStrip() {
    using strata::chat::pythonStrip;
    QCOMPARE(q(std::string(pythonStrip(" \t\n x y \r\n"))), q("x y"));
    QCOMPARE(q(std::string(pythonStrip("\u00a0\u3000\u2028x\u2003\u0085\u001f"))), q("x"));
    QCOMPARE(q(std::string(pythonStrip("\u200bx\u200b"))), q("\u200bx\u200b"));  // not space
    QCOMPARE(q(std::string(pythonStrip("\u00e9"))), q("\u00e9"));
    QCOMPARE(q(std::string(pythonStrip(" \u00a0 "))), q(""));
  }

  // What Python's json.dumps(v, ensure_ascii=False) prints (checked by hand against CPython).
  void pythonJsonDumpsIsJsonDumps_data() {
    QTest::addColumn<QString>("json");
    QTest::addColumn<QString>("python");
    QTest::newRow("object order and separators") << R"({"b": 1, "a": [true, null, "x"]})"
                                                 << R"({"b": 1, "a": [true, null, "x"]})";
    QTest::newRow("compact input") << R"({"z":{},"y":[]})"
                                   << R"({"z": {}, "y": []})";
    // (written with escapes: moc miscounts braces and quotes inside raw strings)
    QTest::newRow("escapes") << "\"q\\\" b\\\\ n\\n t\\t c\\u0001 d\\u007f\""
                             << "\"q\\\" b\\\\ n\\n t\\t c\\u0001 d\x7f\"";
    QTest::newRow("non-ascii raw") << "\"\\u00e9 \\ud83d\\ude00 \\u2028\""
                                   << "\"\u00e9 \U0001F600 \u2028\"";
    QTest::newRow("1.0") << "1.0"
                         << "1.0";
    QTest::newRow("100.0") << "1e2"
                           << "100.0";
    QTest::newRow("1e16") << "1e16"
                          << "1e+16";
    QTest::newRow("1e15") << "1e15"
                          << "1000000000000000.0";
    QTest::newRow("0.0001") << "0.0001"
                            << "0.0001";
    QTest::newRow("0.00001") << "0.00001"
                             << "1e-05";
    QTest::newRow("-0.0") << "-0.0"
                          << "-0.0";
    QTest::newRow("0.1") << "0.1"
                         << "0.1";
    QTest::newRow("1/3") << "0.3333333333333333"
                         << "0.3333333333333333";
    QTest::newRow("1.5e300") << "1.5e300"
                             << "1.5e+300";
    QTest::newRow("5e-324") << "5e-324"
                            << "5e-324";
    QTest::newRow("big int") << "12345678901234567890"
                             << "12345678901234567890";
    QTest::newRow("negative int") << "-42"
                                  << "-42";
  }
  void pythonJsonDumpsIsJsonDumps() {
    QFETCH(QString, json);
    QFETCH(QString, python);
    QCOMPARE(QString::fromStdString(strata::chat::pythonJsonDumps(Json::parse(json.toStdString()))),
             python);
  }

  void malformedMessagesNameTheField_data() {
    QTest::addColumn<QString>("messages");
    QTest::addColumn<QString>("message");
    QTest::newRow("not an array") << R"({"role": "user"})"
                                  << "messages: expected an array";
    QTest::newRow("not an object") << R"([{"role": "user", "content": ""}, 3])"
                                   << "messages[1]: expected an object, got number";
    QTest::newRow("unknown role")
        << R"([{"role": "user"}, {"role": "user"}, {"role": "function"}])"
        << "messages[2].role: expected one of system, developer, user, assistant, tool, not 'function'";
    QTest::newRow("missing role") << R"([{"content": "x"}])"
                                  << "messages[0].role: missing";
    QTest::newRow("role not a string") << R"([{"role": 1}])"
                                       << "messages[0].role: expected a string";
    QTest::newRow("content number")
        << R"([{"role": "user", "content": 5}])"
        << "messages[0].content: expected a string, an array of content parts or null, got number";
    QTest::newRow("text part without text")
        << R"([{"role": "user", "content": [{"type": "text"}]}])"
        << "messages[0].content[0].text: missing";
    QTest::newRow("text part not a string")
        << R"([{"role": "system", "content": ["a", {"type": "text", "text": 2}]}])"
        << "messages[0].content[1].text: expected a string, got number";
    QTest::newRow("reasoning number") << R"([{"role": "assistant", "reasoning_content": 1}])"
                                      << "messages[0].reasoning_content: expected a string or null";
    QTest::newRow("tool_calls object")
        << R"([{"role": "assistant", "tool_calls": {}}])"
        << "messages[0].tool_calls: expected an array of tool calls or null, got object";
    QTest::newRow("tool call name missing")
        << R"([{"role": "assistant", "tool_calls": [{"function": {"arguments": {}}}]}])"
        << "messages[0].tool_calls[0].function.name: missing";
    QTest::newRow("arguments bad json")
        << R"([{"role": "user"}, {"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "nope"}}]}])"
        << "messages[1].tool_calls[0].function.arguments: not valid JSON";
    QTest::newRow("arguments array")
        << R"([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "[1]"}}]}])"
        << "messages[0].tool_calls[0].function.arguments: expected a JSON object, got array";
    QTest::newRow("tool output not a string") << R"([{"role": "tool", "content": [{"output": 3}]}])"
                                              << "messages[0].content[0].output: expected a string";
  }
  void malformedMessagesNameTheField() {
    QFETCH(QString, messages);
    QFETCH(QString, message);
    try {
      strata::parseChatMessages(Json::parse(messages.toStdString()));
      QFAIL("no error");
    } catch (const strata::Error& e) {
      QVERIFY2(QString(e.what()).contains(message), e.what());
    }
  }

  // OpenAI clients send their system instructions as "developer" for newer models: the
  // prompt is exactly the one a "system" message gives.
  void developerMessagesAreSystemMessages() {
    const auto render = [](const char* role) {
      Json messages = Json::parse(R"([{"role": "", "content": "Answer in French."},
                                      {"role": "user", "content": "Hi"}])");
      messages[0]["role"] = role;
      strata::ChatOptions options;
      options.addGenerationPrompt = true;
      return strata::renderGlmChat(strata::parseChatMessages(messages), {}, options);
    };
    QCOMPARE(render("developer"), render("system"));
    QVERIFY(render("developer").find("<|system|>Answer in French.<|user|>") != std::string::npos);
  }

  void malformedToolsNameTheField() {
    QVERIFY(strata::parseChatTools(Json()).empty());
    try {
      strata::parseChatTools(Json::parse(R"([{"type": "function"}, "get_weather"])"));
      QFAIL("no error");
    } catch (const strata::Error& e) {
      QVERIFY2(QString(e.what()).contains("tools[1]: expected an object, got string"), e.what());
    }
  }

  void replyWithReasoningAndContent() {
    const auto r = strata::parseGlmReply("Let me add.\n2+2=4\n</think>\n\nThe answer is 4.", true);
    QCOMPARE(q(r.reasoning), q("Let me add.\n2+2=4"));
    QCOMPARE(q(r.content), q("The answer is 4."));
    QVERIFY(r.reasoningComplete);
    QVERIFY(r.toolCalls.empty());
  }

  void replyOpeningItsOwnThinkBlock() {
    const auto r = strata::parseGlmReply("<think>hmm</think>ok", false);
    QCOMPARE(q(r.reasoning), q("hmm"));
    QCOMPARE(q(r.content), q("ok"));
  }

  void replyWithoutThinking() {
    const auto r = strata::parseGlmReply(" Plain answer with a </b> tag. ", false);
    QCOMPARE(q(r.reasoning), q(""));
    QCOMPARE(q(r.content), q("Plain answer with a </b> tag."));
  }

  void replyStoppedWhileThinking() {
    const auto r = strata::parseGlmReply("still working on it", true);
    QCOMPARE(q(r.reasoning), q("still working on it"));
    QCOMPARE(q(r.content), q(""));
    QVERIFY(!r.reasoningComplete);
  }

  void replyWithToolCallsUsesTheSchema() {
    const std::string text =
        "Need weather.</think>I'll check.<tool_call>get_weather<arg_key>city</arg_key><arg_value>42"
        "</arg_value><arg_key>days</arg_key><arg_value>3</arg_value><arg_key>opts</arg_key>"
        "<arg_value>{\"a\": [1, 2.5], \"u\": \"é\"}</arg_value></tool_call>";
    const auto r = strata::parseGlmReply(text, true, strata::parseChatTools(kWeatherTools));
    QCOMPARE(q(r.reasoning), q("Need weather."));
    QCOMPARE(q(r.content), q("I'll check."));
    QCOMPARE(r.toolCalls.size(), size_t{1});
    QCOMPARE(q(r.toolCalls[0].name), q("get_weather"));
    const Json want =
        Json::parse(R"({"city": "42", "days": 3, "opts": {"a": [1, 2.5], "u": "é"}})");
    QCOMPARE(q(r.toolCalls[0].arguments), q(want));  // "42" stays text: the schema says string

    // Without a schema a value that parses as JSON is JSON; one that does not is text.
    const auto loose = strata::parseGlmReply(text, true);
    QCOMPARE(q(loose.toolCalls[0].arguments["city"]), q(Json(42)));
    const auto word = strata::parseGlmReply(
        "<tool_call>f<arg_key>q</arg_key><arg_value>two words</arg_value></tool_call>", false);
    QCOMPARE(q(word.toolCalls[0].arguments["q"]), q(Json("two words")));
  }

  void replyWithSeveralCallsAndNewlines() {
    // GLM-4.5-style layout with newlines between the tags is accepted too.
    const std::string text =
        "</think><tool_call>a\n<arg_key>x</arg_key>\n<arg_value>1</arg_value>\n</tool_call>\n"
        "<tool_call>b</tool_call>";
    const auto r = strata::parseGlmReply(text, true);
    QCOMPARE(q(r.reasoning), q(""));
    QCOMPARE(q(r.content), q(""));
    QCOMPARE(r.toolCalls.size(), size_t{2});
    QCOMPARE(q(r.toolCalls[0].name), q("a"));
    QCOMPARE(q(r.toolCalls[0].arguments), q(Json::parse(R"({"x": 1})")));
    QCOMPARE(q(r.toolCalls[1].name), q("b"));
    QVERIFY(r.toolCalls[1].arguments.empty());

    const Json message = strata::toOpenAiMessage(r);
    QVERIFY(message["content"].is_null());
    QVERIFY(!message.contains("reasoning_content"));
    QCOMPARE(message["tool_calls"].size(), size_t{2});
    QCOMPARE(q(message["tool_calls"][0]["id"]), q(Json("call_0")));
    QCOMPARE(q(message["tool_calls"][1]["id"]), q(Json("call_1")));
    QCOMPARE(q(message["tool_calls"][0]["type"]), q(Json("function")));
    QCOMPARE(q(message["tool_calls"][0]["function"]["name"]), q(Json("a")));
    QCOMPARE(q(message["tool_calls"][0]["function"]["arguments"]), q(Json(R"({"x":1})")));
  }

  void incompleteToolCallStaysText() {
    const auto r = strata::parseGlmReply("</think>Sure.<tool_call>get_weather<arg_key>ci", true);
    QVERIFY(r.toolCalls.empty());
    QCOMPARE(q(r.content), q("Sure.<tool_call>get_weather<arg_key>ci"));
    const auto bad =
        strata::parseGlmReply("<tool_call>f<arg_value>v</arg_value></tool_call>", false);
    QVERIFY(bad.toolCalls.empty());
    QCOMPARE(q(bad.content), q("<tool_call>f<arg_value>v</arg_value></tool_call>"));
    const Json message = strata::toOpenAiMessage(bad);
    QCOMPARE(q(message["content"]), q(Json(bad.content)));
    QVERIFY(!message.contains("tool_calls"));
  }

  // What the renderer writes for an assistant turn, the reply parser reads back.
  void renderedTurnParsesBack() {
    const Json messages = Json::parse(R"([{"role": "user", "content": "q"},
      {"role": "assistant", "reasoning_content": "think first", "content": "Calling.",
       "tool_calls": [{"type": "function", "function": {"name": "get_weather",
         "arguments": {"city": "São Paulo", "days": 2, "opts": {"z": [true, null]}}}}]}])");
    const std::string prompt =
        strata::renderGlmChat(strata::parseChatMessages(messages), {}, strata::ChatOptions{});
    const std::string turn = prompt.substr(prompt.rfind("<|assistant|>") + 13);
    const auto r = strata::parseGlmReply(turn, false, strata::parseChatTools(kWeatherTools));
    QCOMPARE(q(r.reasoning), q("think first"));
    QCOMPARE(q(r.content), q("Calling."));
    QCOMPARE(r.toolCalls.size(), size_t{1});
    QCOMPARE(q(r.toolCalls[0].arguments), q(messages[1]["tool_calls"][0]["function"]["arguments"]));
  }
};

QTEST_GUILESS_MAIN(TestChatFormat)
#include "test_chat_format.moc"
