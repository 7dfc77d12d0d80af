#pragma once
// The app's root object, handed to Main.qml as its `app` property: owns the settings, the
// conversation store, the engine bridge, the chat controller, conversation export/import, the
// tier, speculation and prefill monitors and the colour scheme, loads the model, and holds the
// one dismissable error message the window shows.
#include <QtQml/qqmlregistration.h>

#include <QObject>
class QTimer;
#include <memory>

#include "bridge/bridge_types.h"

namespace strata::app {

class AppSettings;
class ChatController;
class ColorScheme;
class ConversationStore;
class ConversationTransfer;
class EngineBridge;
class MemoryPlanPreview;
class PrefillMonitor;
class RoutingMonitor;
class SpeculationMonitor;
class TierMonitor;

struct AppOptions {
  QString dataDir;             // conversations.sqlite, kv/, usage history
  QString settingsFile;        // empty: the platform's QSettings location
  QString defaultModelFolder;  // what a first run opens
  bool demo = false;           // sample content, no model loaded, nothing stored
};

class AppController : public QObject {
  Q_OBJECT
  Q_MOC_INCLUDE("bridge/engine_bridge.h")
  Q_MOC_INCLUDE("chat/chat_controller.h")
  Q_MOC_INCLUDE("chat/conversation_transfer.h")
  Q_MOC_INCLUDE("heatmap/routing_monitor.h")
  Q_MOC_INCLUDE("heatmap/tier_monitor.h")
  Q_MOC_INCLUDE("prefill/prefill_monitor.h")
  Q_MOC_INCLUDE("settings/app_settings.h")
  Q_MOC_INCLUDE("settings/memory_plan_preview.h")
  Q_MOC_INCLUDE("settings/color_scheme.h")
  Q_MOC_INCLUDE("speculation/speculation_monitor.h")
  QML_ELEMENT
  QML_UNCREATABLE("made by main()")
  Q_PROPERTY(strata::app::AppSettings* settings READ settings CONSTANT)
  // The memory plan of the settings as they stand (what a reload would allocate).
  Q_PROPERTY(strata::app::MemoryPlanPreview* plan READ plan CONSTANT)
  Q_PROPERTY(strata::app::EngineBridge* engine READ engine CONSTANT)
  Q_PROPERTY(strata::app::ChatController* chat READ chat CONSTANT)
  Q_PROPERTY(strata::app::ConversationTransfer* transfer READ transfer CONSTANT)
  Q_PROPERTY(strata::app::TierMonitor* monitor READ monitor CONSTANT)
  Q_PROPERTY(strata::app::RoutingMonitor* routing READ routing CONSTANT)
  Q_PROPERTY(strata::app::SpeculationMonitor* speculation READ speculation CONSTANT)
  Q_PROPERTY(strata::app::PrefillMonitor* prefill READ prefill CONSTANT)
  Q_PROPERTY(strata::app::ColorScheme* colorScheme READ colorScheme CONSTANT)
  Q_PROPERTY(QString errorText READ errorText NOTIFY errorChanged)
  Q_PROPERTY(bool reloadNeeded READ reloadNeeded NOTIFY reloadNeededChanged)
  Q_PROPERTY(QString modelStatus READ modelStatus NOTIFY modelStatusChanged)
  Q_PROPERTY(QString version READ version CONSTANT)
  Q_PROPERTY(bool demo READ demo CONSTANT)

 public:
  explicit AppController(AppOptions options, QObject* parent = nullptr);
  ~AppController() override;

  AppSettings* settings() const { return settings_; }
  MemoryPlanPreview* plan() const { return plan_; }
  EngineBridge* engine() const { return bridge_; }
  ChatController* chat() const { return chat_; }
  ConversationTransfer* transfer() const { return transfer_; }
  TierMonitor* monitor() const { return monitor_; }
  RoutingMonitor* routing() const { return routing_; }
  SpeculationMonitor* speculation() const { return speculation_; }
  PrefillMonitor* prefill() const { return prefill_; }
  ColorScheme* colorScheme() const { return colorScheme_; }
  QString errorText() const { return error_; }
  bool reloadNeeded() const;
  QString modelStatus() const;
  QString version() const;
  bool demo() const { return options_.demo; }

  // Opens the model the settings name (on the worker thread; the bridge reports the outcome).
  Q_INVOKABLE void loadModel();
  Q_INVOKABLE void dismissError();
  void showError(const QString& message);

 signals:
  void errorChanged();
  void reloadNeededChanged();
  void modelStatusChanged();

 private:
  LoadRequest requestFromSettings() const;
  void applyServerSettings();  // starts, restarts or stops the API server as the settings say

  AppOptions options_;
  AppSettings* settings_;
  MemoryPlanPreview* plan_;
  QTimer* planTimer_;  // settings changes come in bursts (a slider): plan once after them
  std::unique_ptr<ConversationStore> store_;
  EngineBridge* bridge_;
  TierMonitor* monitor_;
  RoutingMonitor* routing_;
  SpeculationMonitor* speculation_;
  PrefillMonitor* prefill_;
  ColorScheme* colorScheme_;
  ChatController* chat_;
  ConversationTransfer* transfer_;
  LoadRequest loaded_;  // what the current model was opened with
  QString error_;
};

}  // namespace strata::app
