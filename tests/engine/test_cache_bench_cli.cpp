// strata-cli bench cache, driven as a script would: on a generated trace, --json prints one
// line per policy with exactly one default, ratios that are hit rates over Belady's, and the
// capacity the options asked for; mistakes in the call or the trace exit with clear errors.
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli_runner.h"
#include "synthetic_routing.h"
#include "tier/cache_policy.h"
#include "tier/cache_replay.h"
#include "tier/routing_trace.h"

using Json = nlohmann::json;
using namespace strata::tier;

namespace {

// Writes the synthetic trace through the writer; returns how many accesses it holds.
size_t writeTrace(const QString& path, const SyntheticRouting& shape) {
  const RoutingTrace trace = syntheticRoutingTrace(shape);
  RoutingTraceWriter writer(path.toStdString(), trace.header);
  size_t accesses = 0;
  for (const RoutingTraceLine& line : trace.lines) {
    writer.add(line.step, line.layer, line.experts);
    accesses += line.experts.size();
  }
  writer.close();
  return accesses;
}

std::vector<Json> jsonLines(const QByteArray& out) {
  std::vector<Json> lines;
  std::istringstream in(out.toStdString());
  for (std::string line; std::getline(in, line);) lines.push_back(Json::parse(line));
  return lines;
}

}  // namespace

class TestCacheBenchCli : public QObject {
  Q_OBJECT

 private:
  QTemporaryDir dir_;
  QString trace_;
  size_t accesses_ = 0;
  SyntheticRouting shape_;

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    trace_ = dir_.filePath("trace.jsonl");
    accesses_ = writeTrace(trace_, shape_);
  }

  void jsonHasOneLinePerPolicyAndOneDefault() {
    const CliRun run =
        runCli({"bench", "cache", "--trace", trace_, "--json", "--capacity-fraction", "0.25"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const std::vector<Json> lines = jsonLines(run.out);
    QCOMPARE(lines.size(), allCachePolicies().size());
    const size_t capacity = size_t(0.25 * shape_.layers * shape_.experts);  // 96
    std::set<std::string> names;
    int defaults = 0;
    for (const Json& j : lines) {
      names.insert(j.at("policy").get<std::string>());
      QCOMPARE(j.at("capacity").get<size_t>(), capacity);
      QCOMPARE(j.at("accesses").get<size_t>(), accesses_);
      const double hit = j.at("hit_rate"), best = j.at("belady_hit_rate"), ratio = j.at("ratio");
      QVERIFY(hit > 0 && hit <= best && best < 1);
      QVERIFY(qAbs(ratio - hit / best) < 1e-12);
      const double fixed = j.at("static_hit_rate");
      QVERIFY(fixed > 0 && fixed <= best);
      if (j.at("default").get<bool>()) {
        ++defaults;
        QCOMPARE(j.at("policy").get<std::string>(),
                 std::string(cachePolicyName(defaultCachePolicy())));
      }
    }
    QCOMPARE(defaults, 1);
    QCOMPARE(names.size(), lines.size());
    QVERIFY(names.count("lru") && names.count("slru"));
  }

  void capacityOptionIsUsedAsGiven() {
    const CliRun run = runCli({"bench", "cache", "--trace", trace_, "--json", "--capacity", "17"});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const std::vector<Json> lines = jsonLines(run.out);
    QVERIFY(!lines.empty());
    // Belady's hit rate at 17 experts, computed here from the same trace.
    const std::vector<ExpertKey> keys = traceAccesses(readRoutingTrace(trace_.toStdString()));
    const double best = replayBelady(keys, 17).hitRate();
    const double fixed = replayBestStatic(keys, 17).hitRate();
    for (const Json& j : lines) {
      QCOMPARE(j.at("capacity").get<int>(), 17);
      QCOMPARE(j.at("belady_hit_rate").get<double>(), best);
      QCOMPARE(j.at("static_hit_rate").get<double>(), fixed);
    }
  }

  void tableNamesEveryPolicyAndBelady() {
    const CliRun run = runCli({"bench", "cache", "--trace", trace_});
    QVERIFY2(run.exitCode == 0, qPrintable(run.err));
    const QString text = run.text();
    for (CachePolicyKind kind : allCachePolicies())
      QVERIFY(text.contains(QString::fromLatin1(cachePolicyName(kind).data())));
    QVERIFY(text.contains("belady"));
    QVERIFY(text.contains("static"));
    QVERIFY(text.contains("(default)"));
    QVERIFY(text.contains("capacity 77 experts"));  // 20% of 6 x 64 = 76.8
  }

  void usageMistakesExitWithStatus2_data() {
    QTest::addColumn<QStringList>("options");
    QTest::addColumn<QString>("message");
    QTest::newRow("no trace") << QStringList{"--json"} << "missing --trace";
    QTest::newRow("both capacities")
        << QStringList{"--trace", "x", "--capacity", "3", "--capacity-fraction", "0.1"}
        << "not both";
    QTest::newRow("fraction above one")
        << QStringList{"--trace", "x", "--capacity-fraction", "1.5"} << "not a number in (0, 1]";
    QTest::newRow("zero capacity")
        << QStringList{"--trace", "x", "--capacity", "0"} << "--capacity must be at least 1";
    QTest::newRow("unknown option")
        << QStringList{"--trace", "x", "--policy", "lru"} << "unknown option --policy";
  }
  void usageMistakesExitWithStatus2() {
    QFETCH(QStringList, options);
    QFETCH(QString, message);
    const CliRun run = runCli(QStringList{"bench", "cache"} + options);
    QCOMPARE(run.exitCode, 2);
    QVERIFY2(run.err.contains(message), qPrintable(run.err));
  }

  void malformedTraceExitsWithTheLine() {
    const QString path = dir_.filePath("bad.jsonl");
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write(R"({"format":"strata-routing-trace","version":1,"model":"m","layers":[0],)"
               R"("experts_per_layer":4,"expert_bytes":1})"
               "\n{\"step\":0,\"layer\":0,\"experts\":[9]}\n");
    file.close();
    const CliRun run = runCli({"bench", "cache", "--trace", path});
    QCOMPARE(run.exitCode, 1);
    QVERIFY2(run.err.contains("bad.jsonl:2: expert 9 is out of range"), qPrintable(run.err));
  }
};

QTEST_APPLESS_MAIN(TestCacheBenchCli)
#include "test_cache_bench_cli.moc"
