#include "shell/demo_content.h"

#include <QDateTime>
#include <QRandomGenerator>
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "chat/chat_controller.h"
#include "chat/message_list_model.h"
#include "heatmap/routing_monitor.h"
#include "heatmap/tier_monitor.h"
#include "prefill/prefill_monitor.h"
#include "speculation/speculation_monitor.h"
#include "store/conversation_list_model.h"
#include "strata/tiers.h"

namespace strata::app {
namespace {

// GLM-5's routed layout: 75 MoE layers x 256 experts. Heat follows a Zipf-like law per layer
// (a few experts do most of the work), the hottest are pinned, the next ones cached in RAM.
TierData demoTiers() {
  TierData d;
  d.streaming = true;
  d.layers = 75;
  d.experts = 256;
  QRandomGenerator rng(7);
  for (int l = 0; l < d.layers; ++l) {
    std::vector<int> rank(static_cast<size_t>(d.experts));
    for (int e = 0; e < d.experts; ++e) rank[static_cast<size_t>(e)] = e;
    std::shuffle(rank.begin(), rank.end(), rng);
    for (int e = 0; e < d.experts; ++e) {
      const int r = rank[static_cast<size_t>(e)];
      const float heat =
          static_cast<float>(1.0 / std::pow(r + 1.0, 0.9) * (0.7 + 0.3 * rng.generateDouble()));
      d.heat.append(heat);
      const ExpertTier tier = r < 12   ? ExpertTier::Pinned
                              : r < 70 ? ExpertTier::Ram
                              : r < 73 ? ExpertTier::Loading
                              : r < 90 ? ExpertTier::PageCache
                                       : ExpertTier::Disk;
      d.tiers.append(static_cast<quint8>(tier));
    }
  }
  d.hitRate = 0.934;
  d.pinnedBytes = d.pinnedBudget = 3LL << 30;
  d.cacheBytes = 9LL << 30;
  d.cacheBudget = 12LL << 30;
  d.residentBytes = 14LL << 30;
  d.pageCacheTotal = 370LL << 30;
  d.pageCacheBytes = 24LL << 30;  // 17 experts of each layer's 256, ~19 MB each
  d.bytesRead = 41LL << 30;  // a few hundred tokens' misses, at ~1.4 GB/s while reading
  d.readSeconds = 31.4;
  // GLM-5's 16-bit KV cache: 78 layers and the MTP layer x (512 latent + 64 rope key + 128
  // indexer key) x 2 bytes per token, for the demo chat's 3,420 tokens of a 4,096 context.
  const qint64 kvPerToken = 79LL * (512 + 64 + 128) * 2;
  d.kvTokens = 3420;
  d.kvBytes = d.kvTokens * kvPerToken;
  d.kvReservedBytes = 4096 * kvPerToken;
  return d;
}

// The last tokens of the demo reply, each sent to 8 of a layer's 24 hottest experts (as real
// routing mostly is), gates summing to GLM-5's routed_scaling_factor 2.5.
RoutingData demoRouting(const TierData& tiers) {
  RoutingData d;
  d.expertsPerToken = 8;
  for (int l = 0; l < tiers.layers; ++l) d.layers.push_back(3 + l);  // GLM-5: layers 3..77
  QRandomGenerator rng(11);
  const QStringList words = {QStringLiteral("Or"), QStringLiteral(" use"), QStringLiteral(" `"),
                             QStringLiteral("std"), QStringLiteral("::"), QStringLiteral("set"),
                             QStringLiteral("_union"), QStringLiteral("`,")};
  for (qsizetype w = 0; w < words.size(); ++w) {
    RoutedTokenData t;
    t.text = words[w];
    t.step = 1000 + w;
    t.position = 3400 + w;
    for (int l = 0; l < tiers.layers; ++l) {
      std::vector<int> hottest(static_cast<size_t>(tiers.experts));
      for (int e = 0; e < tiers.experts; ++e) hottest[static_cast<size_t>(e)] = e;
      const float* heat = tiers.heat.constData() + static_cast<qsizetype>(l) * tiers.experts;
      std::sort(hottest.begin(), hottest.end(), [heat](int a, int b) { return heat[a] > heat[b]; });
      std::shuffle(hottest.begin(), hottest.begin() + 24, rng);
      std::vector<float> gates(8);
      for (float& g : gates) g = static_cast<float>(0.2 + rng.generateDouble());
      std::sort(gates.begin(), gates.end(), std::greater<>());
      const float sum = std::accumulate(gates.begin(), gates.end(), 0.0f);
      for (int i = 0; i < 8; ++i) {
        t.experts.push_back(hottest[static_cast<size_t>(i)]);
        t.weights.push_back(gates[static_cast<size_t>(i)] / sum * 2.5f);
      }
    }
    d.trail.push_back(t);
  }
  return d;
}

// GLM-5 on a disk-bound machine: the MTP head wins, n-grams were paused by self-tuning, no
// grammar was used.
SpeculationData demoSpeculation() {
  auto drafter = [](const char* name, bool active, qint64 rounds, qint64 firstAccepted,
                    qint64 drafted, qint64 accepted, double speedup) {
    DrafterData d;
    d.name = QString::fromLatin1(name);
    d.mode = QStringLiteral("auto");
    d.active = active;
    d.rounds = rounds;
    d.firstAccepted = firstAccepted;
    d.drafted = drafted;
    d.accepted = accepted;
    d.acceptance = rounds ? static_cast<double>(firstAccepted) / static_cast<double>(rounds) : 0;
    d.tokensPerForward = rounds ? static_cast<double>(accepted + rounds) / rounds : 0;
    d.speedup = speedup;
    return d;
  };
  SpeculationData s;
  s.drafters = {drafter("mtp", true, 412, 338, 1236, 706, 1.62),
                drafter("ngram", false, 9, 3, 41, 5, 0.88),
                drafter("grammar", true, 0, 0, 0, 0, 0)};
  s.drafters[0].depth = 3;  // 1236 drafts in 412 rounds: the full chain pays
  return s;
}

}  // namespace

void fillDemo(ChatController& chat, TierMonitor& monitor, RoutingMonitor& routing,
              SpeculationMonitor& speculation, PrefillMonitor& prefill) {
  const qint64 now = QDateTime::currentMSecsSinceEpoch();
  chat.conversations()->setRows(
      {{4, QStringLiteral("Merge two sorted lists in C++"), now},
       {3, QStringLiteral("Capital of Australia"), now - 3600000},
       {2, QStringLiteral("Plan a weekend in Lisbon"), now - 86400000},
       {1, QStringLiteral("What is a mixture of experts?"), now - 2 * 86400000}});
  chat.setTitle(QStringLiteral("Merge two sorted lists in C++"));
  MessageListModel& m = *chat.messages();
  m.appendMessage(1, QStringLiteral("user"),
                  QStringLiteral("How do I merge two sorted vectors in C++?"));
  m.appendMessage(
      2, QStringLiteral("assistant"),
      QStringLiteral(
          "Use **`std::merge`** from `<algorithm>`: it walks both ranges once, so it runs in "
          "*O(n + m)* and keeps equal elements in order.\n\n"
          "```cpp\n#include <algorithm>\n#include <vector>\n\n"
          "std::vector<int> merged(const std::vector<int>& a, const std::vector<int>& b) {\n"
          "  std::vector<int> out(a.size() + b.size());\n"
          "  std::merge(a.begin(), a.end(), b.begin(), b.end(), out.begin());\n"
          "  return out;\n}\n```\n\n"
          "If the halves are already in **one** vector, `std::inplace_merge` does it without the "
          "copy."),
      QStringLiteral(
          "The user wants the standard-library way. std::merge takes two sorted ranges and an "
          "output iterator; mention inplace_merge for the single-buffer case."));
  m.appendMessage(3, QStringLiteral("user"),
                  QStringLiteral("And if I need them without duplicates?"));
  m.appendMessage(
      4, QStringLiteral("assistant"),
      QStringLiteral("Merge, then drop adjacent repeats:\n\n"
                     "1. `std::merge` into `out` as above\n"
                     "2. `out.erase(std::unique(out.begin(), out.end()), out.end());`\n\n"
                     "Or use `std::set_union`, which writes each common element once."));
  chat.setNotice(QStringLiteral("Resumed 3,412 tokens in 14 ms"));

  const TierData tiers = demoTiers();
  monitor.update(tiers);
  routing.update(demoRouting(tiers));
  for (double tps : {11.8, 12.4, 12.9, 13.1, 12.2, 13.4, 13.9, 14.1, 13.6, 14.3, 14.0, 14.4})
    monitor.addSpeedSample(tps);
  speculation.update(demoSpeculation());
  ReplyOutcome last;
  last.tokens = 61;
  last.forwards = 27;
  last.drafted = 72;
  last.accepted = 34;
  last.tokensPerPass = static_cast<double>(last.forwards + last.accepted) / last.forwards;
  speculation.setLastReply(last);
  last.id = 1;
  last.prefillSeconds = 0.412;
  prefill.start(last.id);
  prefill.finish(last);
}

}  // namespace strata::app
