// The safetensors reader: files written here byte by byte, read back through every dtype, and
// one row per malformed file asserting an error that names the file and the tensor.
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "io/safetensors.h"
#include "strata/error.h"

using nlohmann::json;
using strata::io::DType;
using strata::io::TensorStore;
namespace fs = std::filesystem;

namespace {

struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  QByteArray data;
};

template <typename T>
QByteArray bytesOf(const std::vector<T>& values) {
  return QByteArray(reinterpret_cast<const char*>(values.data()),
                    static_cast<qsizetype>(values.size() * sizeof(T)));
}

// 8-byte little-endian header length, the header text, then the data section.
QByteArray withHeader(const std::string& header, const QByteArray& data) {
  QByteArray file;
  for (int i = 0; i < 8; ++i) file.append(static_cast<char>((header.size() >> (8 * i)) & 0xFF));
  return file + QByteArray::fromStdString(header) + data;
}

// A well-formed file: tensors laid out back to back in the given order.
QByteArray buildSafetensors(const std::vector<TensorSpec>& tensors,
                            const json& metadata = nullptr) {
  json header = json::object();
  if (!metadata.is_null()) header["__metadata__"] = metadata;
  QByteArray data;
  for (const auto& t : tensors) {
    header[t.name] = {{"dtype", t.dtype},
                      {"shape", t.shape},
                      {"data_offsets", {data.size(), data.size() + t.data.size()}}};
    data += t.data;
  }
  std::string text = header.dump();
  text.append((8 - text.size() % 8) % 8, ' ');  // writers pad the header to 8 bytes
  return withHeader(text, data);
}

void writeFile(const fs::path& path, const QByteArray& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(bytes.constData(), bytes.size());
}

int openFdCount() {
  return static_cast<int>(std::distance(fs::directory_iterator("/proc/self/fd"), {}));
}

// FP8 E4M3 from its definition, independent of the engine's table.
float fp8(int code) {
  const int e = (code >> 3) & 15, m = code & 7;
  const double v = e == 0 ? std::ldexp(m, -9) : std::ldexp(8 + m, e - 10);
  return static_cast<float>(code & 0x80 ? -v : v);
}

// Runs `action`, expecting a strata::Error whose message contains every string in `parts`.
template <typename F>
QString expectError(F action, const QStringList& parts) {
  try {
    action();
  } catch (const strata::Error& e) {
    const QString message = QString::fromUtf8(e.what());
    for (const QString& part : parts) {
      if (!message.contains(part)) {
        return QString("message \"%1\" lacks \"%2\"").arg(message, part);
      }
    }
    return {};
  }
  return "no error was thrown";
}

#define EXPECT_ERROR(action, ...)                                      \
  do {                                                                 \
    const QString problem = expectError([&] { action; }, __VA_ARGS__); \
    QVERIFY2(problem.isEmpty(), qPrintable(problem));                  \
  } while (0)

}  // namespace

class TestSafetensors : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path path(const QString& name) const { return tmp_.filePath(name).toStdString(); }

  // A file exercising every dtype; FP8 [3, 5] with 2x2 blocks has partial blocks both ways.
  fs::path writeMixedFile(const QString& name) const {
    const fs::path file = path(name);
    writeFile(file,
              buildSafetensors(
                  {{"f32", "F32", {2, 3}, bytesOf<float>({1.5f, -2, 0, 1e-30f, 3e38f, -0.0f})},
                   {"bf16", "BF16", {4}, bytesOf<uint16_t>({0x3F80, 0xC040, 0x7F80, 0x0001})},
                   {"f16", "F16", {3}, bytesOf<uint16_t>({0x3C00, 0x0001, 0xFBFF})},
                   {"w.weight",
                    "F8_E4M3",
                    {3, 5},
                    bytesOf<uint8_t>({0x38, 0x40, 0x30, 0x38, 0x38, 0x38, 0xB8, 0x38, 0x38, 0x7E,
                                      0x38, 0x01, 0x38, 0x00, 0xC8})},
                   {"w.weight_scale_inv", "F32", {2, 3}, bytesOf<float>({1, 2, 4, 8, 16, 32})},
                   {"scalar", "F32", {}, bytesOf<float>({42.0f})}},
                  json{{"format", "pt"}}));
    return file;
  }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void readsEveryDtype() {
    const TensorStore store = TensorStore::openFile(writeMixedFile("mixed.safetensors"));
    QCOMPARE(store.names(), (std::vector<std::string>{"bf16", "f16", "f32", "scalar", "w.weight",
                                                      "w.weight_scale_inv"}));
    const auto& info = store.get("f16");
    QCOMPARE(info.dtype, DType::F16);
    QCOMPARE(info.shape, (std::vector<int64_t>{3}));
    QCOMPARE(info.nbytes, uint64_t{6});
    QCOMPARE(store.find("nope"), nullptr);
    QVERIFY(store.contains("w.weight") && !store.contains("w"));

    QCOMPARE(store.readF32("f32", std::vector<int64_t>{2, 3}),
             (std::vector<float>{1.5f, -2, 0, 1e-30f, 3e38f, -0.0f}));
    const auto bf16 = store.readF32("bf16", std::vector<int64_t>{4});
    QCOMPARE(bf16, (std::vector<float>{1, -3, INFINITY, std::ldexp(1.0f, -133)}));
    QCOMPARE(store.readF32("f16", std::vector<int64_t>{3}),
             (std::vector<float>{1, std::ldexp(1.0f, -24), -65504}));
    QCOMPARE(store.readF32("scalar", std::vector<int64_t>{}), std::vector<float>{42});

    // out[r, c] = fp8(w[r, c]) * scale[r / 2, c / 2], with weights decoding to
    // [1, 2, 0.5, 1, 1 | 1, -1, 1, 1, 448 | 1, 2^-9, 1, 0, -4] and scales [[1, 2, 4], [8, 16, 32]].
    const auto w = store.readF32("w.weight", std::vector<int64_t>{3, 5}, {2, 2});
    const std::vector<float> expected{1 * 1, 2 * 1,         0.5f * 2, 1 * 2,  1 * 4,    //
                                      1 * 1, -1 * 1,        1 * 2,    1 * 2,  448 * 4,  //
                                      1 * 8, 8 * fp8(0x01), 1 * 16,   0 * 16, 32 * fp8(0xC8)};
    QCOMPARE(w, expected);
    QCOMPARE(fp8(0xC8), -4.0f);  // the test's own decoder: 0xC8 = -(1.0 * 2^(9 - 7))
  }

  void fp8DefaultBlockIs128() {
    // 130 rows: the second row block holds only rows 128 and 129 (spec §2.4 ceil-division).
    std::vector<uint8_t> weights(130 * 2, 0x38);  // all 1.0
    const fs::path file = path("fp8.safetensors");
    writeFile(file,
              buildSafetensors({{"x.weight", "F8_E4M3", {130, 2}, bytesOf(weights)},
                                {"x.weight_scale_inv", "F32", {2, 1}, bytesOf<float>({0.5f, 3})}}));
    const auto out = TensorStore::openFile(file).readF32("x.weight", std::vector<int64_t>{130, 2});
    QCOMPARE(out[127 * 2 + 1], 0.5f);
    QCOMPARE(out[128 * 2], 3.0f);
    QCOMPARE(out[129 * 2 + 1], 3.0f);
  }

  void readRawReturnsFileBytes() {
    const TensorStore store = TensorStore::openFile(writeMixedFile("raw.safetensors"));
    const auto raw = store.readRaw(store.get("bf16"));
    QCOMPARE(QByteArray(reinterpret_cast<const char*>(raw.data()), raw.size()),
             bytesOf<uint16_t>({0x3F80, 0xC040, 0x7F80, 0x0001}));
  }

  void openDirectoryWithSingleFile() {
    QTemporaryDir dir;
    writeFile(fs::path(dir.path().toStdString()) / "model.safetensors",
              buildSafetensors({{"a", "F32", {1}, bytesOf<float>({7})}}));
    const TensorStore store = TensorStore::openDirectory(dir.path().toStdString());
    QCOMPARE(store.readF32("a", std::vector<int64_t>{1}), std::vector<float>{7});
  }

  void shardedDirectory() {
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    writeFile(root / "model-00001-of-00002.safetensors",
              buildSafetensors({{"a", "F32", {2}, bytesOf<float>({1, 2})},
                                {"b", "BF16", {1}, bytesOf<uint16_t>({0x4000})}}));
    writeFile(root / "model-00002-of-00002.safetensors",
              buildSafetensors({{"c", "F16", {2}, bytesOf<uint16_t>({0x3C00, 0xBC00})}}));
    std::ofstream(root / "model.safetensors.index.json") << R"({"metadata": {"total_size": 14},
      "weight_map": {"a": "model-00001-of-00002.safetensors", "b": "model-00001-of-00002.safetensors",
                     "c": "model-00002-of-00002.safetensors"}})";
    const TensorStore store = TensorStore::openDirectory(root);
    QCOMPARE(store.files().size(), size_t{2});
    QCOMPARE(store.names(), (std::vector<std::string>{"a", "b", "c"}));
    QCOMPARE(store.files()[store.get("c").fileIndex].filename(),
             fs::path("model-00002-of-00002.safetensors"));
    QCOMPARE(store.readF32("b", std::vector<int64_t>{1}), std::vector<float>{2});
    QCOMPARE(store.readF32("c", std::vector<int64_t>{2}), (std::vector<float>{1, -1}));
    EXPECT_ERROR(
        store.get("model.norm.weight"),
        {QString::fromStdString(root.string() + ": tensor 'model.norm.weight' is missing")});
  }

  void movesAndClosesFiles() {
    const fs::path file = writeMixedFile("move.safetensors");
    const int before = openFdCount();
    {
      TensorStore a = TensorStore::openFile(file);
      QCOMPARE(openFdCount(), before + 1);
      TensorStore b = std::move(a);
      QCOMPARE(b.readF32("scalar", std::vector<int64_t>{}), std::vector<float>{42});
      TensorStore c = TensorStore::openFile(file);
      QCOMPARE(openFdCount(), before + 2);
      c = std::move(b);  // c's own file is closed; it now owns b's
      QCOMPARE(openFdCount(), before + 1);
      QCOMPARE(c.readF32("scalar", std::vector<int64_t>{}), std::vector<float>{42});
    }
    QCOMPARE(openFdCount(), before);
    // A failed open must not leak its descriptor either.
    writeFile(path("leak.safetensors"), withHeader("[]", {}));
    EXPECT_ERROR(TensorStore::openFile(path("leak.safetensors")), {"not a JSON object"});
    QCOMPARE(openFdCount(), before);
  }

  void readF32Errors() {
    const fs::path file = path("errors.safetensors");
    const std::string q = "model.layers.0.self_attn.q_a_proj.weight";
    writeFile(file, buildSafetensors({{q, "F32", {32, 64}, QByteArray(32 * 64 * 4, 0)},
                                      {"noscale.weight", "F8_E4M3", {2, 2}, QByteArray(4, 0)},
                                      {"oned.weight", "F8_E4M3", {4}, QByteArray(4, 0)},
                                      {"bad.weight", "F8_E4M3", {3, 5}, QByteArray(15, 0)},
                                      {"bad.weight_scale_inv", "F32", {1, 1}, QByteArray(4, 0)},
                                      {"bf.weight", "F8_E4M3", {3, 5}, QByteArray(15, 0)},
                                      {"bf.weight_scale_inv", "BF16", {2, 3}, QByteArray(12, 0)}}));
    const TensorStore store = TensorStore::openFile(file);
    const QString f = QString::fromStdString(file.string());
    EXPECT_ERROR(
        store.readF32(q, std::vector<int64_t>{32, 65}),
        {f + ": tensor '" + QString::fromStdString(q) + "' has shape [32, 64], expected [32, 65]"});
    EXPECT_ERROR(store.readF32(q, std::vector<int64_t>{32}), {"has shape [32, 64], expected [32]"});
    EXPECT_ERROR(store.readF32("noscale.weight", std::vector<int64_t>{2, 2}),
                 {f,
                  "tensor 'noscale.weight' is FP8 but its scale tensor 'noscale.weight_scale_inv' "
                  "is missing"});
    EXPECT_ERROR(store.readF32("oned.weight", std::vector<int64_t>{4}),
                 {f, "tensor 'oned.weight': FP8 weights must be 2-D, got shape [4]"});
    EXPECT_ERROR(store.readF32("bad.weight", std::vector<int64_t>{3, 5}, {2, 2}),
                 {f, "scale tensor 'bad.weight_scale_inv' is F32 [1, 1], expected F32 [2, 3]"});
    EXPECT_ERROR(store.readF32("bf.weight", std::vector<int64_t>{3, 5}, {2, 2}),
                 {f, "scale tensor 'bf.weight_scale_inv' is BF16 [2, 3], expected F32 [2, 3]"});
    EXPECT_ERROR(store.readF32("absent", std::vector<int64_t>{1}),
                 {f + ": tensor 'absent' is missing"});
  }

  void fileTruncatedAfterOpen() {
    const fs::path file = writeMixedFile("shrinks.safetensors");
    const TensorStore store = TensorStore::openFile(file);
    fs::resize_file(file, fs::file_size(file) - 20);  // cuts into w.weight_scale_inv and scalar
    EXPECT_ERROR(store.readRaw(store.get("scalar")),
                 {QString::fromStdString(file.string()), "tensor 'scalar'", "file truncated?"});
  }

  void openErrors() {
    EXPECT_ERROR(TensorStore::openFile(path("absent.safetensors")),
                 {"absent.safetensors: cannot open: No such file or directory"});
    EXPECT_ERROR(TensorStore::openFile(tmp_.path().toStdString()), {"not a regular file"});
    QTemporaryDir empty;
    EXPECT_ERROR(
        TensorStore::openDirectory(empty.path().toStdString()),
        {empty.path() + ": neither model.safetensors.index.json nor model.safetensors exists"});
  }

  void malformedFile_data() {
    QTest::addColumn<QByteArray>("file");
    QTest::addColumn<QStringList>("expected");
    auto row = [](const char* name, const QByteArray& file, const QStringList& expected) {
      QTest::newRow(name) << file << expected;
    };
    auto one = [](const std::string& entry, int dataBytes = 64) {
      return withHeader(R"({"w": )" + entry + "}", QByteArray(dataBytes, 0));
    };
    row("empty", {}, {"file is 0 bytes, too short for the 8-byte safetensors header length"});
    row("5 bytes", "abcde", {"file is 5 bytes, too short"});
    QByteArray pastEnd = withHeader("{}", {});
    pastEnd[0] = 100;
    row("header past end", pastEnd, {"header length 100 runs past the end of the file (10 bytes)"});
    QByteArray huge = withHeader("{}", {});
    huge[0] = 0, huge[3] = 0x10;  // 0x10000000 = 256 MiB
    row("header absurd", huge, {"header length 268435456 is absurdly large (> 100 MB)"});
    row("not JSON", withHeader("{not json", {}), {"header is not valid JSON"});
    row("not object", withHeader("[1, 2]", {}), {"header is not a JSON object"});
    row("entry not object", one("3"), {"tensor 'w': entry must be an object, got 3"});
    row("no dtype", one(R"({"shape": [2], "data_offsets": [0, 8]})"),
        {"tensor 'w': missing \"dtype\""});
    row("no shape", one(R"({"dtype": "F32", "data_offsets": [0, 8]})"),
        {"tensor 'w': missing \"shape\""});
    row("no offsets", one(R"({"dtype": "F32", "shape": [2]})"),
        {"tensor 'w': missing \"data_offsets\""});
    row("dtype type", one(R"({"dtype": 5, "shape": [2], "data_offsets": [0, 8]})"),
        {"tensor 'w': \"dtype\" must be a string, got 5"});
    row("I64", one(R"({"dtype": "I64", "shape": [2], "data_offsets": [0, 16]})"),
        {"tensor 'w': dtype I64 is not supported; expected F32, BF16, F16, F8_E4M3, I8 or U8"});
    row("F8_E5M2", one(R"({"dtype": "F8_E5M2", "shape": [2], "data_offsets": [0, 2]})"),
        {"tensor 'w': dtype F8_E5M2 is not supported"});
    row("shape type", one(R"({"dtype": "F32", "shape": 2, "data_offsets": [0, 8]})"),
        {"tensor 'w': \"shape\" must be an array, got 2"});
    row("shape string dim", one(R"({"dtype": "F32", "shape": ["2"], "data_offsets": [0, 8]})"),
        {"tensor 'w': \"shape\" entries must be integers, got \"2\""});
    row("shape float dim", one(R"({"dtype": "F32", "shape": [2.5], "data_offsets": [0, 8]})"),
        {"tensor 'w': \"shape\" entries must be integers, got 2.5"});
    row("negative dim", one(R"({"dtype": "F32", "shape": [-1, 4], "data_offsets": [0, 16]})"),
        {"tensor 'w': negative dimension -1 in shape [-1,4]"});
    row("offsets length", one(R"({"dtype": "F32", "shape": [2], "data_offsets": [0]})"),
        {"tensor 'w': \"data_offsets\" must be [begin, end] with non-negative integers, got [0]"});
    row("offsets negative", one(R"({"dtype": "F32", "shape": [2], "data_offsets": [-8, 0]})"),
        {"tensor 'w': \"data_offsets\" must be [begin, end]"});
    row("offsets strings", one(R"({"dtype": "F32", "shape": [2], "data_offsets": ["0", "8"]})"),
        {"tensor 'w': \"data_offsets\" must be [begin, end]"});
    row("begin after end", one(R"({"dtype": "F32", "shape": [0], "data_offsets": [8, 4]})"),
        {"tensor 'w': \"data_offsets\" [8,4] has begin > end"});
    row("size mismatch", one(R"({"dtype": "F32", "shape": [2], "data_offsets": [0, 4]})"),
        {"tensor 'w': data_offsets [0, 4] span 4 bytes, but F32 [2] needs 8 bytes"});
    row("size overflow",
        one(R"({"dtype": "F32", "shape": [4611686018427387904, 8], "data_offsets": [0, 8]})"),
        {"tensor 'w':", "needs more than 2^64 bytes"});
    row("data past end", one(R"({"dtype": "F32", "shape": [32], "data_offsets": [0, 128]})"),
        {"tensor 'w': data ends at byte", "past the end of the file", "file truncated?"});
    QByteArray truncated = buildSafetensors(
        {{"a", "F32", {2}, bytesOf<float>({1, 2})}, {"b", "F32", {2}, bytesOf<float>({3, 4})}});
    truncated.chop(3);
    row("truncated file", truncated, {"tensor 'b': data ends at byte", "file truncated?"});
    row("overlap",
        withHeader(R"({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                       "z": {"dtype": "F32", "shape": [1], "data_offsets": [12, 16]},
                       "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}})",
                   QByteArray(16, 0)),
        {"tensors 'a' and 'b' overlap in the data section"});
    row("duplicate name",
        withHeader(R"({"w": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]},
                       "w": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}})",
                   QByteArray(8, 0)),
        {"tensor 'w' appears twice in the header"});
    row("metadata not object", withHeader(R"({"__metadata__": "pt"})", {}),
        {"\"__metadata__\" must be an object of strings, got \"pt\""});
    row("metadata value", withHeader(R"({"__metadata__": {"format": 1}})", {}),
        {"\"__metadata__\" value for 'format' must be a string, got 1"});
  }

  void malformedFile() {
    QFETCH(QByteArray, file);
    QFETCH(QStringList, expected);
    const fs::path bad = path("bad.safetensors");
    writeFile(bad, file);
    expected.prepend(QString::fromStdString(bad.string()) + ": ");
    EXPECT_ERROR(TensorStore::openFile(bad), expected);
  }

  void malformedIndex_data() {
    QTest::addColumn<QByteArray>("index");
    QTest::addColumn<QStringList>("expected");
    QTest::newRow("missing shard")
        << QByteArray(R"({"weight_map": {"x": "a.safetensors", "w": "missing.safetensors"}})")
        << QStringList{
               "index.json: shard 'missing.safetensors' (listed for tensor 'w') does not exist"};
    QTest::newRow("absent from shard")
        << QByteArray(R"({"weight_map": {"x": "a.safetensors", "q": "b.safetensors"}})")
        << QStringList{
               "index.json: tensor 'q' is listed in weight_map under 'b.safetensors' but is "
               "absent from that shard"};
    QTest::newRow("listed in the wrong shard")
        << QByteArray(R"({"weight_map": {"x": "b.safetensors", "z": "b.safetensors"}})")
        << QStringList{"tensor 'x' is listed in weight_map under 'b.safetensors' but is absent"};
    QTest::newRow("parent dir") << QByteArray(R"({"weight_map": {"x": "../a.safetensors"}})")
                                << QStringList{
                                       "shard file name '../a.safetensors' for tensor 'x' escapes "
                                       "the checkpoint directory"};
    QTest::newRow("nested parent")
        << QByteArray(R"({"weight_map": {"x": "sub/../../a.safetensors"}})")
        << QStringList{"shard file name 'sub/../../a.safetensors' for tensor 'x' escapes"};
    QTest::newRow("absolute") << QByteArray(R"({"weight_map": {"x": "/etc/passwd"}})")
                              << QStringList{
                                     "shard file name '/etc/passwd' for tensor 'x' escapes"};
    QTest::newRow("tensor in two shards")
        << QByteArray(
               R"({"weight_map": {"x": "a.safetensors", "y": "a.safetensors", "u": "c.safetensors"}})")
        << QStringList{"c.safetensors: tensor 'y' is also in",
                       "a.safetensors; each tensor must be in one shard"};
    QTest::newRow("not JSON") << QByteArray("{\"weight_map\": ")
                              << QStringList{"model.safetensors.index.json: not valid JSON"};
    QTest::newRow("no weight_map")
        << QByteArray(R"({"metadata": {}})")
        << QStringList{"index.json: expected an object with a \"weight_map\" object"};
    QTest::newRow("entry not string")
        << QByteArray(R"({"weight_map": {"x": 3}})")
        << QStringList{"weight_map entry for tensor 'x' must be a file name string, got 3"};
    QTest::newRow("bad shard header")
        << QByteArray(R"({"weight_map": {"x": "broken.safetensors"}})")
        << QStringList{"broken.safetensors: file is 3 bytes"};
  }

  void malformedIndex() {
    QFETCH(QByteArray, index);
    QFETCH(QStringList, expected);
    QTemporaryDir dir;
    const fs::path root = dir.path().toStdString();
    const QByteArray four = bytesOf<float>({1});
    writeFile(root / "a.safetensors",
              buildSafetensors({{"x", "F32", {1}, four}, {"y", "F32", {1}, four}}));
    writeFile(root / "b.safetensors", buildSafetensors({{"z", "F32", {1}, four}}));
    writeFile(root / "c.safetensors",
              buildSafetensors({{"u", "F32", {1}, four}, {"y", "F32", {1}, four}}));
    writeFile(root / "broken.safetensors", "abc");
    writeFile(root / "model.safetensors.index.json", index);
    EXPECT_ERROR(TensorStore::openDirectory(root), expected);
  }
};

QTEST_APPLESS_MAIN(TestSafetensors)
#include "test_safetensors.moc"
