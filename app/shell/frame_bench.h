#pragma once
// `strata --bench-frames`: the responsiveness benchmark. Once the model is loaded it fills the
// open conversation with about 50,000 characters of Markdown (display only: the model is not
// sent it), then streams replies at full speed through the real path (EngineBridge's worker,
// coalesced deltas, ChatController::applyReplyDelta) into the conversation's last assistant
// message, chaining short prompts until the time is up, and records the intervals between the
// window's frameSwapped signals, and (Linux) the GUI thread's CPU time in each, which tells its
// own work from waiting for a core. Prints a summary (or one JSON object) and quits: exit code 0
// whether or not the target is met, 1 if the benchmark could not run (the reason on stderr).
#include <QString>
#include <QtGlobal>
#include <vector>

class QQuickWindow;

namespace strata::app {

class AppController;

struct FrameBenchOptions {
  int seconds = 10;
  bool json = false;
};

inline constexpr double kFrameTargetP99Ms = 25.0;

struct FrameStats {
  qsizetype frames = 0;  // intervals measured
  double medianMs = 0, p90Ms = 0, p99Ms = 0, maxMs = 0;
};

// Nearest-rank percentiles of frame intervals in nanoseconds (the median averages the middle
// two of an even count).
FrameStats frameStats(std::vector<qint64> intervalsNs);

// About `chars` characters of Markdown chat history (paragraphs, lists, fenced code), as
// alternating user and assistant turns: {role, content} pairs.
std::vector<std::pair<QString, QString>> benchConversation(qsizetype chars);

// Starts the benchmark: call before AppController::loadModel(). The window must be shown.
void startFrameBench(QQuickWindow* window, AppController* app, const FrameBenchOptions& options);

}  // namespace strata::app
