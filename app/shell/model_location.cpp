#include "shell/model_location.h"

#include <QDir>
#include <QFileInfo>

namespace strata::app {

QString bundledModelFolder(const QString& appDir) {
  const QStringList candidates = {
      QDir(appDir).filePath(QStringLiteral("../share/strata/models/strata-tiny")),
      QStringLiteral(STRATA_SOURCE_MODEL_DIR),
  };
  for (const QString& dir : candidates)
    if (QFileInfo::exists(QDir(dir).filePath(QStringLiteral("config.json"))))
      return QDir(dir).canonicalPath();
  return {};
}

}  // namespace strata::app
