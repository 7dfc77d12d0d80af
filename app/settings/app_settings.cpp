#include "settings/app_settings.h"

#include <algorithm>

namespace strata::app {

AppSettings::AppSettings(std::unique_ptr<QSettings> store, QString defaultModelFolder,
                         QObject* parent)
    : QObject(parent),
      store_(std::move(store)),
      defaultModelFolder_(std::move(defaultModelFolder)) {}

QVariant AppSettings::get(const char* key, const QVariant& fallback) const {
  return store_->value(QLatin1String(key), fallback);
}

bool AppSettings::put(const char* key, const QVariant& value) {
  if (store_->value(QLatin1String(key)) == value) return false;
  store_->setValue(QLatin1String(key), value);
  emit changed();
  return true;
}

QString AppSettings::modelFolder() const {
  const QString folder = get("model/folder", QString()).toString();
  return folder.isEmpty() ? defaultModelFolder_ : folder;
}
int AppSettings::threads() const { return get("engine/threads", 0).toInt(); }
double AppSettings::temperature() const { return get("sampling/temperature", 0.7).toDouble(); }
double AppSettings::topP() const { return get("sampling/topP", 0.95).toDouble(); }
int AppSettings::topK() const { return get("sampling/topK", 0).toInt(); }
int AppSettings::maxTokens() const { return get("sampling/maxTokens", 512).toInt(); }
QString AppSettings::systemPrompt() const { return get("chat/systemPrompt", QString()).toString(); }
bool AppSettings::thinking() const { return get("chat/thinking", true).toBool(); }
double AppSettings::memoryBudgetGb() const { return get("engine/memoryBudgetGb", 0.0).toDouble(); }
// bf16 by default: half the KV memory of f32 (the cache holds 16-bit rows), and the bundled
// model's held-out accuracy is the same in every task (README).
QString AppSettings::kvPrecision() const {
  return get("engine/kvPrecision", QStringLiteral("bf16")).toString();
}
QString AppSettings::ioMode() const {
  const QString mode = get("engine/io", QStringLiteral("direct")).toString();
  return mode == QLatin1String("buffered") || mode == QLatin1String("uring") ? mode
                                                                           : QStringLiteral("direct");
}
int AppSettings::pinnedPercent() const {
  return std::clamp(get("engine/pinnedPercent", 25).toInt(), 0, 90);
}
bool AppSettings::prefetch() const { return get("engine/prefetch", true).toBool(); }
QString AppSettings::kernelPath() const {
  const QString path = get("engine/kernelPath", QStringLiteral("auto")).toString();
  return path == QLatin1String("dequantize") ? path : QStringLiteral("auto");
}
TierChoice AppSettings::tierChoice() const { return {pinnedPercent(), prefetch()}; }
QString AppSettings::speculationMode() const {
  const QString mode = get("speculation/mode", QStringLiteral("auto")).toString();
  return mode == QLatin1String("off") ? mode : QStringLiteral("auto");
}
int AppSettings::mtpDepth() const {
  return std::clamp(get("speculation/mtpDepth", 3).toInt(), 1, 8);
}
SpeculationChoice AppSettings::speculation() const {
  return {speculationMode() == QLatin1String("auto"), mtpDepth()};
}
bool AppSettings::serverEnabled() const { return get("server/enabled", false).toBool(); }
int AppSettings::serverPort() const {
  return std::clamp(get("server/port", 8080).toInt(), 1, 65535);
}
QString AppSettings::serverApiKey() const { return get("server/apiKey", QString()).toString(); }
int AppSettings::serverSlots() const { return std::clamp(get("server/slots", 2).toInt(), 1, 16); }
QString AppSettings::theme() const {
  const QString theme = get("appearance/theme", QStringLiteral("system")).toString();
  return theme == QLatin1String("light") || theme == QLatin1String("dark")
             ? theme
             : QStringLiteral("system");
}
QRect AppSettings::windowGeometry() const { return get("window/geometry", QRect()).toRect(); }
bool AppSettings::windowMaximized() const { return get("window/maximized", false).toBool(); }
ServerRequest AppSettings::server() const {
  ServerRequest r;
  r.port = serverPort();
  r.apiKey = serverApiKey();
  r.slotCount = serverSlots();
  return r;  // r.host stays 127.0.0.1
}

void AppSettings::setModelFolder(const QString& v) { put("model/folder", v); }
void AppSettings::setThreads(int v) {
  if (put("engine/threads", std::max(0, v))) emit threadsChanged(threads());
}
void AppSettings::setTemperature(double v) { put("sampling/temperature", std::clamp(v, 0.0, 2.0)); }
void AppSettings::setTopP(double v) { put("sampling/topP", std::clamp(v, 0.01, 1.0)); }
void AppSettings::setTopK(int v) { put("sampling/topK", std::max(0, v)); }
void AppSettings::setMaxTokens(int v) { put("sampling/maxTokens", std::clamp(v, 1, 32768)); }
void AppSettings::setSystemPrompt(const QString& v) { put("chat/systemPrompt", v); }
void AppSettings::setThinking(bool v) { put("chat/thinking", v); }
void AppSettings::setMemoryBudgetGb(double v) { put("engine/memoryBudgetGb", std::max(0.0, v)); }
void AppSettings::setKvPrecision(const QString& v) {
  if (v == QLatin1String("f32") || v == QLatin1String("bf16") || v == QLatin1String("f16"))
    put("engine/kvPrecision", v);
}

void AppSettings::setIoMode(const QString& v) {
  if (v == QLatin1String("direct") || v == QLatin1String("buffered") || v == QLatin1String("uring"))
    put("engine/io", v);
}
void AppSettings::setPinnedPercent(int v) {
  if (put("engine/pinnedPercent", std::clamp(v, 0, 90))) emit tierTuningChanged();
}
void AppSettings::setPrefetch(bool v) {
  if (put("engine/prefetch", v)) emit tierTuningChanged();
}
void AppSettings::setKernelPath(const QString& v) {
  if (v == QLatin1String("auto") || v == QLatin1String("dequantize")) put("engine/kernelPath", v);
}

void AppSettings::setSpeculationMode(const QString& v) {
  if (v != QLatin1String("auto") && v != QLatin1String("off")) return;
  if (put("speculation/mode", v)) emit speculationChanged(speculation());
}
void AppSettings::setMtpDepth(int v) {
  if (put("speculation/mtpDepth", std::clamp(v, 1, 8))) emit speculationChanged(speculation());
}

void AppSettings::setServerEnabled(bool v) {
  if (put("server/enabled", v)) emit serverSettingsChanged();
}
void AppSettings::setServerPort(int v) {
  if (put("server/port", std::clamp(v, 1, 65535))) emit serverSettingsChanged();
}
void AppSettings::setServerApiKey(const QString& v) {
  if (put("server/apiKey", v)) emit serverSettingsChanged();
}
void AppSettings::setServerSlots(int v) {
  if (put("server/slots", std::clamp(v, 1, 16))) emit serverSettingsChanged();
}

void AppSettings::setTheme(const QString& v) {
  if (v != QLatin1String("system") && v != QLatin1String("light") && v != QLatin1String("dark"))
    return;
  if (put("appearance/theme", v)) emit themeChanged();
}
void AppSettings::setWindowGeometry(const QRect& v) { put("window/geometry", v); }
void AppSettings::setWindowMaximized(bool v) { put("window/maximized", v); }

}  // namespace strata::app
