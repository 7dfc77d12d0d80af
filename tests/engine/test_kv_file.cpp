// The persisted KV cache file (kv/kv_file.h, docs/kv-file-format.md): conversations round-trip
// bit for bit (or rounded to 16 bits exactly as specified); edits rewrite only what changed;
// the bytes are laid out as the document says; a writer killed at random moments always leaves
// a file that opens to a state it committed; truncation at every record boundary, flipped bits
// and foreign files give the last commit or a precise error, never garbage.
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <xxhash.h>

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <filesystem>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "error_check.h"
#include "kv/kv_file.h"
#include "kv_file_fixtures.h"

namespace fs = std::filesystem;
using namespace kvtest;
using strata::kv::KvFileError;
using strata::kv::KvFileState;
using strata::kv::KvFileWriter;
using strata::kv::readKvFile;
using Reason = KvFileError::Reason;

namespace {

// --- Sizes as docs/kv-file-format.md states them ---
uint64_t docHeaderBytes(const KvFileHeader& h) { return 100 + h.layerCount + 8; }
uint64_t docEmptyFileBytes(const KvFileHeader& h) { return docHeaderBytes(h) + 32; }
uint64_t docBytesPerToken(const KvFileHeader& h) {
  const uint64_t valueBytes = h.precision == KvPrecision::F32 ? 4 : 2;
  uint64_t values = 0;
  for (bool indexed : h.layerHasIndexKey)
    values += h.dims.kvLoraRank + h.dims.ropeDim + (indexed ? h.dims.indexDim : 0);
  return 4 + values * valueBytes;
}
uint64_t docChunkBytes(const KvFileHeader& h, uint64_t tokens) {
  return 48 + tokens * docBytesPerToken(h) + 32;
}

const char* reasonName(Reason r) {
  switch (r) {
    case Reason::Io:
      return "Io";
    case Reason::InUse:
      return "InUse";
    case Reason::NotKvFile:
      return "NotKvFile";
    case Reason::FutureVersion:
      return "FutureVersion";
    case Reason::OtherModel:
      return "OtherModel";
    case Reason::WrongShape:
      return "WrongShape";
    case Reason::Corrupt:
      return "Corrupt";
    case Reason::Truncated:
      return "Truncated";
  }
  return "?";
}

// Empty when `action` threw KvFileError with `reason` and a message naming every part.
template <typename F>
QString kvErrorOf(F action, Reason reason, const QStringList& parts) {
  try {
    action();
  } catch (const KvFileError& e) {
    if (e.reason() != reason)
      return QString("reason %1, expected %2: %3")
          .arg(reasonName(e.reason()), reasonName(reason), e.what());
    return errorOf([&] { throw e; }, parts);
  } catch (const std::exception& e) {
    return QString("not a KvFileError: ") + e.what();
  }
  return "no error was thrown";
}

#define EXPECT_ERROR(action, ...)                                  \
  do {                                                             \
    const QString problem = errorOf([&] { action; }, __VA_ARGS__); \
    QVERIFY2(problem.isEmpty(), qPrintable(problem));              \
  } while (0)

#define EXPECT_KV_ERROR(action, reason, ...)                                 \
  do {                                                                       \
    const QString problem = kvErrorOf([&] { action; }, reason, __VA_ARGS__); \
    QVERIFY2(problem.isEmpty(), qPrintable(problem));                        \
  } while (0)

std::vector<int32_t> ids(int n, int32_t base) {
  std::vector<int32_t> v(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) v[static_cast<size_t>(i)] = base + i;
  return v;
}

std::vector<int32_t> operator+(std::vector<int32_t> a, const std::vector<int32_t>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::vector<int32_t> prefix(const std::vector<int32_t>& v, size_t n) {
  return {v.begin(), v.begin() + static_cast<ptrdiff_t>(n)};
}

// A conversation as a session holds it: token ids and the (unrounded) cache for them.
struct Conversation {
  KvFileHeader header;
  std::vector<int32_t> tokens;
  KvCache cache;
  explicit Conversation(const KvFileHeader& h) : header(h), cache(h.layerCount, h.dims) {}
  void set(const std::vector<int32_t>& next) {
    extendCache(cache, header, next, tokens);
    tokens = next;
  }
};

QString stateProblem(const KvFileState& s, const KvFileHeader& h,
                     const std::vector<int32_t>& tokens) {
  if (s.tokens != tokens)
    return QString("%1 tokens read, expected %2 (or ids differ)")
        .arg(s.tokens.size())
        .arg(tokens.size());
  return cacheProblem(h, tokens, s.cache);
}

#define EXPECT_STATE(state, header, tokens)                      \
  do {                                                           \
    const QString problem = stateProblem(state, header, tokens); \
    QVERIFY2(problem.isEmpty(), qPrintable(problem));            \
  } while (0)

uint32_t u32(const std::string& b, size_t at) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, 4);
  return v;
}
uint64_t u64(const std::string& b, size_t at) {
  uint64_t v;
  std::memcpy(&v, b.data() + at, 8);
  return v;
}
uint64_t xxh3(const std::string& b, size_t at, size_t n) { return XXH3_64bits(b.data() + at, n); }

// A named byte range of a file, as error messages name it.
struct Region {
  uint64_t begin, end;
  std::string name;
};

// The records of a file written by `turns` syncs, from the document's sizes.
std::vector<Region> docRegions(const KvFileHeader& h, const std::vector<int>& turns) {
  std::vector<Region> r = {{0, docHeaderBytes(h), "header at byte 0"}};
  uint64_t at = docHeaderBytes(h);
  r.push_back({at, at + 32, "commit record 0 at byte " + std::to_string(at)});
  at += 32;
  for (size_t k = 0; k < turns.size(); ++k) {
    const uint64_t commitAt = at + 48 + turns[k] * docBytesPerToken(h);
    r.push_back(
        {at, commitAt, "chunk record " + std::to_string(k + 1) + " at byte " + std::to_string(at)});
    r.push_back(
        {commitAt, commitAt + 32,
         "commit record " + std::to_string(k + 1) + " at byte " + std::to_string(commitAt)});
    at = commitAt + 32;
  }
  return r;
}

// Conversation states for the killed writer: each appends a turn (sometimes after an edit that
// cuts the conversation back); every state's last ids are its own, so states never repeat.
std::vector<std::vector<int32_t>> killScript(uint64_t seed, int states) {
  std::mt19937_64 rng(seed);
  std::vector<std::vector<int32_t>> script = {{}};
  for (int k = 1; k < states; ++k) {
    std::vector<int32_t> next = script.back();
    if (!next.empty() && (rng() % 10 < 3 || next.size() > 2500)) next.resize(rng() % next.size());
    const int turn =
        rng() % 4 == 0 ? 300 + static_cast<int>(rng() % 600) : 1 + static_cast<int>(rng() % 200);
    script.push_back(next + ids(turn, 1000 * k));
  }
  return script;
}

// The child: saves every state in order, reporting each finished sync's index on `report`.
[[noreturn]] void runKilledWriter(const fs::path& path, const KvFileHeader& h,
                                  const std::vector<std::vector<int32_t>>& script, int report) {
  try {
    KvFileWriter writer = KvFileWriter::create(path, h);
    Conversation c(h);
    for (int32_t k = 0; k < static_cast<int32_t>(script.size()); ++k) {
      c.set(script[static_cast<size_t>(k)]);
      writer.sync(c.tokens, c.cache);
      if (::write(report, &k, sizeof k) != sizeof k) ::_exit(4);
    }
  } catch (...) {
    ::_exit(3);
  }
  ::_exit(0);
}

}  // namespace

class TestKvFile : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path file(const std::string& name) { return fs::path(tmp_.path().toStdString()) / name; }

  // Writes a file by one sync per turn (fresh ids per turn) and returns the conversation.
  Conversation writeTurns(const fs::path& path, const KvFileHeader& h,
                          const std::vector<int>& turns) {
    KvFileWriter w = KvFileWriter::create(path, h);
    Conversation c(h);
    for (size_t k = 0; k < turns.size(); ++k) {
      c.set(c.tokens + ids(turns[k], 100 * static_cast<int32_t>(k + 1)));
      w.sync(c.tokens, c.cache);
    }
    return c;
  }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void roundTripF32() {
    const KvFileHeader h = makeHeader(3, {16, 4, 8}, {true, false, true}, KvPrecision::F32);
    const fs::path path = file("round-trip.kv");
    KvFileWriter w = KvFileWriter::create(path, h);
    QCOMPARE(w.committedTokens(), int64_t{0});
    QCOMPARE(w.fileBytes(), docEmptyFileBytes(h));
    const KvFileState empty = readKvFile(path, kFingerprint, &h);
    QVERIFY(empty.tokens.empty());
    QCOMPARE(empty.cache.length(), int64_t{0});

    Conversation c(h);
    uint64_t bytes = docEmptyFileBytes(h);
    for (int turn : {5, 1, 17, 3}) {
      c.set(c.tokens + ids(turn, 100 * turn));
      w.sync(c.tokens, c.cache);
      bytes += docChunkBytes(h, turn);
      QCOMPARE(w.committedTokens(), static_cast<int64_t>(c.tokens.size()));
      QCOMPARE(w.fileBytes(), bytes);
      QCOMPARE(fs::file_size(path), bytes);
      EXPECT_STATE(readKvFile(path, kFingerprint, &h), h, c.tokens);  // while the writer is open
    }
    const KvFileState s = readKvFile(path, kFingerprint);
    QCOMPARE(s.header.modelFingerprint, std::string(kFingerprint));
    QCOMPARE(s.header.layerCount, 3);
    QCOMPARE(s.header.dims.indexDim, 8);
    QCOMPARE(s.header.layerHasIndexKey, h.layerHasIndexKey);
    QVERIFY(s.header.precision == KvPrecision::F32);
    QVERIFY(s.cache.layer(1).indexKey.empty());
    EXPECT_STATE(s, h, c.tokens);
  }

  void roundTrip16_data() {
    QTest::addColumn<int>("precision");
    QTest::newRow("bf16") << int(KvPrecision::BF16);
    QTest::newRow("f16") << int(KvPrecision::F16);
  }
  void roundTrip16() {
    QFETCH(int, precision);
    const KvFileHeader h = makeHeader(2, {32, 8, 16}, {false, true}, KvPrecision(precision));
    const fs::path path = file("round-trip-16.kv");
    const Conversation c = writeTurns(path, h, {40, 7, 25});
    QCOMPARE(fs::file_size(path), docEmptyFileBytes(h) + docChunkBytes(h, 40) +
                                      docChunkBytes(h, 7) + docChunkBytes(h, 25));
    // Read with an f32 session's expectations: precision may differ, values come back widened.
    KvFileHeader f32 = h;
    f32.precision = KvPrecision::F32;
    const KvFileState s = readKvFile(path, kFingerprint, &f32);
    QVERIFY(s.header.precision == h.precision);
    EXPECT_STATE(s, h, c.tokens);                              // equal to the rounded values
    QVERIFY(!cacheProblem(f32, c.tokens, s.cache).isEmpty());  // which differ from the f32 ones
  }

  // Chunks of several MiB (the reader and writer work in 1 MiB blocks) with an odd rope dim,
  // so pieces end at every alignment; then a small chunk after them.
  void chunksLargerThanBlocks_data() {
    QTest::addColumn<int>("precision");
    QTest::newRow("f32") << int(KvPrecision::F32);
    QTest::newRow("bf16") << int(KvPrecision::BF16);
    QTest::newRow("f16") << int(KvPrecision::F16);
  }
  void chunksLargerThanBlocks() {
    QFETCH(int, precision);
    const KvFileHeader h = makeHeader(2, {512, 3, 128}, {true, false}, KvPrecision(precision));
    const fs::path path = file("large-chunks.kv");
    const Conversation c = writeTurns(path, h, {1501, 10});
    QVERIFY(docChunkBytes(h, 1501) > 2 * (size_t{1} << 20));
    EXPECT_STATE(readKvFile(path, kFingerprint, &h), h, c.tokens);
  }

  // An independent reader written from docs/kv-file-format.md alone.
  void bytesAreAsDocumented() {
    const KvFileHeader h = makeHeader(2, {8, 4, 4}, {false, true}, KvPrecision::BF16);
    const fs::path path = file("documented.kv");
    const Conversation c = writeTurns(path, h, {3, 2});
    const std::string b = readBytes(path);

    QCOMPARE(b.substr(0, 8), std::string("STRATAKV"));
    QCOMPARE(u32(b, 8), 1u);
    QCOMPARE(u32(b, 12), 110u);
    QCOMPARE(u32(b, 16), 2u);
    QCOMPARE(u32(b, 20), 8u);
    QCOMPARE(u32(b, 24), 4u);
    QCOMPARE(u32(b, 28), 4u);
    QCOMPARE(int(b[32]), 1);  // bf16
    QCOMPARE(int(b[33]), 16);
    QCOMPARE(u32(b, 32) >> 16, 0u);
    QCOMPARE(b.substr(36, 16), std::string(kFingerprint));
    QCOMPARE(b.substr(52, 48), std::string(48, '\0'));
    QCOMPARE(int(b[100]), 0);
    QCOMPARE(int(b[101]), 1);
    const uint64_t headerHash = u64(b, 102);
    QCOMPARE(headerHash, xxh3(b, 0, 102));

    size_t at = 110;
    QCOMPARE(b.substr(at, 4), std::string("KVCM"));
    QCOMPARE(u32(b, at + 4), 0u);
    QCOMPARE(u64(b, at + 8), uint64_t{0});
    QCOMPARE(u64(b, at + 16), headerHash);
    QCOMPARE(u64(b, at + 24), xxh3(b, at, 24));
    at += 32;

    uint64_t committed = 0;
    for (uint64_t count : {3, 2}) {
      QCOMPARE(b.substr(at, 4), std::string("KVCH"));
      QCOMPARE(u32(b, at + 4), 0u);
      QCOMPARE(u64(b, at + 8), committed);
      QCOMPARE(u64(b, at + 16), count);
      const uint64_t payloadBytes = u64(b, at + 24);
      QCOMPARE(payloadBytes, count * (4 + (8 + 4 + 8 + 4 + 4) * 2));
      QCOMPARE(u64(b, at + 32), xxh3(b, at + 48, payloadBytes));
      QCOMPARE(u64(b, at + 40), xxh3(b, at, 40));
      size_t p = at + 48;
      for (uint64_t t = 0; t < count; ++t, p += 4)
        QCOMPARE(static_cast<int32_t>(u32(b, p)), c.tokens[committed + t]);
      for (int layer = 0; layer < 2; ++layer) {
        for (int v = 0; v < (layer == 1 ? 3 : 2); ++v) {
          const int dim = v == 0 ? 8 : 4;
          for (uint64_t t = 0; t < count; ++t)
            for (int e = 0; e < dim; ++e, p += 2) {
              uint16_t bits;
              std::memcpy(&bits, b.data() + p, 2);
              const float stored = std::bit_cast<float>(uint32_t{bits} << 16);
              const float want =
                  bf16Reference(kvValue(layer, v, committed + t, c.tokens[committed + t], e));
              QCOMPARE(std::bit_cast<uint32_t>(stored), std::bit_cast<uint32_t>(want));
            }
        }
      }
      QCOMPARE(p, at + 48 + payloadBytes);
      const uint64_t payloadHash = u64(b, at + 32);
      at = p;
      committed += count;
      QCOMPARE(b.substr(at, 4), std::string("KVCM"));
      QCOMPARE(u64(b, at + 8), committed);
      QCOMPARE(u64(b, at + 16), payloadHash);
      QCOMPARE(u64(b, at + 24), xxh3(b, at, 24));
      at += 32;
    }
    QCOMPARE(at, b.size());
  }

  void syncAfterEdits() {
    const KvFileHeader h = makeHeader(2, {8, 4, 4}, {true, true}, KvPrecision::F32);
    const fs::path path = file("edits.kv");
    KvFileWriter w = KvFileWriter::create(path, h);
    Conversation c(h);
    for (int32_t base : {1000, 2000, 3000}) {  // commits at 10, 20, 30 tokens
      c.set(c.tokens + ids(10, base));
      w.sync(c.tokens, c.cache);
    }
    const uint64_t empty = docEmptyFileBytes(h);
    const auto chunk = [&](uint64_t n) { return docChunkBytes(h, n); };
    const auto check = [&](uint64_t bytes) {
      QCOMPARE(w.committedTokens(), static_cast<int64_t>(c.tokens.size()));
      QCOMPARE(w.fileBytes(), bytes);
      QCOMPARE(fs::file_size(path), bytes);
      EXPECT_STATE(readKvFile(path, kFingerprint, &h), h, c.tokens);
    };

    // Diverging inside the third turn: cut back to the commit at 20, write 20..33 again.
    c.set(prefix(c.tokens, 25) + ids(8, 9000));
    w.sync(c.tokens, c.cache);
    check(empty + chunk(10) + chunk(10) + chunk(13));
    const std::string bytes = readBytes(path);
    for (int32_t dropped = 3005; dropped < 3010; ++dropped)
      QVERIFY2(
          bytes.find(std::string(reinterpret_cast<const char*>(&dropped), 4)) == std::string::npos,
          "a dropped token id is still in the file");
    for (int32_t kept : {3000, 3004, 9000, 9007})
      QVERIFY(bytes.find(std::string(reinterpret_cast<const char*>(&kept), 4)) !=
              std::string::npos);

    c.set(prefix(c.tokens, 15));  // regenerate: the conversation only shrinks
    w.sync(c.tokens, c.cache);
    check(empty + chunk(10) + chunk(5));
    w.sync(c.tokens, c.cache);  // nothing new: nothing written
    check(empty + chunk(10) + chunk(5));
    c.set(prefix(c.tokens, 10) + ids(4, 7000));  // diverging exactly at a commit
    w.sync(c.tokens, c.cache);
    check(empty + chunk(10) + chunk(4));
    c.set(ids(6, 5000));  // diverging at the first token
    w.sync(c.tokens, c.cache);
    check(empty + chunk(6));
    c.set({});
    w.sync(c.tokens, c.cache);
    check(empty);
  }

  void openExistingThenMoreTurns() {
    const KvFileHeader h = makeHeader(2, {8, 4, 4}, {true, false}, KvPrecision::BF16);
    const fs::path path = file("reopened.kv");
    Conversation c = writeTurns(path, h, {7, 9});
    {
      KvFileWriter w = KvFileWriter::open(path, h);
      QCOMPARE(w.committedTokens(), int64_t{16});
      QCOMPARE(w.fileBytes(), fs::file_size(path));
      c.set(prefix(c.tokens, 12) + ids(5, 4000));  // an edit inside the earlier session's turn
      w.sync(c.tokens, c.cache);
      QCOMPARE(w.fileBytes(), docEmptyFileBytes(h) + docChunkBytes(h, 7) + docChunkBytes(h, 10));
      c.set(c.tokens + ids(6, 5000));
      w.sync(c.tokens, c.cache);
    }
    EXPECT_STATE(readKvFile(path, kFingerprint, &h), h, c.tokens);

    // An interrupted save's torn tail (a chunk record and part of its payload) is cut off.
    const uint64_t committed = fs::file_size(path);
    const fs::path longer = file("reopened-longer.kv");
    fs::copy_file(path, longer);
    Conversation more = c;
    more.set(c.tokens + ids(9, 6000));
    KvFileWriter::open(longer, h).sync(more.tokens, more.cache);
    writeBytes(path, readBytes(longer).substr(0, committed + 48 + 100));
    EXPECT_STATE(readKvFile(path, kFingerprint, &h), h, c.tokens);
    KvFileWriter w = KvFileWriter::open(path, h);
    QCOMPARE(w.fileBytes(), committed);
    QCOMPARE(fs::file_size(path), committed);
    w.sync(more.tokens, more.cache);
    EXPECT_STATE(readKvFile(path, kFingerprint, &h), h, more.tokens);
  }

  void openRefusesAnotherHeader() {
    const KvFileHeader h = makeHeader(2, {8, 4, 4}, {true, false}, KvPrecision::BF16);
    const fs::path path = file("refuse.kv");
    writeTurns(path, h, {4});
    const QString name = QString::fromStdString(path.string());
    KvFileHeader other = h;
    other.modelFingerprint = "fedcba9876543210";
    EXPECT_KV_ERROR(KvFileWriter::open(path, other), Reason::OtherModel,
                    {name, "fedcba9876543210"});
    other = h;
    other.dims.kvLoraRank = 16;
    EXPECT_KV_ERROR(KvFileWriter::open(path, other), Reason::WrongShape,
                    {name, "kv_lora_rank 8", "kv_lora_rank 16"});
    other = h;
    other.layerHasIndexKey = {true, true};
    EXPECT_KV_ERROR(KvFileWriter::open(path, other), Reason::WrongShape,
                    {name, "1 with index keys"});
    other = h;
    other.precision = KvPrecision::F16;
    EXPECT_KV_ERROR(KvFileWriter::open(path, other), Reason::WrongShape, {name, "bf16", "f16"});
    EXPECT_KV_ERROR(KvFileWriter::open(file("absent.kv"), h), Reason::Io, {"absent.kv"});
    QCOMPARE(KvFileWriter::open(path, h).committedTokens(), int64_t{4});
  }

  void oneWriterPerFile() {
    const KvFileHeader h = makeHeader(1, {8, 4, 0}, {false}, KvPrecision::F32);
    const fs::path path = file("locked.kv");
    const QString name = QString::fromStdString(path.string());
    {
      KvFileWriter first = KvFileWriter::create(path, h);
      EXPECT_KV_ERROR(KvFileWriter::open(path, h), Reason::InUse, {name});
      EXPECT_KV_ERROR(KvFileWriter::create(path, h), Reason::InUse, {name});
      KvFileWriter moved = std::move(first);  // the lock moves with it
      EXPECT_KV_ERROR(KvFileWriter::open(path, h), Reason::InUse, {name});
    }
    QCOMPARE(KvFileWriter::open(path, h).committedTokens(), int64_t{0});
  }

  void syncRefusesAnInconsistentCache() {
    const KvFileHeader h = makeHeader(2, {8, 4, 4}, {true, false}, KvPrecision::F32);
    const fs::path path = file("inconsistent.kv");
    KvFileWriter w = KvFileWriter::create(path, h);
    const QString name = QString::fromStdString(path.string());
    Conversation c(h);
    c.set(ids(5, 10));
    EXPECT_ERROR(w.sync(ids(4, 10), c.cache), {name, "4 token ids", "5 tokens"});
    const std::vector<float> ones(20, 1.0f);
    c.cache.layer(1).indexKey = strata::kv::KvRows(4, KvPrecision::F32);
    c.cache.layer(1).indexKey.append(ones.data(), ones.size());  // index keys where the header has none
    EXPECT_ERROR(w.sync(c.tokens, c.cache), {name, "layer 1"});
    QCOMPARE(w.committedTokens(), int64_t{0});
    QCOMPARE(fs::file_size(path), docEmptyFileBytes(h));
  }

  // A child saves a scripted conversation (appends and edits) and is killed at a random moment.
  // The file must open to the state of the last sync that returned or of the one in flight (or,
  // killed inside an edit's save, the earlier state it cut back to), with exact vectors.
  void killDuringSave() {
    // At least kTrials kills, more (up to kMaxTrials) until enough landed inside saves: where a
    // kill lands depends on the machine's speed, and a loaded CI machine once got 2 of the 3
    // edits' saves it needs in 60 trials.
    constexpr int kTrials = 60, kMaxTrials = 240;
    const std::vector<std::vector<int32_t>> script = killScript(11, 40);
    std::mt19937_64 timing(20240611);
    int missing = 0, progressed = 0, inFlightCommitted = 0, cutBacks = 0, tornTails = 0;
    auto enoughLanded = [&] { return tornTails >= 3 && cutBacks + inFlightCommitted >= 3; };
    int trial = 0;
    for (; trial < kTrials || (trial < kMaxTrials && !enoughLanded()); ++trial) {
      const KvFileHeader h = makeHeader(4, {64, 16, 32}, {true, true, false, true},
                                        trial % 2 ? KvPrecision::BF16 : KvPrecision::F32);
      const fs::path path = file("killed.kv");
      fs::remove(path);
      int report[2];
      QVERIFY(::pipe(report) == 0);
      const pid_t child = ::fork();
      QVERIFY(child >= 0);
      if (child == 0) {
        ::close(report[0]);
        runKilledWriter(path, h, script, report[1]);
      }
      ::close(report[1]);
      // Most kills land while the child saves turns (after its first commit, however slow the
      // disk); every fifth lands anywhere from the start, creation included.
      int32_t last = -1, k;
      if (trial % 5 != 0)
        while (last < 1 && ::read(report[0], &k, sizeof k) == sizeof k) last = k;
      ::usleep(static_cast<useconds_t>(timing() % 20001));
      ::kill(child, SIGKILL);
      int status = 0;
      QVERIFY(::waitpid(child, &status, 0) == child);
      QVERIFY2(WIFSIGNALED(status) || (WIFEXITED(status) && WEXITSTATUS(status) == 0),
               "the writer failed before it was killed");
      while (::read(report[0], &k, sizeof k) == sizeof k) last = k;
      ::close(report[0]);

      if (!fs::exists(path)) {  // killed inside create(): the rename never happened
        QCOMPARE(last, -1);
        ++missing;
        continue;
      }
      std::optional<KvFileState> read;
      try {
        read.emplace(readKvFile(path, kFingerprint, &h));
      } catch (const KvFileError& e) {
        QFAIL(qPrintable(QString("trial %1: %2").arg(trial).arg(e.what())));
      }
      const KvFileState& state = *read;
      // The state of the last sync that returned or of the one in flight; or, when the one in
      // flight is an edit, the earlier state it cut the file back to before appending.
      const auto isState = [&](int j) {
        return j >= 0 && j < static_cast<int>(script.size()) &&
               script[static_cast<size_t>(j)] == state.tokens;
      };
      int found = isState(last) ? last : isState(last + 1) ? last + 1 : -1;
      bool cutBack = false;
      if (found < 0 && last >= 0 && last + 1 < static_cast<int>(script.size())) {
        const std::vector<int32_t>& before = script[static_cast<size_t>(last)];
        const std::vector<int32_t>& after = script[static_cast<size_t>(last + 1)];
        const auto shared =
            std::mismatch(before.begin(), before.end(), after.begin(), after.end()).first -
            before.begin();
        for (int j = 0; j < last && found < 0; ++j)
          if (isState(j) && static_cast<ptrdiff_t>(state.tokens.size()) <= shared)
            found = j, cutBack = true;
      }
      QVERIFY2(found >= 0,
               qPrintable(QString("trial %1: the file holds %2 tokens, not state %3 or %4")
                              .arg(trial)
                              .arg(state.tokens.size())
                              .arg(last)
                              .arg(last + 1)));
      const QString problem = cacheProblem(h, state.tokens, state.cache);
      QVERIFY2(problem.isEmpty(), qPrintable(problem));
      progressed += found >= 1;
      inFlightCommitted += found == last + 1;
      cutBacks += cutBack;
      const uint64_t size = fs::file_size(path);
      const KvFileWriter reopened = KvFileWriter::open(path, h);  // cuts any torn tail
      QCOMPARE(reopened.committedTokens(), static_cast<int64_t>(state.tokens.size()));
      tornTails += reopened.fileBytes() < size;
    }
    qInfo(
        "%d trials: %d killed inside create, %d past the first save, %d with the save in flight "
        "committed, %d inside an edit's save after its cut, %d with a torn tail",
        trial, missing, progressed, inFlightCommitted, cutBacks, tornTails);
    // Not vacuous: kills landed inside saves, and the script's edits were reached.
    QVERIFY2(enoughLanded(), "too few kills landed inside saves");
  }

  // Every prefix at and around every record boundary, every prefix inside the header, and
  // random ones: the last commit before the cut, or Truncated before the first.
  void truncatedAnywhere() {
    const KvFileHeader h = makeHeader(2, {8, 4, 4}, {true, false}, KvPrecision::F32);
    const fs::path path = file("full.kv");
    const std::vector<int> turns = {3, 1, 6, 2, 4};
    const Conversation c = writeTurns(path, h, turns);
    const std::string full = readBytes(path);
    std::vector<uint64_t> commitEnds = {docEmptyFileBytes(h)};
    std::vector<uint64_t> cuts;
    for (uint64_t at = 0; at <= docEmptyFileBytes(h); ++at) cuts.push_back(at);
    for (const Region& r : docRegions(h, turns)) {
      for (uint64_t at : {r.begin, r.begin + 1, r.begin + 48, r.end - 1, r.end}) cuts.push_back(at);
      if (r.name.starts_with("commit record") && r.begin > docHeaderBytes(h))
        commitEnds.push_back(r.end);
    }
    QCOMPARE(commitEnds.back(), full.size());
    const size_t atRecords = cuts.size();
    std::mt19937_64 rng(5);
    for (int i = 0; i < 200; ++i) cuts.push_back(rng() % (full.size() + 1));

    const fs::path cut = file("cut.kv");
    for (size_t i = 0; i < cuts.size(); ++i) {
      const uint64_t at = cuts[i];
      writeBytes(cut, full.substr(0, at));
      if (at < docEmptyFileBytes(h)) {
        EXPECT_KV_ERROR(readKvFile(cut, kFingerprint, &h), Reason::Truncated,
                        {"cut.kv", "cut short"});
        continue;
      }
      size_t commit = 0;
      while (commit + 1 < commitEnds.size() && commitEnds[commit + 1] <= at) ++commit;
      uint64_t tokens = 0;
      for (size_t k = 0; k < commit; ++k) tokens += turns[k];
      try {
        EXPECT_STATE(readKvFile(cut, kFingerprint, &h), h, prefix(c.tokens, tokens));
        if (i < atRecords) {  // the writer agrees on where the last commit ends and cuts there
          QCOMPARE(KvFileWriter::open(cut, h).fileBytes(), commitEnds[commit]);
          QCOMPARE(fs::file_size(cut), commitEnds[commit]);
        }
      } catch (const std::exception& e) {
        QFAIL(qPrintable(QString("cut at byte %1: %2").arg(at).arg(e.what())));
      }
    }
  }

  // Random single-bit flips: in committed data, Corrupt naming the damaged record (a flip in
  // the final commit record reads as a save interrupted before it: the previous state); in the
  // header, the header's reasons; in a torn tail, nothing changes.
  void flippedBits() {
    const KvFileHeader h = makeHeader(2, {8, 4, 4}, {true, false}, KvPrecision::BF16);
    const fs::path path = file("flips.kv");
    const std::vector<int> turns = {3, 1, 6, 2, 4};
    const Conversation c = writeTurns(path, h, turns);
    const std::string good = readBytes(path);
    const std::vector<Region> regions = docRegions(h, turns);
    const fs::path flipped = file("flipped.kv");
    std::mt19937_64 rng(17);
    int committedFlips = 0;
    for (int trial = 0; trial < 300; ++trial) {
      const uint64_t at = rng() % good.size();
      const int bit = static_cast<int>(rng() % 8);
      std::string bad = good;
      bad[at] = static_cast<char>(bad[at] ^ (1 << bit));
      writeBytes(flipped, bad);
      const auto region = std::find_if(regions.begin(), regions.end(), [&](const Region& r) {
        return at >= r.begin && at < r.end;
      });
      const QString where = QString("flip at byte %1 bit %2: ").arg(at).arg(bit);
      QString problem;
      if (region == regions.end() - 1) {
        try {
          problem = stateProblem(readKvFile(flipped, kFingerprint, &h), h,
                                 prefix(c.tokens, c.tokens.size() - turns.back()));
        } catch (const std::exception& e) {
          problem = e.what();
        }
      } else if (region == regions.begin()) {
        const Reason reason = at < 8                              ? Reason::NotKvFile
                              : at < 12 && !(at == 8 && bit == 0) ? Reason::FutureVersion
                                                                  : Reason::Corrupt;
        problem = kvErrorOf([&] { readKvFile(flipped, kFingerprint, &h); }, reason,
                            {"flipped.kv", reason == Reason::Corrupt ? "header at byte 0" : ""});
      } else {
        ++committedFlips;
        problem = kvErrorOf([&] { readKvFile(flipped, kFingerprint, &h); }, Reason::Corrupt,
                            {"flipped.kv", QString::fromStdString(region->name), "damaged"});
      }
      QVERIFY2(problem.isEmpty(), qPrintable(where + problem));
    }
    QVERIFY(committedFlips >= 50);

    // A torn tail: a chunk record and part of its payload from a save that never committed.
    Conversation more = c;
    more.set(c.tokens + ids(5, 9000));
    const fs::path longer = file("flips-longer.kv");
    fs::copy_file(path, longer);
    KvFileWriter::open(longer, h).sync(more.tokens, more.cache);
    const std::string torn = readBytes(longer).substr(0, good.size() + 48 + 40);
    for (int trial = 0; trial < 30; ++trial) {
      const uint64_t at = good.size() + rng() % (torn.size() - good.size());
      std::string bad = torn;
      bad[at] = static_cast<char>(bad[at] ^ (1 << (rng() % 8)));
      writeBytes(flipped, bad);
      EXPECT_STATE(readKvFile(flipped, kFingerprint, &h), h, c.tokens);
    }
  }

  void refusesForeignFiles() {
    const KvFileHeader h = makeHeader(2, {8, 4, 4}, {true, false}, KvPrecision::F32);
    const fs::path path = file("foreign.kv");
    writeTurns(path, h, {3});
    const std::string good = readBytes(path);
    const fs::path bad = file("bad.kv");
    const QString name = QString::fromStdString(bad.string());

    writeBytes(bad, good);
    EXPECT_KV_ERROR(readKvFile(bad, "fedcba9876543210", &h), Reason::OtherModel,
                    {name, "0123456789abcdef", "fedcba9876543210"});
    KvFileHeader other = h;
    other.layerCount = 3;
    other.layerHasIndexKey = {true, false, false};
    EXPECT_KV_ERROR(readKvFile(bad, kFingerprint, &other), Reason::WrongShape,
                    {name, "2 layers", "3 layers"});
    other = h;
    other.dims.indexDim = 8;
    EXPECT_KV_ERROR(readKvFile(bad, kFingerprint, &other), Reason::WrongShape,
                    {name, "index dim 8"});

    std::string future = good;
    future[8] = 2;  // format version 2 (its header checksum is not even looked at)
    writeBytes(bad, future);
    EXPECT_KV_ERROR(readKvFile(bad, kFingerprint, &h), Reason::FutureVersion, {name, "version 2"});

    writeBytes(bad, "{\"this\": \"is a JSON file, not a KV cache\"}");
    EXPECT_KV_ERROR(readKvFile(bad, kFingerprint, &h), Reason::NotKvFile, {name, "STRATAKV"});
    writeBytes(bad, "STRAT");
    EXPECT_KV_ERROR(readKvFile(bad, kFingerprint, &h), Reason::Truncated, {name});
    writeBytes(bad, "");
    EXPECT_KV_ERROR(readKvFile(bad, kFingerprint, &h), Reason::Truncated, {name});
    EXPECT_KV_ERROR(readKvFile(file("absent.kv"), kFingerprint, &h), Reason::Io, {"absent.kv"});
  }
};

QTEST_APPLESS_MAIN(TestKvFile)
#include "test_kv_file.moc"
