#pragma once
// Runs an action that must throw strata::Error whose message names every part given.
#include <QString>
#include <QStringList>

#include "strata/error.h"

// Empty when the action threw strata::Error naming every part; otherwise what went wrong.
template <typename F>
QString errorOf(F action, const QStringList& parts) {
  try {
    action();
  } catch (const strata::Error& e) {
    const QString message = QString::fromUtf8(e.what());
    for (const QString& part : parts)
      if (!message.contains(part)) return QString("message \"%1\" lacks \"%2\"").arg(message, part);
    return {};
  }
  return "no error was thrown";
}
