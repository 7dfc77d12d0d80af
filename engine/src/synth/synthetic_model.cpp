// synthesizeModel (strata/synth.h): plans the container with the converter's planner and
// policy, as if converting a BF16 checkpoint of the config's shape, then fills every resident
// tensor and routed expert with random stored bytes (synth/random_weights.h), in parallel
// across tensors and experts, each written with pwrite at its planned place.
#include <omp.h>
#include <xxhash.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <exception>
#include <mutex>
#include <optional>

#include "convert/plan.h"
#include "convert/policy.h"
#include "io/container_writer.h"
#include "io/durable_file.h"
#include "strata/synth.h"
#include "synth/checkpoint_tensors.h"
#include "synth/random_weights.h"
#include "synth/router_skew.h"
#include "synth/synthetic_config.h"
#include "tier/memory_plan.h"

namespace strata {

namespace fs = std::filesystem;
using namespace synth;

namespace {

constexpr const char* kReadmeName = "README.txt";
// Rows of a big resident tensor (embed_tokens, lm_head) are generated and written in chunks
// of about this many stored bytes, so memory stays bounded whatever the vocabulary.
constexpr uint64_t kChunkBytes = uint64_t{32} << 20;

std::string gigabytes(uint64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f GB", static_cast<double>(bytes) / 1e9);
  return text;
}

// Refuses an output that exists and holds anything: synth never overwrites or deletes.
void checkOutputIsFree(const fs::path& out) {
  std::error_code error;
  const fs::file_status status = fs::status(out, error);
  if (status.type() == fs::file_type::not_found) return;
  if (error) throw Error(out.string() + ": cannot examine: " + error.message());
  if (!fs::is_directory(status))
    throw Error(out.string() + " exists and is not a directory; choose a new --out");
  if (!fs::is_empty(out, error) || error)
    throw Error(out.string() +
                " is not empty; synth writes only into a new or empty directory (nothing was "
                "changed)");
}

void checkDiskSpace(const fs::path& out, uint64_t needed) {
  fs::path probe = fs::absolute(out);
  std::error_code error;
  while (!fs::exists(probe, error) && probe.has_parent_path() && probe != probe.parent_path())
    probe = probe.parent_path();
  const fs::space_info space = fs::space(probe, error);
  if (error) throw Error(probe.string() + ": cannot read the free disk space: " + error.message());
  if (needed > space.available)
    throw Error("the synthetic model needs " + gigabytes(needed) + " but only " +
                gigabytes(space.available) + " is free on " + probe.string() +
                " (nothing was written)");
}

std::string readme(const SyntheticConfig& sc, const SynthOptions& o) {
  const model::ModelConfig& c = sc.config;
  char text[4096];
  std::snprintf(
      text, sizeof text,
      "Synthetic GLM-5-shaped model written by `strata-cli synth` (%s, seed %llu, zipf %g).\n\n"
      "Its weights are RANDOM: it produces gibberish by design. It exists to benchmark the\n"
      "engine (expert streaming, caches, kernels) on the real layout without downloading a\n"
      "real model: hidden %d, %d layers, %d routed experts (top %d) per MoE layer, vocab %d.\n"
      "Router biases make each token's experts look like draws from a Zipf popularity\n"
      "(exponent %g; random expert order per MoE layer).\n"
      "There is no tokenizer: feed token ids. config.json's \"strata_synthetic\" field\n"
      "records how it was made; the files are a Strata container (docs/container-format.md)\n"
      "stored as `strata-cli convert --policy %s` stores a checkpoint of this shape.\n",
      sc.origin.c_str(), static_cast<unsigned long long>(o.seed), o.zipf, c.hiddenSize,
      c.numHiddenLayers, c.nRoutedExperts, c.numExpertsPerTok, c.vocabSize, o.zipf,
      o.policy.c_str());
  return text;
}

class Synthesizer {
 public:
  Synthesizer(const SynthOptions& options,
              const std::function<void(const SynthProgress&)>& progress)
      : options_(options), progress_(progress), start_(std::chrono::steady_clock::now()) {}

  SynthReport run() {
    if (options_.output.empty() && !options_.dryRun)
      throw Error("synth: no output directory given");
    if (!std::isfinite(options_.zipf) || options_.zipf < 0)
      throw Error("synth: the zipf exponent must be 0 or more, got " +
                  std::to_string(options_.zipf));
    const convert::Policy policy = convert::policyByName(options_.policy);
    const SyntheticConfig sc = makeSyntheticConfig(options_);
    const convert::SourceTable table = syntheticSourceTable(sc.text, sc.config);
    plan_ = convert::planContainer(table, sc.config, policy);
    plan_.identity.converter = kGeneratorName;  // layout as converted, origin told apart
    for (io::ContainerFile& file : plan_.files) io::layoutFile(file, plan_.identity);

    SynthReport r;
    r.units = static_cast<int64_t>(plan_.units.size());
    for (const convert::SourceTensor& t : table.tensors) {
      int64_t n = 1;
      for (int64_t d : t.shape) n *= d;
      r.parameters += n;
    }
    for (const io::ContainerFile& f : plan_.files) {
      r.containerBytes += f.fileBytes;
      r.experts += static_cast<int64_t>(f.experts.size());
      if (r.expertBytes == 0 && !f.experts.empty()) r.expertBytes = f.experts.front().span;
    }
    r.residentBytes = plan_.files.front().fileBytes;
    r.heldResidentBytes = static_cast<uint64_t>(
        tier::residentTensorBytes(sc.config, plan_.files, model::WeightPrecision::Native));
    r.kvBytesPerToken = sizeof(float) * static_cast<uint64_t>(sc.config.kvValuesPerToken());
    r.fingerprint = plan_.identity.sourceFingerprint;
    if (options_.dryRun) return r;

    for (const convert::ConvertUnit& unit : plan_.units) totalBytes_ += unitBytes(unit);
    const std::string readmeText = readme(sc, options_);
    checkOutputIsFree(options_.output);
    checkDiskSpace(options_.output, r.containerBytes + sc.text.size() + readmeText.size());
    const model::ModelConfig& c = sc.config;
    if (c.hasMtp() || std::count(c.layerIsMoe.begin(), c.layerIsMoe.end(), true) > 0)
      biasByRank_ = biasByRank(c.nRoutedExperts, c.numExpertsPerTok, options_.zipf);

    std::error_code error;
    const bool createdDir = !fs::exists(options_.output, error);
    try {
      write(sc, readmeText);
    } catch (...) {
      removeOutput(createdDir);
      throw;
    }
    r.seconds = elapsed();
    r.mbPerSecond = r.seconds > 0 ? r.containerBytes / 1e6 / r.seconds : 0;
    return r;
  }

 private:
  uint64_t unitBytes(const convert::ConvertUnit& unit) const {
    const io::ContainerFile& file = plan_.files[static_cast<size_t>(unit.file)];
    if (unit.expert >= 0) return file.experts[static_cast<size_t>(unit.expert)].span;
    const io::TensorEntry& e = file.tensors[static_cast<size_t>(unit.tensor)];
    return e.dataBytes() + e.scalesBytes();
  }

  void write(const SyntheticConfig& sc, const std::string& readmeText) {
    std::error_code error;
    fs::create_directories(options_.output, error);
    if (error) throw Error(options_.output.string() + ": cannot create: " + error.message());
    io::writeFileAtomically(options_.output / "config.json", sc.text);
    io::writeFileAtomically(options_.output / kReadmeName, readmeText);
    writer_.emplace(options_.output, plan_.files, std::vector<bool>(plan_.files.size(), false));

    std::exception_ptr failure;
    std::atomic<bool> failed = false;
    const int64_t units = static_cast<int64_t>(plan_.units.size());
    const int threads = options_.threads > 0 ? options_.threads : omp_get_max_threads();
#pragma omp parallel num_threads(threads)
    {
      std::vector<std::byte> buffer, scales;
#pragma omp for schedule(dynamic)
      for (int64_t i = 0; i < units; ++i) {
        if (failed) continue;
        try {
          const convert::ConvertUnit& unit = plan_.units[static_cast<size_t>(i)];
          unit.expert >= 0 ? writeExpert(unit, buffer) : writeResident(unit, buffer, scales);
        } catch (...) {
#pragma omp critical(strata_synth_failure)
          if (!failure) failure = std::current_exception();
          failed = true;
        }
      }
    }
    if (failure) std::rethrow_exception(failure);
    writer_->finish(plan_.files, plan_.identity, {"config.json", kReadmeName});
    writer_.reset();
  }

  // Generated in row chunks; the checksums stream over them in order.
  void writeResident(const convert::ConvertUnit& unit, std::vector<std::byte>& data,
                     std::vector<std::byte>& scales) {
    io::TensorEntry& e =
        plan_.files[static_cast<size_t>(unit.file)].tensors[static_cast<size_t>(unit.tensor)];
    const convert::TensorName name = convert::classifyTensor(e.name);
    if (name.role == convert::TensorRole::RouterBias) {
      const std::vector<float> bias =
          layerCorrectionBias(biasByRank_, streamSeed(options_.seed, e.name));
      data.resize(e.dataBytes());
      storeValues(e, bias, data.data());
      e.dataChecksum = XXH3_64bits(data.data(), data.size());
      e.scalesChecksum = XXH3_64bits(nullptr, 0);
      emit(unit, e.dataOffset, data, true);
      return;
    }
    if (e.rows() * e.cols() == 0) throw Error("tensor '" + e.name + "' is empty");
    const ValueRule rule = valueRule(name, e);
    const uint64_t seed = streamSeed(options_.seed, e.name);
    const int64_t rows = e.rows();
    const uint64_t dataRow = e.dataBytes() / static_cast<uint64_t>(rows);
    const uint64_t scaleRow = e.scalesBytes() / static_cast<uint64_t>(rows);
    const int64_t chunk = std::max<int64_t>(1, kChunkBytes / (dataRow + scaleRow));
    XXH3_state_t* hashes[2] = {XXH3_createState(), XXH3_createState()};
    for (XXH3_state_t* h : hashes) XXH3_64bits_reset(h);
    try {
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t n = std::min(chunk, rows - r0);
        data.resize(static_cast<size_t>(n) * dataRow);
        scales.resize(static_cast<size_t>(n) * scaleRow);
        fillRows(e, rule, seed, r0, n, data.data(), scales.data());
        XXH3_64bits_update(hashes[0], data.data(), data.size());
        XXH3_64bits_update(hashes[1], scales.data(), scales.size());
        const bool last = r0 + n >= rows;
        emit(unit, e.dataOffset + static_cast<uint64_t>(r0) * dataRow, data,
             last && scales.empty());
        if (!scales.empty())
          emit(unit, e.scalesOffset + static_cast<uint64_t>(r0) * scaleRow, scales, last);
      }
    } catch (...) {
      for (XXH3_state_t* h : hashes) XXH3_freeState(h);
      throw;
    }
    e.dataChecksum = XXH3_64bits_digest(hashes[0]);
    e.scalesChecksum = XXH3_64bits_digest(hashes[1]);
    for (XXH3_state_t* h : hashes) XXH3_freeState(h);
  }

  // The expert's whole span built in memory (zero padding at the end), written with one pwrite.
  void writeExpert(const convert::ConvertUnit& unit, std::vector<std::byte>& image) {
    io::ContainerFile& file = plan_.files[static_cast<size_t>(unit.file)];
    io::ExpertEntry& x = file.experts[static_cast<size_t>(unit.expert)];
    image.resize(x.span);
    std::fill(image.begin() + static_cast<int64_t>(x.bytes), image.end(), std::byte{0});
    for (int p = 0; p < 3; ++p) {
      io::TensorEntry& e = file.tensors[static_cast<size_t>(x.tensors[p])];
      std::byte* data = image.data() + (e.dataOffset - x.dataOffset);
      std::byte* scales = image.data() + (e.scalesOffset - x.dataOffset);
      fillRows(e, valueRule(convert::classifyTensor(e.name), e), streamSeed(options_.seed, e.name),
               0, e.rows(), data, scales);
      e.dataChecksum = XXH3_64bits(data, e.dataBytes());
      e.scalesChecksum = XXH3_64bits(scales, e.scalesBytes());
    }
    x.checksum = XXH3_64bits(image.data(), x.bytes);
    emit(unit, x.dataOffset, image, true);
  }

  // Writes one piece; the unit's last piece advances the unit count. One writer at a time
  // (the pieces are large and the disk is the limit); a mutex rather than an OpenMP critical
  // section, so a thread waiting for the disk sleeps instead of spinning.
  void emit(const convert::ConvertUnit& unit, uint64_t offset, const std::vector<std::byte>& bytes,
            bool lastPiece) {
    const std::lock_guard<std::mutex> lock(writeMutex_);
    writer_->write(unit.file, offset, bytes);
    bytesDone_ += bytes.size();
    if (lastPiece) ++unitsDone_;
    if (progress_) notify();
  }

  void notify() const {
    SynthProgress p;
    p.unitsDone = unitsDone_;
    p.unitsTotal = static_cast<int64_t>(plan_.units.size());
    p.bytesDone = bytesDone_;
    p.bytesTotal = totalBytes_;
    p.seconds = elapsed();
    p.mbPerSecond = p.seconds > 0 ? bytesDone_ / 1e6 / p.seconds : 0;
    progress_(p);
  }

  // After a failure: the files this run created, and the directory if it made it.
  void removeOutput(bool createdDir) noexcept {
    writer_.reset();
    std::error_code ignored;
    for (const io::ContainerFile& f : plan_.files) fs::remove(options_.output / f.name, ignored);
    for (const char* name : {"config.json", kReadmeName, io::kManifestName}) {
      fs::remove(options_.output / name, ignored);
      fs::remove(options_.output / (std::string(name) + ".tmp"), ignored);  // durable_file's
    }
    if (createdDir) fs::remove(options_.output, ignored);  // only if now empty
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  const SynthOptions& options_;
  const std::function<void(const SynthProgress&)>& progress_;
  std::chrono::steady_clock::time_point start_;
  convert::ContainerPlan plan_;
  std::optional<io::ContainerWriter> writer_;
  std::mutex writeMutex_;           // guards writer_ and the progress counters while writing
  std::vector<double> biasByRank_;  // router biases by popularity rank, the same every layer
  uint64_t totalBytes_ = 0;
  uint64_t bytesDone_ = 0;
  int64_t unitsDone_ = 0;
};

}  // namespace

SynthReport synthesizeModel(const SynthOptions& options,
                            const std::function<void(const SynthProgress&)>& progress) {
  Synthesizer synthesizer(options, progress);
  return synthesizer.run();
}

std::vector<std::string> synthPresetNames() { return presetNames(); }

std::vector<std::string> synthPolicyNames() { return convert::policyNames(); }

}  // namespace strata
