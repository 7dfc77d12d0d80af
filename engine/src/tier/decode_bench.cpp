#include "strata/decode_bench.h"

#include <fcntl.h>
#include <omp.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>

#include "core/median.h"
#include "io/container.h"
#include "kernels/memory_bandwidth.h"
#include "strata/error.h"
#include "tier/aligned_buffer.h"
#include "tier/expert_reader.h"
#include "tier/routing_trace.h"

namespace strata {
namespace {

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// VmRSS or VmHWM of this process, in bytes.
int64_t procStatusBytes(const std::string& field) {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(field + ":", 0) == 0) return std::atoll(line.c_str() + field.size() + 1) * 1024;
  return 0;
}

// Resets the peak RSS to the current RSS (Linux: "5" to clear_refs), so the peak measured is
// the engine's, not the disk probe's buffers'.
void resetPeakRss() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
}

// Decoded tokens between two memory-bandwidth probes.
constexpr int kSegmentTokens = 8;

// The memory read bandwidth, probed again between decode segments: a shared machine's
// bandwidth drifts by a third within seconds (this project's VMs: 15-21 GB/s in back-to-back
// runs), so each segment is compared with the probes either side of it rather than with one
// probe taken before the model opened (which read 15-20 GB/s where probes between segments
// read 19-37). The buffer (256 MiB, 8x a laptop's last-level cache, so the reads come from
// memory) is allocated once, before the model opens: allocating it for every probe made the
// decoding around it ~10 % slower here. Its resident bytes are known, and taken off the RSS
// figures, which are the engine's.
class BandwidthProbe {
 public:
  explicit BandwidthProbe(int threads) : threads_(threads) {
    const int64_t before = procStatusBytes("VmRSS");
    buffer_.assign((size_t{256} << 20) / sizeof(uint64_t), 1);
    residentBytes_ = procStatusBytes("VmRSS") - before;
  }

  double measure() {
    samples_.push_back(memoryReadGbps(buffer_, threads_, 3));
    return samples_.back();
  }
  int64_t residentBytes() const { return residentBytes_; }
  const std::vector<double>& samples() const { return samples_; }

 private:
  int threads_;
  std::vector<uint64_t> buffer_;
  int64_t residentBytes_ = 0;
  std::vector<double> samples_;
};

struct Segment {
  int tokens = 0;
  double seconds = 0;
  int64_t bytesRead = 0;
  double memGbps = 0;  // the mean of the probes before and after
};

// Reads up to `maxBytes` of randomly chosen experts with the backend and depth the engine will
// use; nothing comes from the page cache (direct I/O, or pages dropped first).
double diskReadGbps(const io::Container& c, const MemorySettings& m, int64_t maxBytes, uint64_t seed) {
  std::vector<const io::ExpertLocation*> all;
  for (int layer : c.expertLayers())
    for (int e = 0; e < c.expertCount(layer); ++e) all.push_back(&c.expert(layer, e));
  std::shuffle(all.begin(), all.end(), std::mt19937_64(seed));
  std::vector<const io::ExpertLocation*> chosen;
  int64_t bytes = 0;
  for (const auto* loc : all) {
    if (bytes >= maxBytes) break;
    chosen.push_back(loc);
    bytes += static_cast<int64_t>(loc->span);
  }
  if (m.io == IoBackend::Buffered)
    for (const auto& path : c.files()) {
      const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
      if (fd >= 0) {
        ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
        ::close(fd);
      }
    }
  const bool uring = m.io == IoBackend::Uring;
  const int workers = uring ? 1 : std::max(1, m.ioDepth);
  const size_t batch = uring ? static_cast<size_t>(std::max(1, m.ioDepth)) : 1;
  std::vector<std::unique_ptr<tier::ExpertReader>> readers;
  for (int i = 0; i < workers; ++i)
    readers.push_back(tier::openExpertReader(m.io, c.files(), m.pageCache, m.ioDepth));
  std::string error;
  std::mutex errorMutex;
  const Clock::time_point start = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w)
    threads.emplace_back([&, w] {
      std::vector<tier::AlignedBuffer> buffers(batch);
      for (size_t first = w * batch; first < chosen.size(); first += workers * batch) {
        std::vector<tier::ReadRequest> requests;
        for (size_t i = first; i < std::min(chosen.size(), first + batch); ++i) {
          const io::ExpertLocation& loc = *chosen[i];
          auto& buffer = buffers[i - first];
          if (buffer.size() < loc.span) buffer = tier::AlignedBuffer(loc.span);
          requests.push_back({loc.fileIndex, loc.offset, loc.span, loc.bytes, buffer.data(), {}});
        }
        readers[static_cast<size_t>(w)]->read(requests);
        for (const auto& r : requests)
          if (!r.error.empty()) {
            std::lock_guard lock(errorMutex);
            error = r.error;
          }
      }
    });
  for (auto& t : threads) t.join();
  const double seconds = secondsSince(start);
  if (!error.empty()) throw Error("measuring the disk: " + error);
  return static_cast<double>(bytes) / seconds / 1e9;
}

}  // namespace

DecodeBenchResult benchDecode(const DecodeBenchOptions& options,
                              const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  if (!io::Container::isContainer(options.model))
    throw Error(options.model.string() + ": bench decode needs a Strata container (strata-cli convert or synth)");
  if (options.tokens < 1) throw Error("bench decode: --tokens must be at least 1");
  DecodeBenchResult r;
  EngineSettings settings = options.settings;
  const int threads = settings.threads > 0 ? settings.threads : omp_get_max_threads();

  // The budget: given, or the fixed needs plus a fraction of the expert bytes.
  if (options.expertFraction >= 0) {
    EngineSettings probe = settings;
    probe.memory.budgetBytes = int64_t{1} << 50;
    const MemoryPlan all = Engine::plan(options.model, probe);
    const int64_t experts = static_cast<int64_t>(options.expertFraction * all.expertBytes * all.expertCount);
    settings.memory.budgetBytes = all.residentBytes + all.kvBytes + all.scratchBytes +
                                  std::max(experts, all.minimumExpertBytes);
  }
  r.plan = Engine::plan(options.model, settings);
  r.budgetBytes = settings.memory.budgetBytes;

  {
    const io::Container container = io::Container::open(options.model);
    say("measuring the disk (" + std::string(ioBackendName(settings.memory.io)) + ", depth " +
        std::to_string(settings.memory.ioDepth) + ")");
    r.diskGbps = diskReadGbps(container, settings.memory, int64_t{512} << 20, options.seed);
  }
  BandwidthProbe bandwidth(threads);
  r.baselineRssBytes = procStatusBytes("VmRSS") - bandwidth.residentBytes();
  resetPeakRss();

  say("opening the model");
  const auto engine = Engine::open(options.model, settings);
  Clock::time_point start;
  std::unique_ptr<tier::RoutingTraceWriter> trace;
  if (!options.recordTrace.empty()) {
    const TierSnapshot layout = engine->tierSnapshot();
    if (!layout.streaming) throw Error("--record-trace needs a memory budget (streaming experts)");
    tier::RoutingTraceHeader header{options.model.filename().string(), layout.layers,
                                    layout.expertsPerLayer, static_cast<uint64_t>(r.plan.expertBytes)};
    trace = std::make_unique<tier::RoutingTraceWriter>(options.recordTrace.string(), header);
    engine->observeRouting([&trace](int64_t step, int layer, std::span<const int> experts) {
      trace->add(static_cast<int>(step), layer, experts);
    });
  }

  // The pinned set loads in the background from the start; let it finish, so the timed steps
  // see the tiers as they are in a long session.
  say("loading the pinned set");
  start = Clock::now();
  for (;;) {
    const TierSnapshot snap = engine->tierSnapshot();
    if (std::none_of(snap.tiers.begin(), snap.tiers.end(), [](ExpertTier t) { return t == ExpertTier::Loading; }))
      break;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  r.pinnedLoadSeconds = secondsSince(start);

  const int vocab = engine->info().vocabSize;
  std::mt19937_64 rng(options.seed);
  std::vector<int32_t> prompt;
  for (int i = 0; i < options.promptTokens; ++i)
    prompt.push_back(static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab)));
  auto session = engine->newSession();
  say("prefill of " + std::to_string(prompt.size()) + " tokens");
  start = Clock::now();
  // In steps of the plan's prefill size, as generate() evaluates a prompt: a step's logits
  // are its tokens x the vocabulary, and only the last row is kept.
  std::vector<float> logits;
  for (size_t done = 0; done < prompt.size(); done += kPrefillChunkTokens) {
    const size_t count = std::min<size_t>(kPrefillChunkTokens, prompt.size() - done);
    const std::vector<float> rows =
        session->append(std::span<const int32_t>(prompt).subspan(done, count)).logits;
    logits.assign(rows.end() - vocab, rows.end());
  }
  r.prefillSeconds = secondsSince(start);
  int32_t next = argmax(logits);

  // Warm-up steps (untimed) let the cache fill, for the everything-fits case.
  for (int i = 0; i < options.warmupTokens; ++i) {
    logits = session->append(std::vector<int32_t>{next}).logits;
    next = argmax(logits);
  }
  say("decoding " + std::to_string(options.tokens) + " tokens, the memory bandwidth (" +
      std::to_string(threads) + " threads) probed every " + std::to_string(kSegmentTokens));
  bandwidth.measure();
  const TierCounters before = engine->tierSnapshot().counters;
  std::vector<Segment> segments;
  std::vector<double> stepSeconds;
  double seconds = 0;
  int64_t readSoFar = before.bytesRead;
  for (int done = 0; done < options.tokens;) {
    Segment segment;
    segment.tokens = std::min(kSegmentTokens, options.tokens - done);
    start = Clock::now();
    for (int i = 0; i < segment.tokens; ++i) {
      const auto stepStart = Clock::now();
      logits = session->append(std::vector<int32_t>{next}).logits;
      next = argmax(logits);
      stepSeconds.push_back(secondsSince(stepStart));
    }
    segment.seconds = secondsSince(start);
    const int64_t read = engine->tierSnapshot().counters.bytesRead;
    segment.bytesRead = read - readSoFar;
    readSoFar = read;
    const double probeBefore = bandwidth.samples().back();
    segment.memGbps = (probeBefore + bandwidth.measure()) / 2;
    segments.push_back(segment);
    seconds += segment.seconds;
    done += segment.tokens;
  }
  r.medianTokS = 1.0 / median(stepSeconds);
  r.tiers = engine->tierSnapshot();
  // What the app pays to poll the tiers (10 times a second while decoding).
  r.snapshotSeconds = medianSeconds(21, [&] { (void)engine->tierSnapshot(); });
  if (trace) {
    engine->observeRouting({});
    trace->close();
  }
  const TierCounters& after = r.tiers.counters;

  const int64_t hits = (after.hitsPinned - before.hitsPinned) + (after.hitsRam - before.hitsRam);
  const int64_t needed = hits + (after.misses - before.misses) + (after.missesInFlight - before.missesInFlight);
  r.hitRate = needed ? static_cast<double>(hits) / static_cast<double>(needed) : 1.0;
  r.bytesReadPerToken = static_cast<double>(after.bytesRead - before.bytesRead) / options.tokens;
  r.stallSecondsPerToken = (after.stallSeconds - before.stallSeconds) / options.tokens;
  const int64_t predicted = after.predictedUsed - before.predictedUsed;
  r.prefetchPrecision = after.predicted > before.predicted
                            ? static_cast<double>(predicted) / static_cast<double>(after.predicted - before.predicted)
                            : 0.0;
  r.prefetchRecall = after.actualNeeded > before.actualNeeded
                         ? static_cast<double>(predicted) / static_cast<double>(after.actualNeeded - before.actualNeeded)
                         : 0.0;
  r.guessesDroppedPerToken = static_cast<double>(after.guessesDropped - before.guessesDropped) / options.tokens;
  r.tokS = options.tokens / seconds;
  r.decodeReadGbps = static_cast<double>(after.bytesRead - before.bytesRead) / seconds / 1e9;
  const double memoryBytes = static_cast<double>(r.plan.denseBytesPerToken + r.plan.expertBytesPerToken);
  // Each segment against its own limit; the medians resist a segment another tenant slowed.
  // The disk delivered at least what it read in the segment (a virtual disk's host cache can
  // beat the probe above): its limit takes the larger, so it is never set below reality.
  std::vector<double> limits, ratios;
  for (const Segment& segment : segments) {
    const double readPerToken = static_cast<double>(segment.bytesRead) / segment.tokens;
    const double diskGbps = std::max(r.diskGbps, segment.bytesRead / segment.seconds / 1e9);
    const double limitSeconds =
        std::max(readPerToken / (diskGbps * 1e9), memoryBytes / (segment.memGbps * 1e9));
    limits.push_back(1.0 / limitSeconds);
    ratios.push_back(segment.tokens / segment.seconds * limitSeconds);
  }
  r.limitTokS = median(limits);
  r.ratio = median(ratios);
  r.segments = static_cast<int>(segments.size());
  r.memGbps = median(bandwidth.samples());
  r.memGbpsMin = *std::min_element(bandwidth.samples().begin(), bandwidth.samples().end());
  r.memGbpsMax = *std::max_element(bandwidth.samples().begin(), bandwidth.samples().end());
  r.peakRssBytes = procStatusBytes("VmHWM") - bandwidth.residentBytes();
  return r;
}

}  // namespace strata
