// The converter end to end on the reference checkpoints (tiny-fp8: FP8 with block scales, one
// file; tiny-dsa: BF16, two shards): every tensor lands in the format the policy names and
// within the quantization error bound computed here from the source values; an interrupted
// and resumed conversion equals an uninterrupted one byte for byte; --delete-input removes a
// shard only after everything read from it is journaled; malformed inputs get specific errors.
#include <QTemporaryDir>
#include <QTest>
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "checkpoint_writer.h"
#include "convert/converter.h"
#include "convert/disk_space.h"
#include "convert/source.h"
#include "error_check.h"
#include "fixtures.h"
#include "io/container.h"
#include "io/safetensors.h"
#include "quant/convert.h"
#include "strata/convert.h"
#include "strata/error.h"

namespace fs = std::filesystem;
using strata::ConvertOptions;
using strata::ConvertProgress;
using strata::io::Container;

namespace {

struct SimulatedKill {};

fs::path fixture(const std::string& name) { return fixtures::dataDir() / name; }

strata::ConvertReport convert(const fs::path& in, const fs::path& out,
                              const std::string& policy = "default", int stopAfter = -1,
                              uint64_t commitBytes = uint64_t{256} << 20, int threads = 0,
                              bool deleteInput = false) {
  ConvertOptions o;
  o.input = in;
  o.output = out;
  o.policy = policy;
  o.commitBytes = commitBytes;
  o.threads = threads;
  o.deleteInput = deleteInput;
  o.keepJournal = deleteInput;
  int seen = 0;
  return strata::convertModel(o, [&](const ConvertProgress& p) {
    if (p.phase == ConvertProgress::Phase::Converting && ++seen == stopAfter) throw SimulatedKill{};
  });
}

// Every file under `dir` but the work directory: relative name -> bytes.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
  std::map<std::string, std::string> files;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    if (e.is_regular_file() && rel.rfind(strata::convert::kWorkDirName, 0) != 0)
      files[rel] = testckpt::readBytes(e.path());
  }
  return files;
}

// The documented policy, written out independently of convert/policy.cpp: "<format>" with
// group size (0 = per row) for integer formats.
std::pair<std::string, int64_t> expectedFormat(const std::string& name, strata::io::DType dtype,
                                               int mtpLayer, const std::string& policy) {
  auto has = [&](const char* part) { return name.find(part) != std::string::npos; };
  const bool mtp = has(("model.layers." + std::to_string(mtpLayer) + ".").c_str());
  const std::string exact = dtype == strata::io::DType::BF16 ? "bf16" : "f32";
  if (has("norm.") || has("mlp.gate.") || has("weights_proj") || has("eh_proj")) return {exact, 0};
  if (name == "model.embed_tokens.weight" || name == "lm_head.weight" || mtp) return {"int8", 0};
  if (policy == "int8") return {"int8", 0};
  if (policy == "int4-row") return {"int4", 0};
  if (policy.rfind("int4-g", 0) == 0) return {"int4", std::stoi(policy.substr(6))};
  return has(".mlp.experts.") ? std::pair<std::string, int64_t>{"int4", 32}
                              : std::pair<std::string, int64_t>{"int8", 0};
}

// |dequantized - source| <= s/2 per value, s = max|w| / qmax over the value's group of columns
// (computed here from the source), with f32 rounding slack. Returns the first violation.
QString checkBound(const std::string& name, const std::vector<float>& src,
                   const std::vector<float>& deq, int64_t rows, int64_t cols, int64_t group,
                   int qmax) {
  if (src.size() != deq.size()) return QString::fromStdString(name + ": size differs");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t g0 = 0; g0 < cols; g0 += group) {
      const int64_t g1 = std::min(cols, g0 + group);
      float amax = 0;
      for (int64_t c = g0; c < g1; ++c) amax = std::max(amax, std::fabs(src[r * cols + c]));
      // Half a step; int4 stores the step rounded to bf16 (quant/int_quant.h).
      const float step =
          qmax == 7 ? strata::quant::bf16ToF32(strata::quant::f32ToBf16(amax / qmax)) : amax / qmax;
      const float bound = 0.5f * step * (1 + 1e-5f) + 1e-30f;
      for (int64_t c = g0; c < g1; ++c)
        if (std::fabs(deq[r * cols + c] - src[r * cols + c]) > bound)
          return QString("%1 [%2, %3]: |%4 - %5| > %6")
              .arg(QString::fromStdString(name))
              .arg(r)
              .arg(c)
              .arg(deq[r * cols + c])
              .arg(src[r * cols + c])
              .arg(bound);
    }
  return {};
}

// The unit of work that converts a source tensor: its expert, or the tensor itself.
std::string unitOf(std::string name) {
  const std::string suffix = "_scale_inv";
  if (name.size() > suffix.size() && name.ends_with(suffix))
    name.resize(name.size() - suffix.size());
  static const std::regex expert(R"(model\.layers\.(\d+)\.mlp\.experts\.(\d+)\..*)");
  std::smatch m;
  if (std::regex_match(name, m, expert)) return "layer " + m[1].str() + " expert " + m[2].str();
  return name;
}

}  // namespace

class TestConvertModel : public QObject {
  Q_OBJECT

  QTemporaryDir tmp_;
  int counter_ = 0;
  fs::path fresh(const std::string& label) {
    return fs::path(tmp_.path().toStdString()) / (label + std::to_string(++counter_));
  }

 private slots:
  void initTestCase() { QVERIFY(tmp_.isValid()); }

  void tensorsWithinQuantizationBound_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("policy");
    QTest::newRow("tiny-fp8 default") << "tiny-fp8"
                                      << "default";
    QTest::newRow("tiny-fp8 int4-g128") << "tiny-fp8"
                                        << "int4-g128";
    QTest::newRow("tiny-dsa default") << "tiny-dsa"
                                      << "default";
    QTest::newRow("tiny-dsa int4-row") << "tiny-dsa"
                                       << "int4-row";
    QTest::newRow("tiny-dsa int8") << "tiny-dsa"
                                   << "int8";
  }

  void tensorsWithinQuantizationBound() {
    QFETCH(QString, model);
    QFETCH(QString, policy);
    const fs::path in = fixture(model.toStdString()), out = fresh("bound");
    const strata::ConvertReport report = convert(in, out, policy.toStdString());
    const Container c = Container::open(out);
    const auto source = strata::io::TensorStore::openDirectory(in);
    const int mtpLayer = fixtures::readJson(in / "config.json").at("num_hidden_layers").get<int>();
    QCOMPARE(QString::fromStdString(c.manifest().identity.sourceFingerprint),
             QString::fromStdString(report.fingerprint));
    QVERIFY(std::regex_match(report.fingerprint, std::regex("xxh3-128:[0-9a-f]{32}")));
    QCOMPARE(nlohmann::json::parse(c.manifest().identity.policy).at("name").get<std::string>(),
             policy.toStdString());

    size_t weights = 0;
    for (const std::string& name : source.names()) {
      if (name.ends_with("_scale_inv")) continue;
      ++weights;
      const strata::io::TensorInfo& info = source.get(name);
      const strata::io::ContainerTensor* t = c.find(name);
      QVERIFY2(t != nullptr, name.c_str());
      const auto [format, group] = expectedFormat(name, info.dtype, mtpLayer, policy.toStdString());
      QCOMPARE(std::string(strata::io::quantFormatName(t->entry.format)) + " " + name,
               format + " " + name);
      QCOMPARE(t->entry.shape, info.shape);
      const std::vector<float> src = source.readF32(name, info.shape);
      const std::vector<float> deq = c.readF32(name);
      if (format == "f32" || format == "bf16") {
        QVERIFY2(src == deq, name.c_str());
        continue;
      }
      const int64_t rows = info.shape[0], cols = info.shape[1];
      QCOMPARE(t->entry.groupSize, group == 0 ? t->entry.paddedCols : group);
      const QString problem = checkBound(name, src, deq, rows, cols, group == 0 ? cols : group,
                                         format == "int8" ? 127 : 7);
      QVERIFY2(problem.isEmpty(), qPrintable(problem));
      QVERIFY2(src != deq, name.c_str());  // it was quantized, not copied
    }
    QCOMPARE(c.tensors().size(), weights);
    QVERIFY(fs::exists(out / "config.json"));
    QCOMPARE(testckpt::readBytes(out / "config.json"), testckpt::readBytes(in / "config.json"));
    QVERIFY(!fs::exists(out / strata::convert::kWorkDirName));
  }

  void resumedConversionIsByteIdentical_data() {
    QTest::addColumn<QList<int>>("stops");
    QTest::addColumn<bool>("commitEach");
    QTest::addColumn<bool>("tearJournal");
    QTest::newRow("after the first unit") << QList<int>{1} << true << false;
    QTest::newRow("in the middle") << QList<int>{45} << true << false;
    QTest::newRow("in the middle, journal line torn") << QList<int>{45} << true << true;
    QTest::newRow("before the first commit") << QList<int>{45} << false << false;
    QTest::newRow("before the last unit") << QList<int>{89} << true << false;
    QTest::newRow("twice") << QList<int>{20, 30} << true << false;
  }

  void resumedConversionIsByteIdentical() {
    QFETCH(QList<int>, stops);
    QFETCH(bool, commitEach);
    QFETCH(bool, tearJournal);
    const fs::path in = fixture("tiny-fp8"), reference = fresh("ref"), out = fresh("resume");
    convert(in, reference);
    const uint64_t commit = commitEach ? 0 : uint64_t{256} << 20;
    for (int stop : stops) {
      bool killed = false;
      try {
        convert(in, out, "default", stop, commit, /*threads=*/1);
      } catch (const SimulatedKill&) {
        killed = true;
      }
      QVERIFY(killed);
      // An interrupted conversion never looks finished.
      QVERIFY(!Container::isContainer(out));
      QVERIFY(errorOf([&] { Container::open(out); }, {"has not finished"}).isEmpty());
      QVERIFY(errorOf([&] { strata::io::TensorStore::openFile(out / "resident.safetensors"); },
                      {"resident.safetensors"})
                  .isEmpty());
    }
    const fs::path journal =
        out / strata::convert::kWorkDirName / strata::convert::kJournalFileName;
    if (tearJournal) {
      std::string text = testckpt::readBytes(journal);
      QVERIFY(text.size() > 20);
      testckpt::writeBytes(journal, text.substr(0, text.size() - 10));
    }
    const strata::ConvertReport report = convert(in, out, "default", -1, commit, /*threads=*/2);
    QCOMPARE(report.unitsResumed + report.unitsConverted, int64_t{90});
    if (commitEach)
      QVERIFY(report.unitsResumed >= stops.back() - 1 - (tearJournal ? 1 : 0));
    else
      QCOMPARE(report.unitsResumed, int64_t{0});
    QVERIFY(snapshot(out) == snapshot(reference));
    QVERIFY(!fs::exists(out / strata::convert::kWorkDirName));

    // Converting again into the finished container changes nothing.
    QVERIFY(convert(in, out).alreadyComplete);
    QVERIFY(errorOf([&] { convert(in, out, "int8"); }, {"already holds a finished"}).isEmpty());
  }

  void deleteInputRemovesShardsAfterTheirTensors() {
    const fs::path in = fresh("input"), out = fresh("deleted"), reference = fresh("ref");
    fs::copy(fixture("tiny-dsa"), in, fs::copy_options::recursive);
    convert(fixture("tiny-dsa"), reference);
    // Batched commits (the default): the shard must wait for the commit of its units.
    const strata::ConvertReport report =
        convert(in, out, "default", -1, uint64_t{256} << 20, 0, true);
    QCOMPARE(report.shardsDeleted, 2);
    QVERIFY(!fs::exists(in / "model-00001-of-00002.safetensors"));
    QVERIFY(!fs::exists(in / "model-00002-of-00002.safetensors"));
    QVERIFY(fs::exists(in / "config.json"));
    QVERIFY(snapshot(out) == snapshot(reference));

    // Journal order: every unit reading a shard is done before the shard is deleted, and the
    // first shard goes before the second shard's units are converted.
    std::map<std::string, size_t> doneAt, deletedAt;
    std::istringstream lines(testckpt::readBytes(out / strata::convert::kWorkDirName /
                                                 strata::convert::kJournalFileName));
    size_t number = 0;
    for (std::string line; std::getline(lines, line); ++number) {
      const auto j = nlohmann::json::parse(line);
      if (j.contains("done"))
        doneAt[j["done"]] = number;
      else
        deletedAt[j["deleted"]] = number;
    }
    const auto index = fixtures::readJson(fixture("tiny-dsa") / "model.safetensors.index.json");
    size_t lastDone = 0;
    for (const auto& [tensor, shard] : index.at("weight_map").items()) {
      const std::string unit = unitOf(tensor);
      QVERIFY2(doneAt.count(unit), unit.c_str());
      QVERIFY2(deletedAt.count(shard), shard.get<std::string>().c_str());
      QVERIFY2(doneAt[unit] < deletedAt[shard], (unit + " after its shard was deleted").c_str());
      lastDone = std::max(lastDone, doneAt[unit]);
    }
    QVERIFY(deletedAt["model-00001-of-00002.safetensors"] < lastDone);
  }

  void deleteInputResumesAfterAShardIsGone() {
    const fs::path in = fresh("input"), out = fresh("deleted"), reference = fresh("ref");
    fs::copy(fixture("tiny-dsa"), in, fs::copy_options::recursive);
    convert(fixture("tiny-dsa"), reference);
    ConvertOptions o;
    o.input = in;
    o.output = out;
    o.deleteInput = true;
    bool killed = false;
    try {
      strata::convertModel(o, [](const ConvertProgress& p) {
        if (p.shardsDeleted == 1) throw SimulatedKill{};
      });
    } catch (const SimulatedKill&) {
      killed = true;
    }
    QVERIFY(killed);
    QVERIFY(!fs::exists(in / "model-00001-of-00002.safetensors"));
    QVERIFY(fs::exists(in / "model-00002-of-00002.safetensors"));
    QVERIFY(!convert(in, out, "default", -1, uint64_t{256} << 20, 0, true).alreadyComplete);
    QVERIFY(snapshot(out) == snapshot(reference));
  }

  void malformedInputsGiveSpecificErrors() {
    using testckpt::Tensor;
    const std::string config = testckpt::readBytes(fixture("tiny-fp8") / "config.json");
    const std::string qa = "model.layers.0.self_attn.q_a_proj.weight";
    struct Case {
      const char* name;
      std::function<void(std::vector<std::vector<Tensor>>&)> edit;
      std::vector<std::string> expected;
    };
    const std::vector<Case> cases = {
        {"BF16 weight with FP8 scale",
         [&](auto& s) {
           Tensor* t = testckpt::findTensor(s, qa);
           t->dtype = "BF16";
           t->data += t->data;
         },
         {qa + "' is BF16", "weights with a weight_scale_inv must be F8_E4M3"}},
        {"wrong scale shape",
         [&](auto& s) {
           Tensor* t = testckpt::findTensor(s, qa + "_scale_inv");
           t->shape = {2, 2};
           t->data += t->data;
         },
         {qa + "_scale_inv' is F32 [2, 2], expected F32 [1, 2]"}},
        {"missing scale",
         [&](auto& s) {
           auto& v = s[0];
           v.erase(std::remove_if(v.begin(), v.end(),
                                  [&](const Tensor& t) { return t.name == qa + "_scale_inv"; }),
                   v.end());
         },
         {qa + "' is F8_E4M3 but its scale", "is missing"}},
        {"missing expert",
         [&](auto& s) {
           auto& v = s[0];
           v.erase(std::remove_if(v.begin(), v.end(),
                                  [](const Tensor& t) {
                                    return t.name.find("layers.1.mlp.experts.3.up_proj") !=
                                           std::string::npos;
                                  }),
                   v.end());
         },
         {"layer 1 expert 3", "experts.3.up_proj.weight' is missing"}},
        {"misshapen expert",
         [&](auto& s) {
           Tensor* t = testckpt::findTensor(s, "model.layers.1.mlp.experts.0.gate_proj.weight");
           t->shape = {16, 128};
           t->data.resize(16 * 128);
           testckpt::findTensor(s, "model.layers.1.mlp.experts.0.gate_proj.weight_scale_inv")
               ->shape = {1, 1};
           testckpt::findTensor(s, "model.layers.1.mlp.experts.0.gate_proj.weight_scale_inv")
               ->data.resize(4);
         },
         {"experts.0.gate_proj.weight' has shape [16, 128], expected [16, 160]"}},
        {"FP8 tensor that modules_to_not_convert (misnamed indexers_proj) excludes",
         [&](auto& s) {
           const std::string name = "model.layers.0.self_attn.indexer.weights_proj.weight";
           Tensor* t = testckpt::findTensor(s, name);
           t->dtype = "F8_E4M3";
           t->data = std::string(4 * 160, '\x38');
           float ones[2] = {1, 1};
           s[0].push_back({name + "_scale_inv", "F32", {1, 2}, std::string((char*)ones, 8)});
         },
         {"weights_proj.weight' is F8_E4M3",
          "modules_to_not_convert lists 'self_attn.indexer.weights_proj'"}},
    };
    for (const Case& c : cases) {
      auto shards = testckpt::readCheckpoint(fixture("tiny-fp8"));
      c.edit(shards);
      const fs::path in = fresh("bad"), out = fresh("out");
      testckpt::writeCheckpoint(in, config, shards);
      QStringList expected;
      for (const std::string& part : c.expected) expected << QString::fromStdString(part);
      const QString problem = errorOf([&] { convert(in, out); }, expected);
      QVERIFY2(problem.isEmpty(), qPrintable(QString(c.name) + ": " + problem));
      QVERIFY(!Container::isContainer(out));
    }

    const fs::path noConfig = fresh("noconfig"), out = fresh("out");
    fs::copy(fixture("tiny-fp8"), noConfig, fs::copy_options::recursive);
    fs::remove(noConfig / "config.json");
    QVERIFY(errorOf([&] { convert(noConfig, out); }, {"config.json is missing"}).isEmpty());

    const fs::path noShard = fresh("noshard");
    fs::copy(fixture("tiny-dsa"), noShard, fs::copy_options::recursive);
    fs::remove(noShard / "model-00002-of-00002.safetensors");
    QVERIFY(errorOf([&] { convert(noShard, out); },
                    {"shard 'model-00002-of-00002.safetensors'", "does not exist"})
                .isEmpty());

    QVERIFY(errorOf([&] { convert(fixture("tiny-fp8"), out, "int3"); },
                    {"unknown conversion policy 'int3'", "int4-g32"})
                .isEmpty());
    const fs::path busy = fresh("busy");
    fs::create_directories(busy);
    testckpt::writeBytes(busy / "notes.txt", "mine");
    QVERIFY(errorOf([&] { convert(fixture("tiny-fp8"), busy); }, {"is not empty"}).isEmpty());
    QVERIFY(fs::exists(busy / "notes.txt"));
  }

  // The free-space check before converting counts what an interrupted run already wrote (the
  // files are sparse until written) and refuses a disk that cannot hold the rest, with both
  // numbers.
  void diskSpaceCountsWrittenBlocks() {
    const std::filesystem::path dir = tmp_.filePath("space").toStdString();
    std::filesystem::create_directories(dir);
    std::vector<strata::io::ContainerFile> files(2);
    files[0].name = "resident.safetensors";
    files[0].fileBytes = 1 << 20;
    files[1].name = "experts-001.safetensors";
    files[1].fileBytes = 3 << 20;
    QCOMPARE(strata::convert::bytesToWrite(files, dir), uint64_t{4} << 20);

    std::ofstream(dir / "resident.safetensors", std::ios::binary) << std::string(1 << 20, 'x');
    std::ofstream(dir / "experts-001.safetensors", std::ios::binary).close();
    std::filesystem::resize_file(dir / "experts-001.safetensors", 3 << 20);  // a hole
    QCOMPARE(strata::convert::bytesToWrite(files, dir), uint64_t{3} << 20);

    strata::convert::requireRoom(3 << 20, 3 << 20, dir);  // exactly enough
    const QString error = errorOf([&] { strata::convert::requireRoom(3 << 20, 1 << 20, dir); },
                                  {"needs 3.0 MiB more", "has 1.0 MiB free", "resumes"});
    QVERIFY2(error.isEmpty(), qPrintable(error));
  }

  void misnamedModuleIsRepaired() {
    const std::string config = testckpt::readBytes(fixture("tiny-fp8") / "config.json");
    const auto modules = strata::convert::modulesNotConverted(config);
    QVERIFY(std::find(modules.begin(), modules.end(), "self_attn.indexer.weights_proj") !=
            modules.end());
    QVERIFY(std::find(modules.begin(), modules.end(), "self_attn.indexers_proj") == modules.end());
  }
};

QTEST_APPLESS_MAIN(TestConvertModel)
#include "test_convert_model.moc"
