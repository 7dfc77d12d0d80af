#include "shell/app_controller.h"

#include <QDir>
#include <QFileInfo>
#include <QLocale>
#include <QTimer>

#include "bridge/engine_bridge.h"
#include "chat/chat_controller.h"
#include "chat/conversation_transfer.h"
#include "heatmap/routing_monitor.h"
#include "heatmap/tier_monitor.h"
#include "prefill/prefill_monitor.h"
#include "settings/app_settings.h"
#include "settings/color_scheme.h"
#include "settings/memory_plan_preview.h"
#include "shell/demo_content.h"
#include "speculation/speculation_monitor.h"
#include "store/conversation_list_model.h"
#include "store/conversation_store.h"

namespace strata::app {

AppController::AppController(AppOptions options, QObject* parent)
    : QObject(parent), options_(std::move(options)) {
  auto qsettings = options_.settingsFile.isEmpty()
                       ? std::make_unique<QSettings>()
                       : std::make_unique<QSettings>(options_.settingsFile, QSettings::IniFormat);
  settings_ = new AppSettings(std::move(qsettings), options_.defaultModelFolder, this);
  bridge_ = new EngineBridge(this);
  plan_ = new MemoryPlanPreview(this);
  planTimer_ = new QTimer(this);
  planTimer_->setSingleShot(true);
  planTimer_->setInterval(150);
  connect(planTimer_, &QTimer::timeout, this, [this] { plan_->refresh(requestFromSettings()); });
  connect(settings_, &AppSettings::changed, planTimer_, qOverload<>(&QTimer::start));
  if (!options_.demo) planTimer_->start();
  monitor_ = new TierMonitor(this);
  routing_ = new RoutingMonitor(this);
  speculation_ = new SpeculationMonitor(this);
  prefill_ = new PrefillMonitor(this);
  colorScheme_ = new ColorScheme(settings_, this);
  bridge_->setSpeculation(settings_->speculation());  // before any model is opened

  store_ = std::make_unique<ConversationStore>(
      QDir(options_.dataDir).filePath(QStringLiteral("conversations.sqlite")),
      QDir(options_.dataDir).filePath(QStringLiteral("kv")));
  QString storeError;
  const bool stored = !options_.demo && store_->open(&storeError);
  chat_ = new ChatController(bridge_, store_.get(), settings_, monitor_, this);
  transfer_ = new ConversationTransfer(store_.get(), this);
  if (!options_.demo && !stored)
    showError(tr("Conversations will not be saved: %1").arg(storeError));

  connect(chat_, &ChatController::error, this, &AppController::showError);
  connect(transfer_, &ConversationTransfer::error, this, &AppController::showError);
  connect(transfer_, &ConversationTransfer::imported, this, [this](qint64 id) {
    chat_->conversations()->reload();
    chat_->openConversation(id);
    chat_->setNotice(tr("Imported \u201c%1\u201d").arg(chat_->title()));
  });
  connect(transfer_, &ConversationTransfer::exported, this,
          [this](const QString& file) { chat_->setNotice(tr("Exported to %1").arg(file)); });
  connect(bridge_, &EngineBridge::warning, this, &AppController::showError);
  connect(bridge_, &EngineBridge::loadFailed, this, [this](const QString& message) {
    showError(tr("Could not open the model: %1").arg(message));
  });
  connect(bridge_, &EngineBridge::stateChanged, this, &AppController::modelStatusChanged);
  connect(bridge_, &EngineBridge::stateChanged, this, &AppController::reloadNeededChanged);
  connect(bridge_, &EngineBridge::tierData, monitor_, &TierMonitor::update);
  connect(bridge_, &EngineBridge::routingData, routing_, &RoutingMonitor::update);
  connect(bridge_, &EngineBridge::speculationData, speculation_, &SpeculationMonitor::update);
  connect(bridge_, &EngineBridge::replyFinished, speculation_, &SpeculationMonitor::setLastReply);
  connect(bridge_, &EngineBridge::replyStarted, prefill_, &PrefillMonitor::start);
  connect(bridge_, &EngineBridge::prefillProgress, prefill_, &PrefillMonitor::update);
  connect(bridge_, &EngineBridge::replyFinished, prefill_, &PrefillMonitor::finish);
  connect(bridge_, &EngineBridge::replyFailed, prefill_, &PrefillMonitor::fail);
  connect(settings_, &AppSettings::changed, this, &AppController::reloadNeededChanged);
  connect(settings_, &AppSettings::threadsChanged, bridge_, &EngineBridge::setThreads);
  connect(settings_, &AppSettings::speculationChanged, bridge_, &EngineBridge::setSpeculation);
  connect(settings_, &AppSettings::tierTuningChanged, this,
          [this] { bridge_->setTiers(settings_->tierChoice()); });
  connect(settings_, &AppSettings::serverSettingsChanged, this,
          &AppController::applyServerSettings);
  // Before loadModel(): the worker keeps the request and starts the server once a model loads.
  if (settings_->serverEnabled()) applyServerSettings();

  if (options_.demo) fillDemo(*chat_, *monitor_, *routing_, *speculation_, *prefill_);
}

AppController::~AppController() {
  // The chat, the transfer and the bridge go first: the bridge stops the worker thread, nothing
  // then refers to the store.
  delete chat_;
  delete transfer_;
  delete bridge_;
}

LoadRequest AppController::requestFromSettings() const {
  LoadRequest r;
  r.modelDir = settings_->modelFolder();
  r.threads = settings_->threads();
  r.memoryBudgetBytes = static_cast<qint64>(settings_->memoryBudgetGb() * 1024.0 * 1024.0 * 1024.0);
  r.kvPrecision = settings_->kvPrecision();
  r.dataDir = options_.dataDir;
  r.io = settings_->ioMode();
  r.kernelPath = settings_->kernelPath();
  r.tiers = settings_->tierChoice();
  // The API server's slots decode next to the chat: each needs its KV cache in the plan.
  r.sessions = 1 + (settings_->serverEnabled() ? settings_->serverSlots() : 0);
  return r;
}

void AppController::loadModel() {
  if (options_.demo) return;
  loaded_ = requestFromSettings();
  if (loaded_.modelDir.isEmpty()) {
    showError(
        tr("No model folder is set, and the bundled tiny model was not found. Choose a model in "
           "Settings."));
    return;
  }
  bridge_->load(loaded_);
  // The worker's session is gone with the old model; the open chat resumes on the new one.
  chat_->setNotice({});
  bridge_->openConversation(chat_->conversationId() ? store_->kvFile(chat_->conversationId())
                                                    : QString());
  emit reloadNeededChanged();
}

void AppController::applyServerSettings() {
  if (options_.demo) return;  // the demo serves nothing
  if (settings_->serverEnabled())
    bridge_->startServer(settings_->server());
  else
    bridge_->stopServer();
}

bool AppController::reloadNeeded() const {
  if (options_.demo || bridge_->state() == EngineBridge::State::Empty) return false;
  const LoadRequest now = requestFromSettings();
  return now.modelDir != loaded_.modelDir || now.memoryBudgetBytes != loaded_.memoryBudgetBytes ||
         now.kvPrecision != loaded_.kvPrecision || now.io != loaded_.io ||
         now.kernelPath != loaded_.kernelPath ||
         // Without a budget nothing is planned per session.
         (now.sessions != loaded_.sessions && now.memoryBudgetBytes > 0);
}

QString AppController::modelStatus() const {
  if (options_.demo) return tr("strata-tiny · demo");
  const ModelSummary& s = bridge_->summary();
  switch (bridge_->state()) {
    case EngineBridge::State::Empty:
      return tr("No model");
    case EngineBridge::State::Loading:
      return tr("Loading %1…").arg(QFileInfo(loaded_.modelDir).fileName());
    case EngineBridge::State::Failed:
      return tr("No model loaded");
    case EngineBridge::State::Ready:
      return tr("%1 · %2 layers · %3 resident")
          .arg(s.name)
          .arg(s.layers)
          .arg(QLocale().formattedDataSize(s.residentBytes));
  }
  return {};
}

QString AppController::version() const { return QStringLiteral(STRATA_VERSION); }

void AppController::showError(const QString& message) {
  error_ = message;
  emit errorChanged();
}

void AppController::dismissError() {
  if (error_.isEmpty()) return;
  error_.clear();
  emit errorChanged();
}

}  // namespace strata::app
