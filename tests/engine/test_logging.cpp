// The log file: it rotates by size, keeps the stated number of old files, holds the latest
// lines, and a path that cannot be written is an error naming it.
#include <QTemporaryDir>
#include <QTest>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "strata/error.h"
#include "strata/logging.h"

namespace fs = std::filesystem;

namespace {

std::string readAll(const fs::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

class TestLogging : public QObject {
  Q_OBJECT

 private slots:
  void unwritablePathIsAnError() {
    QTemporaryDir dir;
    const fs::path blocker = fs::path(dir.path().toStdString()) / "not-a-folder";
    std::ofstream(blocker) << "a file where a folder should be";
    try {
      strata::logToFile(blocker / "strata.log");
      QFAIL("no error");
    } catch (const strata::Error& e) {
      QVERIFY2(std::string(e.what()).find("not-a-folder/strata.log") != std::string::npos, e.what());
    }
  }

  void rotatesBySizeAndKeepsOldFiles() {
    QTemporaryDir dir;
    const fs::path logs = fs::path(dir.path().toStdString()) / "logs";
    const int64_t maxBytes = 4096;
    strata::logToFile(logs / "strata.log", maxBytes, 2);  // creates the folder
    const std::string filler(100, 'x');
    for (int i = 0; i < 200; ++i) strata::writeLog(strata::LogLevel::Warning, "line " + std::to_string(i) + " " + filler);

    QVERIFY(fs::exists(logs / "strata.log"));
    QVERIFY(fs::exists(logs / "strata.1.log"));
    QVERIFY(fs::exists(logs / "strata.2.log"));
    QVERIFY(!fs::exists(logs / "strata.3.log"));  // only two old files are kept
    for (const char* name : {"strata.log", "strata.1.log", "strata.2.log"})
      QVERIFY2(static_cast<int64_t>(fs::file_size(logs / name)) <= maxBytes, name);
    const std::string latest = readAll(logs / "strata.log");
    QVERIFY(latest.find("line 199 ") != std::string::npos);
    QVERIFY(latest.find("line 0 ") == std::string::npos);
    QVERIFY(latest.find("warning") != std::string::npos);
  }
};

QTEST_APPLESS_MAIN(TestLogging)
#include "test_logging.moc"
