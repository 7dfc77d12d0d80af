// The container format on its own: a container written through ContainerWriter reads back with
// the same metadata and bytes; its files satisfy the strict safetensors rules (checked here by
// an independent parser); experts sit 4096-aligned and come back with one pread; truncation and
// flipped bytes are caught with errors naming the file, tensor, layer and expert.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "checkpoint_writer.h"
#include "error_check.h"
#include "fixtures.h"
#include "io/container.h"
#include "io/container_writer.h"
#include "quant/int_quant.h"
#include "strata/convert.h"
#include "strata/error.h"

namespace fs = std::filesystem;
using namespace strata::io;
namespace quant = strata::quant;

namespace {

#define EXPECT_ERROR(action, ...)                                  \
  do {                                                             \
    const QString problem = errorOf([&] { action; }, __VA_ARGS__); \
    QVERIFY2(problem.isEmpty(), qPrintable(problem));              \
  } while (0)

std::vector<float> randomValues(int64_t count, uint64_t seed) {
  testckpt::Random rng(seed);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = rng.normal(0.5f);
  return v;
}

void flipByte(const fs::path& file, uint64_t offset) {
  std::string bytes = testckpt::readBytes(file);
  bytes[offset] = static_cast<char>(bytes[offset] ^ 0x10);
  testckpt::writeBytes(file, bytes);
}

// Strict safetensors rules as the reference (Rust) reader applies them: a JSON object header,
// known dtypes, sizes matching shapes, tensors covering the data section back to back from 0 to
// the end of the file.
QString strictSafetensorsProblem(const fs::path& file) {
  const std::string bytes = testckpt::readBytes(file);
  if (bytes.size() < 8) return "too short";
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[i]);
  if (8 + n > bytes.size() || bytes[8] != '{') return "bad header length or start";
  const auto header = nlohmann::json::parse(bytes.substr(8, n));
  std::vector<std::pair<uint64_t, uint64_t>> ranges;
  const std::map<std::string, uint64_t> sizes = {{"U8", 1}, {"I8", 1}, {"BF16", 2}, {"F32", 4}};
  for (const auto& [name, t] : header.items()) {
    if (name == "__metadata__") {
      for (const auto& [k, v] : t.items())
        if (!v.is_string()) return QString::fromStdString("metadata " + k + " not a string");
      continue;
    }
    const auto size = sizes.find(t.at("dtype").get<std::string>());
    if (size == sizes.end()) return QString::fromStdString(name + ": unexpected dtype");
    uint64_t count = 1;
    for (const auto& d : t.at("shape")) count *= d.get<uint64_t>();
    const uint64_t begin = t.at("data_offsets")[0], end = t.at("data_offsets")[1];
    if (end - begin != count * size->second) return QString::fromStdString(name + ": size");
    ranges.emplace_back(begin, end);
  }
  std::sort(ranges.begin(), ranges.end());
  uint64_t at = 0;
  for (const auto& [begin, end] : ranges) {
    if (begin != at) return QString("hole or overlap at %1").arg(at);
    at = end;
  }
  if (8 + n + at != bytes.size()) return "data section does not end at the end of the file";
  return {};
}

}  // namespace

class TestContainer : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  fs::path converted_;  // tiny-fp8, default policy
  int counter_ = 0;

  fs::path copyOfConverted() {
    const fs::path copy =
        fs::path(tmp_.path().toStdString()) / ("copy" + std::to_string(++counter_));
    fs::copy(converted_, copy, fs::copy_options::recursive);
    return copy;
  }

 private slots:
  void initTestCase() {
    QVERIFY(tmp_.isValid());
    converted_ = fs::path(tmp_.path().toStdString()) / "tiny-fp8";
    strata::ConvertOptions o;
    o.input = fixtures::dataDir() / "tiny-fp8";
    o.output = converted_;
    strata::convertModel(o);
  }

  void writtenMetadataAndBytesReadBack() {
    const fs::path dir = fs::path(tmp_.path().toStdString()) / "handmade";
    fs::create_directories(dir);
    const ContainerIdentity id{"xxh3-128:0123456789abcdef0123456789abcdef", R"({"name":"test"})",
                               "test-writer"};
    ContainerFile resident;
    resident.name = kResidentFileName;
    resident.tensors = {TensorEntry::make("a.int8", {5, 200}, QuantFormat::Int8, 0),
                        TensorEntry::make("b.int4", {3, 100}, QuantFormat::Int4, 32),
                        TensorEntry::make("c.f32", {7}, QuantFormat::F32, 0),
                        TensorEntry::make("d.bf16", {2, 3}, QuantFormat::BF16, 0)};
    ContainerFile experts;
    experts.name = expertFileName(5);
    experts.role = FileRole::Experts;
    experts.layer = 5;
    for (int e = 0; e < 3; ++e) {
      ExpertEntry entry;
      entry.expert = e;
      for (int p = 0; p < 3; ++p) {
        entry.tensors[p] = static_cast<int>(experts.tensors.size());
        const std::vector<int64_t> shape =
            p < 2 ? std::vector<int64_t>{40, 96} : std::vector<int64_t>{96, 40};
        experts.tensors.push_back(TensorEntry::make(
            "model.layers.5.mlp.experts." + std::to_string(e) + "." + std::to_string(p), shape,
            QuantFormat::Int4, 64));
      }
      experts.experts.push_back(entry);
    }
    std::vector<ContainerFile> files = {resident, experts};
    for (ContainerFile& f : files) layoutFile(f, id);

    // Data: quantized random matrices; the f32/bf16 tensors hold raw values.
    ContainerWriter writer(dir, files, {false, false});
    std::map<std::string, quant::QuantizedMatrix> written;
    std::map<std::string, std::string> rawValues;
    uint64_t seed = 1;
    for (size_t f = 0; f < files.size(); ++f)
      for (TensorEntry& t : files[f].tensors) {
        const std::vector<float> v = randomValues(t.rows() * t.cols(), seed++);
        std::string data;
        if (isInteger(t.format)) {
          const auto m = quant::quantizeMatrix(
              v.data(), t.rows(), t.cols(),
              t.format == QuantFormat::Int8 ? quant::IntFormat::Int8 : quant::IntFormat::Int4,
              t.groupSize == t.paddedCols ? 0 : t.groupSize);
          written[t.name] = m;
          data.assign(reinterpret_cast<const char*>(m.data.data()), m.data.size());
          const std::string scales(static_cast<const char*>(m.scaleData()),
                                   static_cast<size_t>(m.scaleBytes()));
          writer.write(static_cast<int>(f), t.scalesOffset, std::as_bytes(std::span(scales)));
          t.scalesChecksum = XXH3_64bits(scales.data(), scales.size());
        } else if (t.format == QuantFormat::F32) {
          data.assign(reinterpret_cast<const char*>(v.data()), v.size() * 4);
        } else {
          for (float x : v) {
            const uint16_t bits = quant::f32ToBf16(x);
            data.append(reinterpret_cast<const char*>(&bits), 2);
          }
        }
        rawValues[t.name] = data;
        writer.write(static_cast<int>(f), t.dataOffset, std::as_bytes(std::span(data)));
        t.dataChecksum = XXH3_64bits(data.data(), data.size());
      }
    for (ExpertEntry& e : files[1].experts) {
      const std::string bytes = testckpt::readBytes(dir / files[1].name);
      e.checksum = XXH3_64bits(bytes.data() + files[1].headerBytes + e.dataOffset, e.bytes);
    }
    writer.finish(files, id, {});

    const Container c = Container::open(dir);
    QCOMPARE(c.manifest().identity.sourceFingerprint, id.sourceFingerprint);
    QCOMPARE(c.manifest().identity.policy, id.policy);
    QCOMPARE(c.tensors().size(), size_t{13});
    const ContainerTensor& b = c.get("b.int4");
    QCOMPARE(b.entry.format, QuantFormat::Int4);
    QCOMPARE(b.entry.groupSize, int64_t{32});
    QCOMPARE(b.entry.paddedCols, int64_t{128});
    QCOMPARE(b.entry.shape, (std::vector<int64_t>{3, 100}));
    QCOMPARE(c.get("a.int8").entry.groupSize, int64_t{256});  // per row: one group
    QCOMPARE(c.get("c.f32").entry.shape, std::vector<int64_t>{7});
    for (const auto& [name, m] : written) {
      const quant::QuantizedMatrix r = c.readQuantized(name);
      QVERIFY2(r.data == m.data && r.scales == m.scales && r.bf16Scales == m.bf16Scales &&
                   r.rows == m.rows && r.cols == m.cols && r.paddedCols == m.paddedCols &&
                   r.groupSize == m.groupSize,
               name.c_str());
    }
    const std::vector<float> f = c.readF32("c.f32");
    QCOMPARE(std::string(reinterpret_cast<const char*>(f.data()), f.size() * 4),
             rawValues["c.f32"]);
    QCOMPARE(c.readF32("d.bf16")[4], quant::bf16ToF32(quant::f32ToBf16(randomValues(6, 4)[4])));
    QCOMPARE(c.expertLayers(), std::vector<int>{5});
    QCOMPARE(c.expertCount(5), 3);
    const ExpertMatrices m = c.readExpert(5, 2);
    QVERIFY(m.down.data == written["model.layers.5.mlp.experts.2.2"].data);
    QVERIFY(m.up.scales == written["model.layers.5.mlp.experts.2.1"].scales &&
            m.up.bf16Scales == written["model.layers.5.mlp.experts.2.1"].bf16Scales);
    for (const fs::path& file : c.files())
      QVERIFY2(strictSafetensorsProblem(file).isEmpty(),
               qPrintable(strictSafetensorsProblem(file)));
  }

  void convertedFilesAreStrictSafetensorsWithMetadata() {
    const Container c = Container::open(converted_);
    QCOMPARE(c.files().size(), size_t{3});  // resident, layer 1, MTP layer 3
    for (const fs::path& file : c.files()) {
      QVERIFY2(strictSafetensorsProblem(file).isEmpty(),
               qPrintable(strictSafetensorsProblem(file)));
      const TensorStore store = TensorStore::openFile(file);
      const auto& meta = store.metadata(0);
      QCOMPARE(meta.at("format"), std::string("strata-container"));
      QCOMPARE(meta.at("format_version"), std::to_string(kContainerVersion));
      QCOMPARE(meta.at("source_fingerprint"), c.manifest().identity.sourceFingerprint);
      QCOMPARE(nlohmann::json::parse(meta.at("policy")).at("routed_experts").get<std::string>(),
               std::string("int4-g32"));
      const auto tensors = nlohmann::json::parse(meta.at("tensors"));
      for (const auto& [name, entry] : tensors.items()) {
        QVERIFY(entry.contains("format") && entry.contains("shape") && entry.contains("xxh3"));
        const QuantFormat format = c.get(name).entry.format;
        QCOMPARE(std::string(quantFormatName(format)), entry["format"].get<std::string>());
        // Scales: f32 for int8, bf16 (half the bytes) for int4.
        if (isInteger(format))
          QCOMPARE(dtypeName(store.find(name + ".scales")->dtype),
                   std::string_view(format == QuantFormat::Int4 ? "BF16" : "F32"));
      }
    }
    const auto q = c.get("model.layers.1.mlp.experts.4.up_proj.weight");
    QCOMPARE(q.entry.format, QuantFormat::Int4);
    QCOMPARE(q.entry.groupSize, int64_t{32});
    QCOMPARE(q.layer, 1);
    QCOMPARE(q.expert, 4);
  }

  void expertsAreAlignedAndReadInOnePread() {
    const Container c = Container::open(converted_);
    QCOMPARE(c.expertLayers(), (std::vector<int>{1, 3}));
    for (int layer : c.expertLayers())
      for (int e = 0; e < c.expertCount(layer); ++e) {
        const ExpertLocation& loc = c.expert(layer, e);
        QCOMPARE(loc.offset % kExpertAlignment, uint64_t{0});
        QCOMPARE(loc.span % kExpertAlignment, uint64_t{0});
        QVERIFY(loc.span >= loc.bytes && loc.span - loc.bytes < kExpertAlignment);
        // gate codes, gate scales, up codes, ..., down scales: adjacent, in that order.
        uint64_t at = loc.offset;
        for (int p = 0; p < 3; ++p) {
          const ContainerTensor& t = c.tensors()[static_cast<size_t>(loc.tensors[p])];
          QCOMPARE(t.dataOffset, at);
          QCOMPARE(t.scalesOffset, at + t.entry.dataBytes());
          at = t.scalesOffset + t.entry.scalesBytes();
        }
        QCOMPARE(at, loc.offset + loc.bytes);
      }

    // One pread of the span (O_DIRECT where the filesystem allows it) holds the whole expert.
    const ExpertLocation& loc = c.expert(1, 5);
    int fd = ::open(loc.file.c_str(), O_RDONLY | O_DIRECT);
    const bool direct = fd >= 0;
    if (!direct) fd = ::open(loc.file.c_str(), O_RDONLY);
    QVERIFY(fd >= 0);
    void* buffer = std::aligned_alloc(kExpertAlignment, loc.span);
    const ssize_t got = ::pread(fd, buffer, loc.span, static_cast<off_t>(loc.offset));
    ::close(fd);
    QCOMPARE(got, static_cast<ssize_t>(loc.span));
    const ExpertMatrices m = c.decodeExpert(loc, {static_cast<const std::byte*>(buffer), loc.span});
    {
      // The same expert as views into the read buffer (what the expert store streams): the
      // same codes and scales, at addresses inside the buffer, kept alive by the owner.
      const auto owner = std::make_shared<int>(0);
      const ExpertMatrices v =
          c.viewExpert(loc, {static_cast<const std::byte*>(buffer), loc.span}, owner);
      QCOMPARE(owner.use_count(), 4L);
      for (auto [view, copy] : {std::pair{&v.gate, &m.gate}, {&v.up, &m.up}, {&v.down, &m.down}}) {
        QVERIFY(view->data.empty() && view->scales.empty() && view->bf16Scales.empty());
        const auto* at = reinterpret_cast<const std::byte*>(view->codes());
        QVERIFY(at >= static_cast<const std::byte*>(buffer) &&
                at + view->codeBytes() <= static_cast<const std::byte*>(buffer) + loc.span);
        QVERIFY(std::memcmp(view->codes(), copy->codes(), static_cast<size_t>(copy->codeBytes())) == 0);
        QVERIFY(std::memcmp(view->scaleData(), copy->scaleData(),
                            static_cast<size_t>(copy->scaleBytes())) == 0);
        QCOMPARE(view->bytes(), copy->bytes());
      }
    }
    std::free(buffer);
    if (!direct) qInfo("O_DIRECT is not supported here; read with plain pread");
    const auto gate = c.readQuantized("model.layers.1.mlp.experts.5.gate_proj.weight");
    const auto down = c.readQuantized("model.layers.1.mlp.experts.5.down_proj.weight");
    QVERIFY(m.gate.data == gate.data && m.gate.scales == gate.scales &&
            m.gate.bf16Scales == gate.bf16Scales);
    QVERIFY(m.down.data == down.data && m.down.scales == down.scales &&
            m.down.bf16Scales == down.bf16Scales);
    QCOMPARE(m.down.rows, int64_t{160});
    QCOMPARE(m.down.cols, int64_t{16});
  }

  void truncatedContainerIsDetected() {
    const fs::path dir = copyOfConverted();
    fs::resize_file(dir / "experts-001.safetensors",
                    fs::file_size(dir / "experts-001.safetensors") - 100);
    EXPECT_ERROR(Container::open(dir), {"experts-001.safetensors", "truncated"});

    const fs::path dir2 = copyOfConverted();
    fs::resize_file(dir2 / "resident.safetensors", 4000);
    EXPECT_ERROR(Container::open(dir2), {"resident.safetensors", "truncated"});

    const fs::path dir3 = copyOfConverted();
    fs::remove(dir3 / kManifestName);
    EXPECT_ERROR(Container::open(dir3), {"strata-container.json is missing", "not finished"});
  }

  void flippedResidentByteNamesTheTensor() {
    const fs::path dir = copyOfConverted();
    const std::string name = "model.layers.0.self_attn.o_proj.weight";
    const uint64_t at = Container::open(dir).get(name).dataOffset + 77;
    flipByte(dir / kResidentFileName, at);
    const Container c = Container::open(dir);  // data is verified at load, not at open
    EXPECT_ERROR(c.readF32(name),
                 {"resident.safetensors", "tensor '" + QString::fromStdString(name) + "'",
                  "checksum mismatch in its codes"});
    EXPECT_ERROR(c.readQuantized(name), {"checksum mismatch"});
    QCOMPARE(c.readF32("model.layers.0.self_attn.q_a_proj.weight").size(), size_t{48 * 160});

    const fs::path dir2 = copyOfConverted();
    const std::string norm = "model.norm.weight";
    flipByte(dir2 / kResidentFileName, Container::open(dir2).get(norm).dataOffset + 3);
    EXPECT_ERROR(Container::open(dir2).readF32(norm), {"model.norm.weight", "checksum mismatch"});
  }

  // Rows read one at a time from the file (the embedding table's way, io/tensor_rows.h) equal
  // the rows of the whole tensor read at once, in every stored format: int8 and the float
  // formats (default policy), int4 (int4-g32 policy).
  void tensorRowsEqualTheWholeTensor() {
    const fs::path int4 = fs::path(tmp_.path().toStdString()) / "tiny-fp8-int4";
    strata::ConvertOptions o;
    o.input = fixtures::dataDir() / "tiny-fp8";
    o.output = int4;
    o.policy = "int4-g32";
    strata::convertModel(o);
    std::set<QuantFormat> formats;
    for (const fs::path& dir : {converted_, int4}) {
      const Container c = Container::open(dir);
      for (const ContainerTensor& t : c.tensors()) {
        if (t.expert >= 0 || t.entry.shape.size() != 2) continue;
        const std::vector<float> whole = c.readF32(t.name());
        const auto rows = c.tensorRows(t.name());
        const int64_t cols = rows->cols();
        std::vector<float> row(static_cast<size_t>(cols));
        for (int64_t r = 0; r < rows->rows(); ++r) {
          rows->row(r, row.data());
          QVERIFY2(std::equal(row.begin(), row.end(), whole.begin() + r * cols),
                   qPrintable(QString::fromStdString(t.name()) + " row " + QString::number(r)));
        }
        formats.insert(t.entry.format);
      }
    }
    QVERIFY(formats.count(QuantFormat::Int8) && formats.count(QuantFormat::Int4));
    QVERIFY(formats.count(QuantFormat::BF16) || formats.count(QuantFormat::F32));
  }

  // A corrupt table is caught when its rows are opened (its checksums streamed); a row out of
  // range, and a file cut short after opening, are errors naming the tensor.
  void tensorRowsRefuseBadData() {
    const std::string name = "model.embed_tokens.weight";
    const fs::path dir = copyOfConverted();
    flipByte(dir / kResidentFileName, Container::open(dir).get(name).dataOffset + 100);
    EXPECT_ERROR(Container::open(dir).tensorRows(name),
                 {"resident.safetensors", "model.embed_tokens.weight", "checksum mismatch"});

    const fs::path dir2 = copyOfConverted();
    const Container c = Container::open(dir2);
    const auto rows = c.tensorRows(name);
    std::vector<float> row(static_cast<size_t>(rows->cols()));
    EXPECT_ERROR(rows->row(rows->rows(), row.data()),
                 {"model.embed_tokens.weight", "out of range"});
    EXPECT_ERROR(rows->row(-1, row.data()), {"out of range"});
    rows->row(rows->rows() - 1, row.data());
    fs::resize_file(dir2 / kResidentFileName, c.get(name).dataOffset + 10);
    EXPECT_ERROR(rows->row(rows->rows() - 1, row.data()),
                 {"resident.safetensors", "model.embed_tokens.weight", "file truncated?"});
  }

  void flippedExpertByteNamesLayerAndExpert() {
    const fs::path dir = copyOfConverted();
    const ContainerTensor up =
        Container::open(dir).get("model.layers.1.mlp.experts.6.up_proj.weight");
    flipByte(dir / "experts-001.safetensors", up.scalesOffset + 5);
    const Container c = Container::open(dir);
    EXPECT_ERROR(c.readExpert(1, 6), {"experts-001.safetensors", "layer 1 expert 6",
                                      "checksum mismatch", "up_proj scales"});
    c.readExpert(1, 5);  // its neighbours are intact
    c.readExpert(1, 7);
  }

  // Version 1 stored int4 scales as f32: such a container is refused with what to do.
  void olderFormatAsksForAConversion() {
    const fs::path dir = copyOfConverted();
    std::string manifest = testckpt::readBytes(dir / kManifestName);
    const std::string current = "\"format_version\": " + std::to_string(kContainerVersion);
    const size_t at = manifest.find(current);
    QVERIFY2(at != std::string::npos, manifest.c_str());
    manifest.replace(at, current.size(), "\"format_version\": 1");
    testckpt::writeBytes(dir / kManifestName, manifest);
    EXPECT_ERROR(Container::open(dir),
                 {"container format version 1", "older Strata", "convert it again"});
  }

  void changedHeaderIsDetected() {
    const fs::path dir = copyOfConverted();
    // A byte inside the JSON text of the header (a digit of a checksum in the metadata).
    const std::string bytes = testckpt::readBytes(dir / "experts-003.safetensors");
    const size_t at = bytes.find("xxh3");
    QVERIFY(at != std::string::npos);
    flipByte(dir / "experts-003.safetensors", at + 12);
    EXPECT_ERROR(Container::open(dir), {"experts-003.safetensors"});
  }
};

QTEST_APPLESS_MAIN(TestContainer)
#include "test_container.moc"
