// The bundled tiny model is found next to an installed app (bin/../share/strata/models), and in
// the source tree when the app runs from its build folder.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "shell/model_location.h"

using namespace strata::app;

namespace {

// An install prefix with bin/ and, when `withModel`, share/strata/models/strata-tiny/config.json.
QString makePrefix(const QTemporaryDir& dir, bool withModel) {
  QDir root(dir.path());
  root.mkpath(QStringLiteral("bin"));
  if (withModel) {
    root.mkpath(QStringLiteral("share/strata/models/strata-tiny"));
    QFile config(root.filePath(QStringLiteral("share/strata/models/strata-tiny/config.json")));
    if (!config.open(QIODevice::WriteOnly))
      qFatal("cannot write %s", qPrintable(config.fileName()));
    config.write("{}");
  }
  return root.filePath(QStringLiteral("bin"));
}

}  // namespace

class TestModelLocation : public QObject {
  Q_OBJECT
 private slots:
  void installedAppUsesTheModelBesideIt() {
    QTemporaryDir dir;
    const QString bin = makePrefix(dir, true);
    QCOMPARE(bundledModelFolder(bin),
             QDir(dir.filePath(QStringLiteral("share/strata/models/strata-tiny"))).canonicalPath());
  }

  void buildTreeAppFallsBackToTheSourceModel() {
    QTemporaryDir dir;
    const QString bin = makePrefix(dir, false);
    QCOMPARE(bundledModelFolder(bin), QDir(QStringLiteral(STRATA_TINY_MODEL_DIR)).canonicalPath());
  }

  void folderWithoutConfigIsNotAModel() {
    QTemporaryDir dir;
    const QString bin = makePrefix(dir, false);
    QDir(dir.path()).mkpath(QStringLiteral("share/strata/models/strata-tiny"));
    QCOMPARE(bundledModelFolder(bin), QDir(QStringLiteral(STRATA_TINY_MODEL_DIR)).canonicalPath());
  }
};

QTEST_GUILESS_MAIN(TestModelLocation)
#include "test_model_location.moc"
