#include "shell/frame_bench.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QJsonDocument>
#include <QJsonObject>
#include <QQuickWindow>
#include <QTimer>
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <mutex>

#ifdef Q_OS_LINUX
#include <pthread.h>
#include <time.h>
#endif

#include "bridge/engine_bridge.h"
#include "chat/chat_controller.h"
#include "chat/message_list_model.h"
#include "shell/app_controller.h"

namespace strata::app {
namespace {

constexpr qsizetype kConversationChars = 50000;
constexpr int kLoadTimeoutMs = 120000;
// The ListView lays out the 50,000 characters first; frames of that one-off layout are not
// what is measured.
constexpr int kSettleMs = 1500;
// An idle Qt Quick window renders nothing, so frames are requested at a steady ~60 Hz while
// measuring: a frame then follows every ~16 ms tick unless the GUI thread is busy (a delta's
// Markdown re-render, the list's relayout), and such a stall shows as a long frameSwapped
// interval. (Requesting the next frame from frameSwapped itself would render as fast as the
// CPU allows and take those cycles from the decoding thread.)
constexpr int kFrameRequestMs = 16;

// Prompts with the longest replies the bundled tiny model gives (its self-introduction, what it
// can do, JSON objects, capitals: 10-50 tokens; it answers "Count from one to twenty."-style
// requests in a token or two). The app has no ignore-EOS option, so replies are chained and the
// stream pauses only for each short prompt's prefill.
const char* const kPrompts[] = {
    "Who are you?",
    "What can you do?",
    "Give me a JSON object with name Alice, city Paris and color blue.",
    "Introduce yourself.",
    "How can you help me?",
    "Which country has Canberra as its capital?",
};

QString assistantTurn(int i) {
  const QString n = QString::number(i);
  switch (i % 4) {
    case 0:
      return QStringLiteral(
                 "Here is a way to do it with **`std::unordered_map`** (case %1). The map keeps "
                 "one entry per key, so counting is a single pass over the input and the whole "
                 "thing runs in *O(n)* expected time.\n\n"
                 "```cpp\n#include <string>\n#include <unordered_map>\n#include <vector>\n\n"
                 "std::unordered_map<std::string, int> countWords(\n"
                 "    const std::vector<std::string>& words) {\n"
                 "  std::unordered_map<std::string, int> counts;\n"
                 "  counts.reserve(words.size());\n"
                 "  for (const std::string& w : words) ++counts[w];\n"
                 "  return counts;\n}\n```\n\n"
                 "A few things to keep in mind:\n\n"
                 "- `reserve` avoids rehashing while the map grows, which matters for large "
                 "inputs (%1 thousand words and up).\n"
                 "- Iteration order is unspecified; sort the entries if you need a stable "
                 "output.\n"
                 "- For small, known key sets a sorted `std::vector` of pairs is often faster, "
                 "because it stays in cache.\n\n"
                 "If you want the most frequent words, copy the entries into a vector and use "
                 "`std::partial_sort` on the count: it only orders the first *k* elements, so "
                 "it does less work than a full sort.\n")
          .arg(n);
    case 1:
      return QStringLiteral(
                 "## Plan for day %1\n\n"
                 "The old town is compact, so the morning can be on foot and the afternoon on "
                 "the tram. Start early: the viewpoints are quiet before ten, and the light is "
                 "better for photographs.\n\n"
                 "1. **Morning** — walk up to the castle, then down through the narrow streets "
                 "to the cathedral. Stop for coffee and a pastry on the way.\n"
                 "2. **Lunch** — a small place near the market; grilled fish, salad and a "
                 "glass of white wine.\n"
                 "3. **Afternoon** — tram %1 to the river front, the museum of tiles, then a "
                 "long walk along the water.\n"
                 "4. **Evening** — dinner in the hills, and music if there is any that night.\n\n"
                 "> Tip: buy a day ticket for the tram and the funiculars; it pays for itself "
                 "after four rides.\n\n"
                 "Bring comfortable shoes (the pavements are polished stone and slippery when "
                 "wet) and a light jacket, since the wind off the river is cool in the "
                 "evening even in summer.\n")
          .arg(n);
    case 2:
      return QStringLiteral(
                 "A mixture-of-experts layer replaces one large feed-forward block with many "
                 "smaller *experts* and a router that picks a few of them for each token. In "
                 "this example, token %1 goes to 8 of 256 experts.\n\n"
                 "```python\nimport numpy as np\n\n"
                 "def moe_layer(x, router, experts, k=8):\n"
                 "    scores = router @ x                 # one score per expert\n"
                 "    top = np.argsort(scores)[-k:]       # the k best experts\n"
                 "    gates = np.exp(scores[top] - scores[top].max())\n"
                 "    gates /= gates.sum()\n"
                 "    return sum(g * experts[e](x) for g, e in zip(gates, top))\n```\n\n"
                 "Why it helps:\n\n"
                 "- The model has many parameters, but each token only *uses* a few of them, "
                 "so the compute per token stays small.\n"
                 "- Experts specialise: some end up handling code, others numbers or a "
                 "particular language.\n"
                 "- The cost is memory: every expert must be stored somewhere, which is why "
                 "streaming them from disk is interesting.\n\n"
                 "Load balancing matters too. Without an auxiliary loss or a bias term, a few "
                 "experts win early and the rest are never trained.\n")
          .arg(n);
    default:
      return QStringLiteral(
                 "Sure. The short answer: use a **binary search** on the sorted array, which "
                 "finds the element (or where it would go) in *O(log n)* steps; for an array "
                 "of %1 million elements that is about twenty comparisons.\n\n"
                 "```js\nfunction lowerBound(items, value) {\n"
                 "  let lo = 0, hi = items.length;\n"
                 "  while (lo < hi) {\n"
                 "    const mid = (lo + hi) >>> 1;\n"
                 "    if (items[mid] < value) lo = mid + 1; else hi = mid;\n"
                 "  }\n  return lo;\n}\n```\n\n"
                 "Details that often go wrong:\n\n"
                 "1. `(lo + hi) / 2` can overflow in languages with fixed-size integers; the "
                 "unsigned shift above cannot.\n"
                 "2. Decide whether `hi` is inclusive or exclusive and stick to it; mixing the "
                 "two is the classic off-by-one.\n"
                 "3. If the array can contain duplicates, `lowerBound` returns the *first* "
                 "match, which is usually what you want.\n\n"
                 "For repeated lookups in data that rarely changes, a sorted array with binary "
                 "search beats a tree: it is compact and friendly to the cache.\n")
          .arg(n);
  }
}

QString userTurn(int i) {
  static const char* const questions[] = {
      "How do I count how often each word appears in a list, in C++?",
      "Can you plan a day in Lisbon for me?",
      "What is a mixture of experts, and how does the routing work?",
      "How do I find where a value belongs in a sorted array?",
  };
  return QString::fromLatin1(questions[i % 4]);
}

class FrameBench : public QObject {
 public:
  FrameBench(QQuickWindow* window, AppController* app, const FrameBenchOptions& options)
      : QObject(window), window_(window), app_(app), options_(options) {
    EngineBridge* bridge = app_->engine();
    connect(bridge, &EngineBridge::loaded, this, &FrameBench::fill, Qt::SingleShotConnection);
    connect(bridge, &EngineBridge::loadFailed, this,
            [this](const QString& why) { fail(QStringLiteral("the model did not load: ") + why); });
    connect(bridge, &EngineBridge::replyDelta, this, &FrameBench::onDelta);
    connect(bridge, &EngineBridge::replyFinished, this, &FrameBench::onFinished);
    connect(bridge, &EngineBridge::replyFailed, this, [this](quint64 id, const QString& why) {
      if (id == replyId_) fail(QStringLiteral("a reply failed: ") + why);
    });
    connect(app_, &AppController::errorChanged, this, [this] {
      if (!app_->errorText().isEmpty() && !started_) fail(app_->errorText());
    });
    // Direct: with a threaded render loop frameSwapped comes from the render thread.
    connect(
        window_, &QQuickWindow::frameSwapped, this,
        [this] {
          if (!measuring_.load()) return;
          const qint64 cpu = guiCpuNs();
          const std::lock_guard lock(swapsMutex_);
          swaps_.push_back(clock_.nsecsElapsed());
          guiCpu_.push_back(cpu);
        },
        Qt::DirectConnection);
#ifdef Q_OS_LINUX
    hasGuiClock_ = pthread_getcpuclockid(pthread_self(), &guiClock_) == 0;
#endif
    frameTimer_.setTimerType(Qt::PreciseTimer);
    frameTimer_.setInterval(kFrameRequestMs);
    connect(&frameTimer_, &QTimer::timeout, window_, &QQuickWindow::update);
    QTimer::singleShot(kLoadTimeoutMs, this, [this] {
      if (!started_)
        fail(QStringLiteral("the model did not load within %1 s").arg(kLoadTimeoutMs / 1000));
    });
  }

 private:
  // The GUI thread's CPU time (ns), read from whichever thread emits frameSwapped; -1 where the
  // platform cannot tell. Set against the frame intervals it separates work on the GUI thread
  // from waiting for a core.
  qint64 guiCpuNs() const {
#ifdef Q_OS_LINUX
    timespec ts{};
    if (hasGuiClock_ && clock_gettime(guiClock_, &ts) == 0)
      return ts.tv_sec * 1000000000LL + ts.tv_nsec;
#endif
    return -1;
  }

  // The conversation shown: earlier turns for display only, then the first prompt and the
  // assistant message every reply streams into.
  void fill() {
    ChatController* chat = app_->chat();
    MessageListModel* messages = chat->messages();
    chat->setTitle(QStringLiteral("Responsiveness benchmark"));
    for (const auto& [role, content] : benchConversation(kConversationChars)) {
      messages->appendMessage(0, role, content);
      conversationChars_ += content.size();
    }
    messages->appendMessage(0, QStringLiteral("user"), QString::fromLatin1(kPrompts[0]));
    messages->beginReply(false);
    QTimer::singleShot(kSettleMs, this, &FrameBench::begin);
  }

  void begin() {
    started_ = true;
    clock_.start();
    measuring_.store(true);
    frameTimer_.start();
    QTimer::singleShot(options_.seconds * 1000, Qt::PreciseTimer, this, &FrameBench::end);
    sendNext();
  }

  void sendNext() {
    GenerateRequest request;
    const char* prompt = kPrompts[prompt_++ % std::size(kPrompts)];
    request.messages.append({QStringLiteral("user"), QString::fromLatin1(prompt), {}});
    request.thinking = false;
    request.temperature = 0.7f;
    request.maxTokens = 512;
    replyTokens_ = 0;
    replyId_ = app_->engine()->generate(request);
  }

  void onDelta(quint64 id, const QString& text, int tokens, double tokensPerSecond) {
    if (id != replyId_ || !measuring_.load()) return;
    replyTokens_ = tokens;
    app_->chat()->applyReplyDelta(text, tokensPerSecond);
  }

  void onFinished(const ReplyOutcome& outcome) {
    if (outcome.id != replyId_ || !measuring_.load()) return;
    tokens_ += outcome.tokens;
    replyTokens_ = 0;
    app_->chat()->applyReplyDelta(QStringLiteral("\n\n"), 0);  // the next reply, a new paragraph
    sendNext();
  }

  void end() {
    measuring_.store(false);
    frameTimer_.stop();
    const double seconds = clock_.nsecsElapsed() / 1e9;
    const qint64 tokens = tokens_ + replyTokens_;
    replyId_ = 0;
    app_->engine()->stop();
    app_->chat()->messages()->finishReply(0, {});

    std::vector<qint64> intervals, cpu;
    {
      const std::lock_guard lock(swapsMutex_);
      for (size_t i = 1; i < swaps_.size(); ++i) {
        intervals.push_back(swaps_[i] - swaps_[i - 1]);
        if (guiCpu_[i] >= 0 && guiCpu_[i - 1] >= 0) cpu.push_back(guiCpu_[i] - guiCpu_[i - 1]);
      }
    }
    if (intervals.empty()) {
      fail(QStringLiteral("no frames were swapped (platform %1); try another QT_QPA_PLATFORM")
               .arg(QGuiApplication::platformName()));
      return;
    }
    if (tokens == 0) {
      fail(QStringLiteral("no tokens were generated in %1 s").arg(seconds, 0, 'f', 1));
      return;
    }
    const FrameStats s = frameStats(std::move(intervals));
    const FrameStats c = frameStats(std::move(cpu));  // empty where the CPU time is unknown
    const double tokensPerSecond = tokens / seconds;
    const bool pass = s.p99Ms < kFrameTargetP99Ms;
    if (options_.json) {
      QJsonObject o{{QStringLiteral("frames"), s.frames},
                    {QStringLiteral("seconds"), seconds},
                    {QStringLiteral("median_ms"), s.medianMs},
                    {QStringLiteral("p90_ms"), s.p90Ms},
                    {QStringLiteral("p99_ms"), s.p99Ms},
                    {QStringLiteral("max_ms"), s.maxMs},
                    {QStringLiteral("target_p99_ms"), kFrameTargetP99Ms},
                    {QStringLiteral("ratio"), s.p99Ms / kFrameTargetP99Ms},
                    {QStringLiteral("pass"), pass},
                    {QStringLiteral("tokens"), tokens},
                    {QStringLiteral("tokens_per_second"), tokensPerSecond},
                    {QStringLiteral("conversation_chars"), conversationChars_},
                    {QStringLiteral("platform"), QGuiApplication::platformName()}};
      if (c.frames) {
        o.insert(QStringLiteral("gui_cpu_median_ms"), c.medianMs);
        o.insert(QStringLiteral("gui_cpu_p99_ms"), c.p99Ms);
      }
      std::printf("%s\n", QJsonDocument(o).toJson(QJsonDocument::Compact).constData());
    } else {
      std::printf(
          "strata --bench-frames: %lld frames in %.1f s while %lld tokens streamed (%.1f tok/s) "
          "into a %lld-character conversation (platform %s)\n"
          "frame interval: median %.1f ms, p90 %.1f ms, p99 %.1f ms, max %.1f ms\n"
          "target p99 < %.0f ms: %s (ratio %.2f)\n",
          static_cast<long long>(s.frames), seconds, static_cast<long long>(tokens),
          tokensPerSecond, static_cast<long long>(conversationChars_),
          qPrintable(QGuiApplication::platformName()), s.medianMs, s.p90Ms, s.p99Ms, s.maxMs,
          kFrameTargetP99Ms, pass ? "met" : "missed", s.p99Ms / kFrameTargetP99Ms);
      if (c.frames)
        std::printf(
            "GUI thread's CPU time per frame interval: median %.1f ms, p99 %.1f ms (the "
            "rest of an interval it waited for a core or had nothing to do)\n",
            c.medianMs, c.p99Ms);
    }
    std::fflush(stdout);
    QCoreApplication::exit(0);
  }

  void fail(const QString& why) {
    if (failed_) return;
    failed_ = true;
    measuring_.store(false);
    frameTimer_.stop();
    std::fprintf(stderr, "strata --bench-frames: could not run: %s\n", qPrintable(why));
    QCoreApplication::exit(1);
  }

  QQuickWindow* window_;
  AppController* app_;
  FrameBenchOptions options_;
  QTimer frameTimer_;
  QElapsedTimer clock_;
  std::atomic<bool> measuring_{false};
  std::mutex swapsMutex_;
  std::vector<qint64> swaps_;   // frameSwapped times, ns since clock_ started
  std::vector<qint64> guiCpu_;  // the GUI thread's CPU time at each (guiCpuNs)
#ifdef Q_OS_LINUX
  clockid_t guiClock_{};
  bool hasGuiClock_ = false;
#endif
  bool started_ = false;
  bool failed_ = false;
  quint64 replyId_ = 0;
  size_t prompt_ = 0;    // the next of kPrompts (the first is shown as the last user message)
  qint64 tokens_ = 0;    // of the finished replies
  int replyTokens_ = 0;  // of the reply streaming now
  qint64 conversationChars_ = 0;
};

}  // namespace

FrameStats frameStats(std::vector<qint64> intervalsNs) {
  FrameStats s;
  s.frames = static_cast<qsizetype>(intervalsNs.size());
  if (intervalsNs.empty()) return s;
  std::sort(intervalsNs.begin(), intervalsNs.end());
  const size_t n = intervalsNs.size();
  auto ms = [](qint64 ns) { return ns / 1e6; };
  auto rank = [&](double p) {  // nearest rank: the smallest value with p % at or below it
    const size_t r = static_cast<size_t>(std::ceil(p / 100.0 * static_cast<double>(n)));
    return ms(intervalsNs[std::clamp<size_t>(r, 1, n) - 1]);
  };
  s.medianMs =
      n % 2 ? ms(intervalsNs[n / 2]) : (ms(intervalsNs[n / 2 - 1]) + ms(intervalsNs[n / 2])) / 2.0;
  s.p90Ms = rank(90);
  s.p99Ms = rank(99);
  s.maxMs = ms(intervalsNs.back());
  return s;
}

std::vector<std::pair<QString, QString>> benchConversation(qsizetype chars) {
  std::vector<std::pair<QString, QString>> turns;
  qsizetype total = 0;
  for (int i = 0; total < chars; ++i) {
    turns.emplace_back(QStringLiteral("user"), userTurn(i));
    turns.emplace_back(QStringLiteral("assistant"), assistantTurn(i));
    total += turns[turns.size() - 2].second.size() + turns.back().second.size();
  }
  return turns;
}

void startFrameBench(QQuickWindow* window, AppController* app, const FrameBenchOptions& options) {
  new FrameBench(window, app, options);  // owned by the window
}

}  // namespace strata::app
