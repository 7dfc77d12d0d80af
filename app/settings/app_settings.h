#pragma once
// The user's settings, persisted with QSettings as they change. Threads and sampling apply to
// the next reply, speculative decoding and the API server at once (speculationChanged,
// serverSettingsChanged); the model folder, memory budget and KV precision need the model
// reloaded (AppController::reloadNeeded says when). The theme applies at once; the window's
// place is read at start and written on quit (WindowMemory).
#include <QtQml/qqmlregistration.h>

#include <QObject>
#include <QRect>
#include <QSettings>
#include <memory>

#include "bridge/bridge_types.h"

namespace strata::app {

class AppSettings : public QObject {
  Q_OBJECT
  QML_ELEMENT
  QML_UNCREATABLE("owned by the app")
  Q_PROPERTY(QString modelFolder READ modelFolder WRITE setModelFolder NOTIFY changed)
  Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY changed)
  Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY changed)
  Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY changed)
  Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY changed)
  Q_PROPERTY(int maxTokens READ maxTokens WRITE setMaxTokens NOTIFY changed)
  Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY changed)
  Q_PROPERTY(bool thinking READ thinking WRITE setThinking NOTIFY changed)
  Q_PROPERTY(double memoryBudgetGb READ memoryBudgetGb WRITE setMemoryBudgetGb NOTIFY changed)
  Q_PROPERTY(QString kvPrecision READ kvPrecision WRITE setKvPrecision NOTIFY changed)
  // Expert streaming (a converted model under a memory budget): how experts are read, the
  // share of expert memory pinned (live), prefetching (live), and the kernels for int weights.
  Q_PROPERTY(QString ioMode READ ioMode WRITE setIoMode NOTIFY changed)
  Q_PROPERTY(int pinnedPercent READ pinnedPercent WRITE setPinnedPercent NOTIFY changed)
  Q_PROPERTY(bool prefetch READ prefetch WRITE setPrefetch NOTIFY changed)
  Q_PROPERTY(QString kernelPath READ kernelPath WRITE setKernelPath NOTIFY changed)
  // "auto" (every drafter self-tuning) or "off".
  Q_PROPERTY(QString speculationMode READ speculationMode WRITE setSpeculationMode NOTIFY changed)
  Q_PROPERTY(int mtpDepth READ mtpDepth WRITE setMtpDepth NOTIFY changed)
  // The OpenAI-compatible server on 127.0.0.1 (loopback only: no other host is offered).
  Q_PROPERTY(bool serverEnabled READ serverEnabled WRITE setServerEnabled NOTIFY changed)
  Q_PROPERTY(int serverPort READ serverPort WRITE setServerPort NOTIFY changed)
  Q_PROPERTY(QString serverApiKey READ serverApiKey WRITE setServerApiKey NOTIFY changed)
  Q_PROPERTY(int serverSlots READ serverSlots WRITE setServerSlots NOTIFY changed)
  // "system" (follow the desktop), "light" or "dark".
  Q_PROPERTY(QString theme READ theme WRITE setTheme NOTIFY themeChanged)

 public:
  // `defaultModelFolder`: what a first run opens (the bundled tiny model).
  AppSettings(std::unique_ptr<QSettings> store, QString defaultModelFolder,
              QObject* parent = nullptr);

  QString modelFolder() const;
  int threads() const;
  double temperature() const;
  double topP() const;
  int topK() const;
  int maxTokens() const;
  QString systemPrompt() const;
  bool thinking() const;
  double memoryBudgetGb() const;
  QString kvPrecision() const;
  QString ioMode() const;      // "direct" (default), "buffered" or "uring"
  int pinnedPercent() const;   // 0..90, default 25
  bool prefetch() const;
  QString kernelPath() const;  // "auto" (integer kernels, default) or "dequantize" (exact)
  TierChoice tierChoice() const;
  QString speculationMode() const;
  int mtpDepth() const;
  SpeculationChoice speculation() const;
  bool serverEnabled() const;
  int serverPort() const;
  QString serverApiKey() const;
  int serverSlots() const;
  ServerRequest server() const;  // what the bridge starts while serverEnabled
  QString theme() const;
  // The main window's last normal (not maximized) geometry; invalid until one was saved.
  QRect windowGeometry() const;
  bool windowMaximized() const;

  void setModelFolder(const QString& v);
  void setThreads(int v);
  void setTemperature(double v);
  void setTopP(double v);
  void setTopK(int v);
  void setMaxTokens(int v);
  void setSystemPrompt(const QString& v);
  void setThinking(bool v);
  void setMemoryBudgetGb(double v);
  void setKvPrecision(const QString& v);
  void setIoMode(const QString& v);      // other values are ignored
  void setPinnedPercent(int v);          // clamped to 0..90
  void setPrefetch(bool v);
  void setKernelPath(const QString& v);  // other values are ignored
  void setSpeculationMode(const QString& v);  // anything but "auto" or "off" is ignored
  void setMtpDepth(int v);                    // clamped to 1..8
  void setServerEnabled(bool v);
  void setServerPort(int v);  // clamped to 1..65535
  void setServerApiKey(const QString& v);
  void setServerSlots(int v);       // clamped to 1..16
  void setTheme(const QString& v);  // anything but "system", "light" or "dark" is ignored
  void setWindowGeometry(const QRect& v);
  void setWindowMaximized(bool v);

 signals:
  void changed();
  void threadsChanged(int threads);
  void speculationChanged(const strata::app::SpeculationChoice& choice);
  void tierTuningChanged();  // pinnedPercent or prefetch: applied to a loaded model live
  void serverSettingsChanged();  // any of the four server settings
  void themeChanged();

 private:
  QVariant get(const char* key, const QVariant& fallback) const;
  bool put(const char* key, const QVariant& value);  // true if it changed

  std::unique_ptr<QSettings> store_;
  QString defaultModelFolder_;
};

}  // namespace strata::app
