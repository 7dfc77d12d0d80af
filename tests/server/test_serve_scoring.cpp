// strata-cli serve scoring text and answering with several choices on /v1/completions and
// /v1/chat/completions: echo with prompt log probabilities (as evaluation harnesses use it),
// token-id prompts, batches of prompts and n replies per prompt (streamed or not), logit_bias. Bad
// requests for these fields are rows of test_serve_http's badRequests.
#include <QJsonArray>
#include <QtTest>
#include <cmath>
#include <utility>

#include "engine/cli_runner.h"
#include "http_client.h"
#include "serve_process.h"

namespace {

QJsonObject chatRequest(const QString& question, int maxTokens) {
  return {{"model", "strata-tiny"},
          {"messages", QJsonArray{QJsonObject{{"role", "user"}, {"content", question}}}},
          {"temperature", 0},
          {"max_tokens", maxTokens}};
}

// Log probabilities of the same tokens from two requests: equal to float rounding. A request
// may reuse rows a slot's earlier conversation computed: its prompt's last row then runs as one
// row (the absorbed attention form) where a fresh prompt runs it in its prefill batch (the
// expanded form), which rounds differently in the last bits (-5.0071394e-05 / -5.0071456e-05).
bool closeLogprobs(const QJsonValue& a, const QJsonValue& b) {
  if (a.isNull() || b.isNull()) return a.isNull() && b.isNull();
  if (a.isDouble() && b.isDouble())
    return std::abs(a.toDouble() - b.toDouble()) <= 1e-6 + 1e-5 * std::abs(b.toDouble());
  if (a.isArray() && b.isArray()) {
    const QJsonArray x = a.toArray(), y = b.toArray();
    if (x.size() != y.size()) return false;
    for (qsizetype i = 0; i < x.size(); ++i)
      if (!closeLogprobs(x[i], y[i])) return false;
    return true;
  }
  if (a.isObject() && b.isObject()) {  // top_logprobs: the same tokens
    const QJsonObject x = a.toObject(), y = b.toObject();
    if (x.keys() != y.keys()) return false;
    for (const QString& key : x.keys())
      if (!closeLogprobs(x.value(key), y.value(key))) return false;
    return true;
  }
  return false;
}

}  // namespace

class TestServeScoring : public QObject {
  Q_OBJECT

  ServeProcess server_;  // --slots 2 --queue 4

 private slots:
  void initTestCase() {
    QVERIFY2(server_.start({"--slots", "2", "--queue", "4"}), qPrintable(server_.error));
  }

  void cleanupTestCase() { QCOMPARE(server_.stop(), 0); }

  // echo, as evaluation harnesses score text (lm-evaluation-harness sends the context and
  // continuation as token ids with echo, logprobs 1, max_tokens 1, and sums token_logprobs over
  // the continuation): the prompt's tokens come back spelling its text, the first without a log
  // probability, the continuation's with the numbers those tokens got when generated greedily.
  void echoScoresThePrompt() {
    const QString model = QString(STRATA_RESOURCES_DIR) + "/models/strata-tiny";
    const QString head = "The capital of France is";
    const int generated = 2;  // this prompt's greedy reply ends (<|user|>) after 3
    QJsonObject plain{{"model", "strata-tiny"}, {"prompt", head}, {"max_tokens", generated},
                      {"temperature", 0},       {"logprobs", 1},  {"ignore_eos", true}};
    const QJsonObject greedy = postJson(server_.port, "/v1/completions", plain)
                                   .json()
                                   .value("choices")
                                   .toArray()[0]
                                   .toObject();
    const QJsonArray greedyLogprobs =
        greedy.value("logprobs").toObject().value("token_logprobs").toArray();
    QCOMPARE(greedyLogprobs.size(), generated);

    // The same continuation's ids from the CLI's own path.
    const CliRun headIds =
        runCli({"tokenize", "--tokenizer", model + "/tokenizer.json", "--text", head});
    QCOMPARE(headIds.exitCode, 0);
    QStringList ids = headIds.text().trimmed().mid(5).split(' ');  // "ids: a b c"
    const CliRun tail =
        runCli({"generate", "--model", model, "--tokens", ids.join(','), "--max-new",
                QString::number(generated), "--greedy", "--threads", "1"});
    QCOMPARE(tail.exitCode, 0);
    const qsizetype context = ids.size();
    ids += tail.text().trimmed().mid(5).split(' ');
    QCOMPARE(ids.size(), context + generated);
    QJsonArray tokenPrompt;
    for (const QString& id : ids) tokenPrompt.append(id.toInt());

    for (const int maxTokens : {1, 0}) {
      const QJsonObject request{
          {"model", "strata-tiny"}, {"prompt", QJsonArray{tokenPrompt}}, {"echo", true},
          {"logprobs", 1},          {"max_tokens", maxTokens},           {"temperature", 0}};
      const HttpResponse r = postJson(server_.port, "/v1/completions", request);
      QCOMPARE(r.status, 200);
      const QJsonObject choice = r.json().value("choices").toArray()[0].toObject();
      const QJsonObject usage = r.json().value("usage").toObject();
      QCOMPARE(usage.value("prompt_tokens").toInt(), ids.size());
      QCOMPARE(usage.value("completion_tokens").toInt(), maxTokens);
      const QString text = choice.value("text").toString();
      QVERIFY2(text.startsWith(head + greedy.value("text").toString()), qPrintable(text));
      const QJsonObject lp = choice.value("logprobs").toObject();
      const QJsonArray tokens = lp.value("tokens").toArray();
      QCOMPARE(tokens.size(), ids.size() + maxTokens);
      QVERIFY(lp.value("token_logprobs").toArray()[0].isNull());
      QVERIFY(lp.value("top_logprobs").toArray()[0].isNull());
      QString spelled;  // by the prompt's tokens
      for (qsizetype i = 0; i < tokens.size(); ++i) {
        QCOMPARE(lp.value("text_offset").toArray()[i].toInt(), spelled.size());
        if (i < ids.size()) spelled += tokens[i].toString();
        if (i == 0) continue;
        const double logprob = lp.value("token_logprobs").toArray()[i].toDouble();
        const QJsonObject top = lp.value("top_logprobs").toArray()[i].toObject();
        QCOMPARE(top.size(), 1);
        QVERIFY(logprob <= top.begin()->toDouble() + 1e-6);
        if (i >= context && i < context + generated) {  // the greedy continuation
          const double expected = greedyLogprobs[i - context].toDouble();
          QVERIFY2(std::abs(logprob - expected) < 1e-3,
                   qPrintable(QString("token %1: %2 vs %3").arg(i).arg(logprob).arg(expected)));
          QCOMPARE(top.begin().key(), tokens[i].toString());  // what lm-eval calls is_greedy
        }
      }
      // After them the generated token, listed even when it ends the reply and is not text.
      QVERIFY2(text.startsWith(spelled), qPrintable(spelled + " | " + text));
      if (maxTokens == 0) QCOMPARE(spelled, text);
    }
    // Streamed, the chunks join into the same text and the same lists (the prompt's first).
    for (const auto& [logprobs, maxTokens] : {std::pair{-1, 3}, std::pair{2, 3}, std::pair{2, 0}}) {
      QJsonObject request{{"model", "strata-tiny"},
                          {"prompt", head},
                          {"echo", true},
                          {"max_tokens", maxTokens},
                          {"temperature", 0}};
      if (logprobs >= 0) request["logprobs"] = logprobs;
      const QJsonObject whole = postJson(server_.port, "/v1/completions", request)
                                    .json()
                                    .value("choices")
                                    .toArray()[0]
                                    .toObject();
      request["stream"] = true;
      QString text;
      QJsonArray tokens, offsets, values, tops;
      for (const QByteArray& event :
           sseData(postJson(server_.port, "/v1/completions", request).body)) {
        if (event == "[DONE]") continue;
        const QJsonObject c =
            QJsonDocument::fromJson(event).object().value("choices").toArray()[0].toObject();
        text += c.value("text").toString();
        const QJsonObject lp = c.value("logprobs").toObject();
        for (const QJsonValue& v : lp.value("tokens").toArray()) tokens.append(v);
        for (const QJsonValue& v : lp.value("text_offset").toArray()) offsets.append(v);
        for (const QJsonValue& v : lp.value("token_logprobs").toArray()) values.append(v);
        for (const QJsonValue& v : lp.value("top_logprobs").toArray()) tops.append(v);
      }
      QCOMPARE(text, whole.value("text").toString());
      QVERIFY(text.startsWith(head));
      const QJsonObject lp = whole.value("logprobs").toObject();
      QCOMPARE(whole.value("logprobs").isNull(), logprobs < 0);
      QCOMPARE(tokens, lp.value("tokens").toArray());
      QCOMPARE(offsets, lp.value("text_offset").toArray());
      QVERIFY(closeLogprobs(values, lp.value("token_logprobs").toArray()));
      QVERIFY(closeLogprobs(tops, lp.value("top_logprobs").toArray()));
    }

    // A text prompt echoes its own text.
    const HttpResponse echoed =
        postJson(server_.port, "/v1/completions",
                 {{"model", "strata-tiny"}, {"prompt", head}, {"echo", true}, {"max_tokens", 0}});
    QCOMPARE(echoed.status, 200);
    const QJsonObject c = echoed.json().value("choices").toArray()[0].toObject();
    QCOMPARE(c.value("text").toString(), head);
    QVERIFY(c.value("logprobs").isNull());
    QCOMPARE(c.value("finish_reason").toString(), QString("length"));
  }

  // A batch of prompts (strings or token ids): one choice per prompt, in order, each what the
  // prompt alone gets; usage sums them.
  void promptBatches() {
    const QStringList heads{"The capital of France is", "The capital of Kenya is",
                            "Count the items:"};
    QStringList alone;
    int promptTokens = 0, completionTokens = 0;
    for (const QString& head : heads) {
      const QJsonObject j =
          postJson(
              server_.port, "/v1/completions",
              {{"model", "strata-tiny"}, {"prompt", head}, {"max_tokens", 6}, {"temperature", 0}})
              .json();
      alone << j.value("choices").toArray()[0].toObject().value("text").toString();
      promptTokens += j.value("usage").toObject().value("prompt_tokens").toInt();
      completionTokens += j.value("usage").toObject().value("completion_tokens").toInt();
    }
    const HttpResponse r = postJson(server_.port, "/v1/completions",
                                    {{"model", "strata-tiny"},
                                     {"prompt", QJsonArray::fromStringList(heads)},
                                     {"max_tokens", 6},
                                     {"temperature", 0}});
    QCOMPARE(r.status, 200);
    const QJsonArray choices = r.json().value("choices").toArray();
    QCOMPARE(choices.size(), heads.size());
    for (qsizetype i = 0; i < choices.size(); ++i) {
      QCOMPARE(choices[i].toObject().value("index").toInt(), i);
      QCOMPARE(choices[i].toObject().value("text").toString(), alone[i]);
    }
    QCOMPARE(r.json().value("usage").toObject().value("prompt_tokens").toInt(), promptTokens);
    QCOMPARE(r.json().value("usage").toObject().value("completion_tokens").toInt(),
             completionTokens);

    // Token-id prompts scored with echo, as a harness batches them.
    const HttpResponse scored =
        postJson(server_.port, "/v1/completions",
                 {{"model", "strata-tiny"},
                  {"prompt", QJsonArray{QJsonArray{390, 289, 293}, QJsonArray{390, 289}}},
                  {"echo", true},
                  {"logprobs", 1},
                  {"max_tokens", 0}});
    QCOMPARE(scored.status, 200);
    const QJsonArray scoredChoices = scored.json().value("choices").toArray();
    QCOMPARE(scoredChoices.size(), 2);
    const QJsonArray first =
        scoredChoices[0].toObject().value("logprobs").toObject().value("token_logprobs").toArray();
    const QJsonArray second =
        scoredChoices[1].toObject().value("logprobs").toObject().value("token_logprobs").toArray();
    QCOMPARE(first.size(), 3);
    QCOMPARE(second.size(), 2);
    QVERIFY(first[0].isNull() && second[0].isNull());
    QVERIFY(std::abs(first[1].toDouble() - second[1].toDouble()) < 1e-4);  // the same context
  }

  // n: that many replies to each prompt, reply k sampled with seed + k (so each is what a
  // single request with that seed gets); the prompt counted once in usage.
  void severalChoices() {
    QJsonObject chat = chatRequest("Tell me about Paris.", 12);
    chat["temperature"] = 1.2;
    chat["seed"] = 5;
    chat["n"] = 3;
    const HttpResponse r = postJson(server_.port, "/v1/chat/completions", chat);
    QCOMPARE(r.status, 200);
    const QJsonArray choices = r.json().value("choices").toArray();
    QCOMPARE(choices.size(), 3);
    int completionTokens = 0;
    for (int k = 0; k < 3; ++k) {
      QJsonObject single = chat;
      single.remove("n");
      single["seed"] = 5 + k;
      const QJsonObject alone = postJson(server_.port, "/v1/chat/completions", single).json();
      QCOMPARE(choices[k].toObject().value("index").toInt(), k);
      QCOMPARE(choices[k].toObject().value("message").toObject(),
               alone.value("choices").toArray()[0].toObject().value("message").toObject());
      completionTokens += alone.value("usage").toObject().value("completion_tokens").toInt();
      if (k == 0)
        QCOMPARE(r.json().value("usage").toObject().value("prompt_tokens"),
                 alone.value("usage").toObject().value("prompt_tokens"));
    }
    QCOMPARE(r.json().value("usage").toObject().value("completion_tokens").toInt(),
             completionTokens);

    // With a batch of prompts: n choices for the first prompt, then n for the second.
    const HttpResponse batch = postJson(server_.port, "/v1/completions",
                                        {{"model", "strata-tiny"},
                                         {"prompt", QJsonArray{"Paris is", "Kenya is"}},
                                         {"n", 2},
                                         {"max_tokens", 8},
                                         {"temperature", 1.2},
                                         {"seed", 9}});
    QCOMPARE(batch.status, 200);
    const QJsonArray four = batch.json().value("choices").toArray();
    QCOMPARE(four.size(), 4);
    const QJsonObject third = postJson(server_.port, "/v1/completions",
                                       {{"model", "strata-tiny"},
                                        {"prompt", "Kenya is"},
                                        {"max_tokens", 8},
                                        {"temperature", 1.2},
                                        {"seed", 9}})
                                  .json();
    QCOMPARE(four[2].toObject().value("text"),
             third.value("choices").toArray()[0].toObject().value("text"));
  }

  // logit_bias: -100 on the greedy token makes the runner-up (by the model's own unbiased
  // numbers, which logprobs report) the choice; +100 on a token makes it every choice.
  void logitBias() {
    const QString model = QString(STRATA_RESOURCES_DIR) + "/models/strata-tiny";
    const CliRun head = runCli({"tokenize", "--tokenizer", model + "/tokenizer.json", "--text",
                                "The capital of France is"});
    QCOMPARE(head.exitCode, 0);
    const QStringList ids = head.text().trimmed().mid(5).split(' ');  // "ids: a b c"
    const CliRun greedy = runCli({"generate", "--model", model, "--tokens", ids.join(','),
                                  "--max-new", "1", "--greedy", "--threads", "1"});
    QCOMPARE(greedy.exitCode, 0);
    const QString best = greedy.text().trimmed().mid(5);
    QJsonArray tokenPrompt;
    for (const QString& id : ids) tokenPrompt.append(id.toInt());
    QJsonObject request{{"model", "strata-tiny"},
                        {"prompt", tokenPrompt},
                        {"max_tokens", 1},
                        {"temperature", 0},
                        {"logprobs", 2}};
    auto logprobsWith = [&](const QJsonObject& bias) {
      QJsonObject r = request;
      if (!bias.isEmpty()) r["logit_bias"] = bias;
      const HttpResponse response = postJson(server_.port, "/v1/completions", r);
      return response.json().value("choices").toArray()[0].toObject().value("logprobs").toObject();
    };
    const QJsonObject plain = logprobsWith({});
    const QString plainToken = plain.value("tokens").toArray()[0].toString();
    const QJsonObject top = plain.value("top_logprobs").toArray()[0].toObject();
    QCOMPARE(top.size(), 2);
    const QJsonObject banned = logprobsWith({{best, -100}});
    const QString chosen = banned.value("tokens").toArray()[0].toString();
    QVERIFY2(chosen != plainToken, qPrintable(chosen));
    QVERIFY2(top.contains(chosen), qPrintable(chosen));  // the runner-up
    // The reported numbers stay the model's own (unbiased); a slot that reused a cached prefix
    // may differ in the last bits.
    const QJsonObject bannedTop = banned.value("top_logprobs").toArray()[0].toObject();
    QCOMPARE(bannedTop.keys(), top.keys());
    for (const QString& token : top.keys())
      QVERIFY(std::abs(bannedTop.value(token).toDouble() - top.value(token).toDouble()) < 1e-4);

    // +100 on the prompt's first token: chosen every time.
    const CliRun spelled =
        runCli({"detokenize", "--tokenizer", model + "/tokenizer.json", "--ids", ids[0]});
    QCOMPARE(spelled.exitCode, 0);
    request["max_tokens"] = 3;
    request["ignore_eos"] = true;
    const QJsonArray forced = logprobsWith({{ids[0], 100}}).value("tokens").toArray();
    QCOMPARE(forced.size(), 3);
    for (const QJsonValue& t : forced) QCOMPARE(t.toString(), spelled.text());
  }

  // Streamed, several choices interleave their chunks, each naming its index: every index's
  // chunks join into the choice the same request gets without stream (role first, one
  // finish_reason last), and the usage chunk comes once, after all of them.
  void severalChoicesStream() {
    QJsonObject chat = chatRequest("Tell me about Paris.", 12);
    chat["temperature"] = 1.2;
    chat["seed"] = 5;
    chat["n"] = 3;
    const QJsonObject whole = postJson(server_.port, "/v1/chat/completions", chat).json();
    chat["stream"] = true;
    chat["stream_options"] = QJsonObject{{"include_usage", true}};
    const QList<QByteArray> events =
        sseData(postJson(server_.port, "/v1/chat/completions", chat).body);
    QVERIFY(events.size() > 5);
    QCOMPARE(events.back(), QByteArray("[DONE]"));
    const QJsonObject usage = QJsonDocument::fromJson(events[events.size() - 2]).object();
    QVERIFY(usage.value("choices").toArray().isEmpty());
    QCOMPARE(usage.value("usage").toObject(), whole.value("usage").toObject());
    QList<QStringList> parts(3);  // per index: reasoning, content, finish_reason
    for (QStringList& p : parts) p = {"", "", ""};
    QList<int> chunks(3, 0);
    for (qsizetype e = 0; e + 2 < events.size(); ++e) {
      const QJsonArray choices =
          QJsonDocument::fromJson(events[e]).object().value("choices").toArray();
      QCOMPARE(choices.size(), 1);
      const QJsonObject c = choices[0].toObject();
      const int i = c.value("index").toInt(-1);
      QVERIFY2(i >= 0 && i < 3, events[e].constData());
      const QJsonObject delta = c.value("delta").toObject();
      if (chunks[i]++ == 0) QCOMPARE(delta.value("role").toString(), QString("assistant"));
      QVERIFY2(parts[i][2].isEmpty(), "a chunk after the choice's finish_reason");
      parts[i][0] += delta.value("reasoning_content").toString();
      parts[i][1] += delta.value("content").toString();
      if (!c.value("finish_reason").isNull()) parts[i][2] = c.value("finish_reason").toString();
    }
    const QJsonArray choices = whole.value("choices").toArray();
    QCOMPARE(choices.size(), 3);
    for (int i = 0; i < 3; ++i) {
      const QJsonObject message = choices[i].toObject().value("message").toObject();
      QCOMPARE(parts[i][0], message.value("reasoning_content").toString());
      QCOMPARE(parts[i][1], message.value("content").toString());
      QCOMPARE(parts[i][2], choices[i].toObject().value("finish_reason").toString());
    }
    QVERIFY(parts[0] != parts[1] || parts[1] != parts[2]);  // sampled apart

    // A batch of prompts with n = 2, echoed and scored: each index's text and
    // log probabilities equal the non-streamed choice's.
    QJsonObject batch{{"model", "strata-tiny"},
                      {"prompt", QJsonArray{"Paris is", "Kenya is"}},
                      {"n", 2},
                      {"echo", true},
                      {"logprobs", 1},
                      {"max_tokens", 5},
                      {"temperature", 1.2},
                      {"seed", 9}};
    const QJsonArray four =
        postJson(server_.port, "/v1/completions", batch).json().value("choices").toArray();
    QCOMPARE(four.size(), 4);
    batch["stream"] = true;
    QStringList texts(4), finish(4);
    QList<QJsonArray> tokens(4), values(4);
    for (const QByteArray& event : sseData(postJson(server_.port, "/v1/completions", batch).body)) {
      if (event == "[DONE]") continue;
      const QJsonObject c =
          QJsonDocument::fromJson(event).object().value("choices").toArray()[0].toObject();
      const int i = c.value("index").toInt(-1);
      QVERIFY2(i >= 0 && i < 4, event.constData());
      texts[i] += c.value("text").toString();
      if (!c.value("finish_reason").isNull()) finish[i] = c.value("finish_reason").toString();
      const QJsonObject lp = c.value("logprobs").toObject();
      for (const QJsonValue& v : lp.value("tokens").toArray()) tokens[i].append(v);
      for (const QJsonValue& v : lp.value("token_logprobs").toArray()) values[i].append(v);
    }
    for (int i = 0; i < 4; ++i) {
      const QJsonObject c = four[i].toObject();
      QCOMPARE(texts[i], c.value("text").toString());
      QCOMPARE(finish[i], c.value("finish_reason").toString());
      QCOMPARE(tokens[i], c.value("logprobs").toObject().value("tokens").toArray());
      // Log probabilities to float noise: a slot that reused a cached prefix computes the same
      // numbers in another order.
      const QJsonArray whole = c.value("logprobs").toObject().value("token_logprobs").toArray();
      QCOMPARE(values[i].size(), whole.size());
      for (qsizetype k = 0; k < whole.size(); ++k) {
        QCOMPARE(values[i][k].isNull(), whole[k].isNull());
        QVERIFY(std::abs(values[i][k].toDouble() - whole[k].toDouble()) < 1e-4);
      }
    }
    QVERIFY(texts[0].startsWith("Paris is") && texts[3].startsWith("Kenya is"));
  }
};

QTEST_GUILESS_MAIN(TestServeScoring)
#include "test_serve_scoring.moc"
