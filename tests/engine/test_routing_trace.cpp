// Routing traces: what the writer writes the reader reads back; every malformed line is
// rejected with the file and line number; the writer refuses what the reader would reject.
#include <QTemporaryDir>
#include <QtTest>
#include <fstream>
#include <string>
#include <vector>

#include "error_check.h"
#include "tier/routing_trace.h"

using namespace strata::tier;

namespace {

const char* kHeader = R"({"format":"strata-routing-trace","version":1,"model":"m","layers":[1,3],)"
                      R"("experts_per_layer":16,"expert_bytes":4096})";

std::string writeText(const QTemporaryDir& dir, const std::string& text) {
  const std::string path = dir.filePath("trace.jsonl").toStdString();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

RoutingTraceHeader smallHeader() { return {"tiny \"quoted\" model", {1, 3}, 16, 4096}; }

}  // namespace

class TestRoutingTrace : public QObject {
  Q_OBJECT

 private slots:
  void writerToReaderRoundTrip() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("t.jsonl").toStdString();
    {
      RoutingTraceWriter writer(path, smallHeader());
      const std::vector<int> a = {5, 2, 9, 2}, b = {15, 0}, c = {};
      writer.add(0, 1, a);  // unsorted, duplicated: stored as the ascending union
      writer.add(0, 3, b);
      writer.add(2, 3, c);
      writer.close();
    }
    const RoutingTrace trace = readRoutingTrace(path);
    QCOMPARE(trace.header.model, std::string("tiny \"quoted\" model"));
    QCOMPARE(trace.header.layers, (std::vector<int>{1, 3}));
    QCOMPARE(trace.header.expertsPerLayer, 16);
    QCOMPARE(trace.header.expertBytes, uint64_t(4096));
    QCOMPARE(trace.lines.size(), size_t(3));
    QCOMPARE(trace.lines[0].step, 0);
    QCOMPARE(trace.lines[0].layer, 1);
    QCOMPARE(trace.lines[0].experts, (std::vector<int>{2, 5, 9}));
    QCOMPARE(trace.lines[1].experts, (std::vector<int>{0, 15}));
    QCOMPARE(trace.lines[2].step, 2);
    QVERIFY(trace.lines[2].experts.empty());
    QCOMPARE(trace.stepCount(), 3);
  }

  void fileIsJsonLinesAsDocumented() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("t.jsonl").toStdString();
    RoutingTraceWriter writer(path, {"m", {1, 3}, 16, 4096});
    const std::vector<int> experts = {7, 4};
    writer.add(5, 3, experts);
    writer.close();
    std::ifstream in(path);
    std::string header, line, rest;
    std::getline(in, header);
    std::getline(in, line);
    QCOMPARE(QString::fromStdString(header), QString::fromLatin1(kHeader));
    QCOMPARE(line, std::string(R"({"step":5,"layer":3,"experts":[4,7]})"));
    QVERIFY(!std::getline(in, rest));
  }

  void blankLinesAreIgnored() {
    QTemporaryDir dir;
    const std::string path = writeText(
        dir, std::string(kHeader) + "\r\n\n" + R"({"step":0,"layer":1,"experts":[1]})" + "\n\n");
    QCOMPARE(readRoutingTrace(path).lines.size(), size_t(1));
  }

  void malformedLinesNameTheLine_data() {
    QTest::addColumn<QString>("body");  // the lines after the header
    QTest::addColumn<int>("line");
    QTest::addColumn<QString>("message");
    const QString ok = R"({"step":0,"layer":1,"experts":[1,2]})";
    QTest::newRow("not json") << ok + "\n{\"step\":1," << 3 << "not valid JSON";
    QTest::newRow("not an object") << "[1,2]" << 2 << "expected a JSON object";
    QTest::newRow("missing experts")
        << R"({"step":0,"layer":1})" << 2 << "\"experts\" must be an array";
    QTest::newRow("step not integer")
        << R"({"step":"0","layer":1,"experts":[]})" << 2 << "\"step\" must be an integer";
    QTest::newRow("expert not integer")
        << R"({"step":0,"layer":1,"experts":[1.5]})" << 2 << "\"experts\" must hold integers";
    QTest::newRow("expert out of range") << ok + "\n" + R"({"step":0,"layer":3,"experts":[3,16]})"
                                         << 3 << "expert 16 is out of range [0, 16)";
    QTest::newRow("negative expert")
        << R"({"step":0,"layer":1,"experts":[-1]})" << 2 << "expert -1 is out of range";
    QTest::newRow("unknown layer")
        << R"({"step":0,"layer":2,"experts":[1]})" << 2 << "layer 2 is not in the header's layers";
    QTest::newRow("not ascending")
        << R"({"step":0,"layer":1,"experts":[4,2]})" << 2 << "strictly ascending";
    QTest::newRow("duplicate expert")
        << R"({"step":0,"layer":1,"experts":[2,2]})" << 2 << "strictly ascending";
    QTest::newRow("step goes back") << R"({"step":4,"layer":1,"experts":[]})"
                                       "\n"
                                       R"({"step":3,"layer":3,"experts":[]})"
                                    << 3 << "steps must not decrease";
    QTest::newRow("layer twice in a step")
        << ok + "\n" + ok << 3 << "layer 1 appears twice in step 0";
  }
  void malformedLinesNameTheLine() {
    QFETCH(QString, body);
    QFETCH(int, line);
    QFETCH(QString, message);
    QTemporaryDir dir;
    const std::string path =
        writeText(dir, std::string(kHeader) + "\n" + body.toStdString() + "\n");
    const QString where = QString::fromStdString(path) + ":" + QString::number(line) + ":";
    QCOMPARE(errorOf([&] { readRoutingTrace(path); }, {where, message}), QString());
  }

  void badHeadersAreRejected_data() {
    QTest::addColumn<QString>("header");
    QTest::addColumn<QString>("message");
    QTest::newRow("wrong format") << R"({"format":"other","version":1})"
                                  << "\"format\" must be";
    QTest::newRow("future version")
        << R"({"format":"strata-routing-trace","version":2,"layers":[0],"experts_per_layer":4,"expert_bytes":1})"
        << "\"version\" must be 1";
    QTest::newRow("no layers")
        << R"({"format":"strata-routing-trace","version":1,"layers":[],"experts_per_layer":4,"expert_bytes":1})"
        << "at least one MoE layer";
    QTest::newRow("layer twice")
        << R"({"format":"strata-routing-trace","version":1,"layers":[2,2],"experts_per_layer":4,"expert_bytes":1})"
        << "layer 2 twice";
    QTest::newRow("no experts")
        << R"({"format":"strata-routing-trace","version":1,"layers":[0],"experts_per_layer":0,"expert_bytes":1})"
        << "experts_per_layer must be in [1, 65535]";
    QTest::newRow("negative bytes")
        << R"({"format":"strata-routing-trace","version":1,"layers":[0],"experts_per_layer":4,"expert_bytes":-1})"
        << "\"expert_bytes\" must be a non-negative integer";
  }
  void badHeadersAreRejected() {
    QFETCH(QString, header);
    QFETCH(QString, message);
    QTemporaryDir dir;
    // A blank first line: the header is the first non-empty line, and errors say line 2.
    const std::string path = writeText(dir, std::string("\n").append(header.toStdString()) + "\n");
    const QString where = QString::fromStdString(path) + ":2: header";
    QCOMPARE(errorOf([&] { readRoutingTrace(path); }, {where, message}), QString());
  }

  void emptyAndMissingFilesAreRejected() {
    QTemporaryDir dir;
    const std::string empty = writeText(dir, "\n");
    QCOMPARE(errorOf([&] { readRoutingTrace(empty); }, {"no header line"}), QString());
    const std::string missing = dir.filePath("nope.jsonl").toStdString();
    QCOMPARE(errorOf([&] { readRoutingTrace(missing); }, {"nope.jsonl", "cannot open"}), QString());
  }

  void writerRefusesWhatTheReaderWouldReject() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("t.jsonl").toStdString();
    RoutingTraceWriter writer(path, smallHeader());
    const std::vector<int> outOfRange = {16}, fine = {1};
    QCOMPARE(
        errorOf([&] { writer.add(0, 1, outOfRange); }, {"t.jsonl", "expert 16 is out of range"}),
        QString());
    QCOMPARE(errorOf([&] { writer.add(0, 2, fine); }, {"t.jsonl", "layer 2 is not in"}), QString());
    writer.add(3, 1, fine);
    QCOMPARE(errorOf([&] { writer.add(2, 1, fine); }, {"steps must not decrease"}), QString());
    writer.close();
    QCOMPARE(readRoutingTrace(path).lines.size(), size_t(1));  // the refused lines were not written
    QCOMPARE(errorOf([&] { writer.add(4, 1, fine); }, {"already closed"}), QString());
    RoutingTraceHeader bad = smallHeader();
    bad.expertsPerLayer = 0;
    QCOMPARE(errorOf([&] { RoutingTraceWriter(dir.filePath("b").toStdString(), bad); },
                     {"experts_per_layer"}),
             QString());
  }

  void writerReportsAnUnwritablePath() {
    QTemporaryDir dir;
    const std::string path = dir.filePath("no/such/dir/t.jsonl").toStdString();
    QCOMPARE(errorOf([&] { RoutingTraceWriter(path, smallHeader()); },
                     {QString::fromStdString(path), "cannot create"}),
             QString());
  }
};

QTEST_APPLESS_MAIN(TestRoutingTrace)
#include "test_routing_trace.moc"
