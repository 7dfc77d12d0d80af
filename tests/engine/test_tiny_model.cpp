// The bundled tiny model (resources/models/strata-tiny) through the C++ engine: the chat
// format and tokenizer give the prompt ids the PyTorch reference used, and greedy decoding
// gives exactly the reference's answers (reference_answers.jsonl, written by
// tools/train/eval_tasks.py --answers-out from the float64 reference).
#include <QtTest>

#include <fstream>

#include "fixtures.h"
#include "strata/chat.h"
#include "strata/engine.h"

namespace {

std::filesystem::path modelDir() { return std::filesystem::path(STRATA_RESOURCES_DIR) / "models" / "strata-tiny"; }

std::vector<nlohmann::ordered_json> referenceAnswers() {
  std::ifstream in(modelDir() / "reference_answers.jsonl");
  std::vector<nlohmann::ordered_json> rows;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(nlohmann::ordered_json::parse(line));
  return rows;
}

}  // namespace

class TestTinyModel : public QObject {
  Q_OBJECT

 private slots:
  void greedyAnswersEqualReference_data() {
    QTest::addColumn<int>("row");
    const auto rows = referenceAnswers();
    QVERIFY2(rows.size() >= 6, "reference_answers.jsonl is missing or short");
    for (size_t i = 0; i < rows.size(); ++i)
      QTest::addRow("%zu %s", i, rows[i]["task"].get<std::string>().c_str()) << static_cast<int>(i);
  }
  void greedyAnswersEqualReference() {
    QFETCH(int, row);
    static auto engine = strata::Engine::open(modelDir());
    const auto expected = referenceAnswers().at(static_cast<size_t>(row));

    strata::ChatOptions chat;
    chat.addGenerationPrompt = true;
    const std::string prompt = strata::renderGlmChat(strata::parseChatMessages(expected["messages"]), {}, chat);
    const std::vector<int32_t> ids = engine->tokenizer()->encode(prompt);
    QCOMPARE(ids, expected["prompt_ids"].get<std::vector<int32_t>>());

    strata::GenerateOptions options;
    options.sampling.temperature = 0.0f;
    const auto want = expected["generated_ids"].get<std::vector<int32_t>>();
    options.maxNewTokens = expected["max_new"].get<int>();  // the reference's limit
    auto session = engine->newSession();
    std::vector<int32_t> got = session->generate(ids, options).tokens;
    const auto& eos = engine->info().eosTokenIds;
    if (!got.empty() && std::find(eos.begin(), eos.end(), got.back()) != eos.end()) got.pop_back();
    QCOMPARE(got, want);
  }
};

QTEST_GUILESS_MAIN(TestTinyModel)
#include "test_tiny_model.moc"
