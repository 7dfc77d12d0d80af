#include "convert/converter.h"

#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <nlohmann/json.hpp>
#include <optional>

#include "core/files.h"
#include "core/text.h"
#include "convert/disk_space.h"
#include "convert/journal.h"
#include "convert/plan.h"
#include "convert/policy.h"
#include "convert/source.h"
#include "convert/tensor_encoder.h"
#include "io/container.h"
#include "io/container_writer.h"
#include "io/durable_file.h"

namespace strata {

namespace fs = std::filesystem;
using namespace convert;

namespace {

bool emptyButWorkDir(const fs::path& dir) {
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error))
    if (entry.path().filename() != kWorkDirName) return false;
  return !error;
}

class Converter {
 public:
  Converter(const ConvertOptions& options,
            const std::function<void(const ConvertProgress&)>& progress)
      : options_(options), progress_(progress), start_(std::chrono::steady_clock::now()) {}

  ConvertReport run() {
    const Policy policy = policyByName(options_.policy);
    if (options_.output.empty()) throw Error("convert: no output directory given");
    if (io::Container::isContainer(options_.output)) return alreadyFinished(policy);
    openSource(policy);
    plan_ = planContainer(source_->table(), source_->config(), policy);
    requireFreeSpace();
    journal_.emplace(work_ / kJournalFileName);
    resumeFromJournal();
    writer_.emplace(options_.output, plan_.files, holdsDoneWork_);
    if (options_.deleteInput) deleteFinishedShards();

    for (const ConvertUnit& unit : plan_.units) {
      if (journal_->done().count(unit.id)) continue;
      std::vector<uint64_t> sums = unit.expert >= 0 ? convertExpert(unit) : convertResident(unit);
      journal_->addDone(unit.id, sums);
      ++unitsDone_, ++report_.unitsConverted;
      bytesDone_ += unit.sourceBytes;
      report_.sourceBytes += unit.sourceBytes;
      bool shardFinished = false;
      for (int s : unit.shards) shardFinished |= --remaining_[static_cast<size_t>(s)] == 0;
      if (writer_->bytesWritten() - committedBytes_ >= options_.commitBytes) commit();
      if (options_.deleteInput && shardFinished) deleteFinishedShards();
      notify(ConvertProgress::Phase::Converting, unit.id);
    }
    commit();
    finish();
    return report_;
  }

 private:
  ConvertReport alreadyFinished(const Policy& policy) {
    const fs::path& out = options_.output;
    const io::ContainerManifest manifest = io::parseManifest(
        io::readFileText(out / io::kManifestName), (out / io::kManifestName).string());
    const fs::path inputConfig = options_.input / "config.json";
    const bool sameConfig = pathExists(inputConfig) && pathExists(out / "config.json") &&
                            io::readFileText(inputConfig) == io::readFileText(out / "config.json");
    if (manifest.identity.policy != policy.toJson() || !sameConfig)
      throw Error(out.string() +
                  " already holds a finished Strata container of another model "
                  "or policy; choose another --out or delete it");
    std::error_code ignored;
    if (!options_.keepJournal) fs::remove_all(out / kWorkDirName, ignored);
    report_.alreadyComplete = true;
    report_.fingerprint = manifest.identity.sourceFingerprint;
    return report_;
  }

  // Opens the source fresh (recording its table) or as the interrupted run saved it.
  void openSource(const Policy& policy) {
    work_ = options_.output / kWorkDirName;
    const fs::path statePath = work_ / kStateFileName;
    if (pathExists(statePath)) {
      nlohmann::json state;
      try {
        state = nlohmann::json::parse(io::readFileText(statePath));
      } catch (const nlohmann::json::exception& e) {
        throw Error(statePath.string() + ": corrupt (" + e.what() + "); delete " +
                    options_.output.string() + " and start over");
      }
      const std::string started = state.value("policy", std::string());
      if (started != policy.toJson()) {
        const auto name = nlohmann::json::parse(started, nullptr, false).value("name", "?");
        throw Error(options_.output.string() + " holds a conversion started with policy '" + name +
                    "'; rerun with --policy " + name + ", or delete it to start over");
      }
      const SourceTable saved =
          SourceTable::fromJson(state.value("source", ""), statePath.string());
      source_.emplace(SourceCheckpoint::open(options_.input, &saved));
      return;
    }
    if (pathExists(options_.output) && !emptyButWorkDir(options_.output))
      throw Error(options_.output.string() +
                  " is not empty and holds no unfinished conversion; choose a new or empty "
                  "directory");
    source_.emplace(SourceCheckpoint::open(options_.input));
    std::error_code error;
    fs::create_directories(work_, error);
    if (error) throw Error(work_.string() + ": cannot create: " + error.message());
    nlohmann::json state;
    state["policy"] = policy.toJson();
    state["source"] = source_->table().toJson();
    io::writeFileAtomically(statePath, state.dump());
  }

  // Before writing: the container's bytes still to write must fit the disk. Not with
  // --delete-input, where converted shards make room as it goes.
  void requireFreeSpace() const {
    if (options_.deleteInput) return;
    std::error_code error;
    const fs::space_info space = fs::space(options_.output, error);
    if (!error) requireRoom(bytesToWrite(plan_.files, options_.output), space.available, options_.output);
  }

  // Takes over the checksums of units an earlier run finished and checks that every absent
  // shard's units are among them.
  void resumeFromJournal() {
    const SourceTable& table = source_->table();
    remaining_.assign(table.shards.size(), 0);
    holdsDoneWork_.assign(plan_.files.size(), false);
    for (const ConvertUnit& unit : plan_.units) {
      const auto done = journal_->done().find(unit.id);
      if (done == journal_->done().end()) {
        for (int s : unit.shards) ++remaining_[static_cast<size_t>(s)];
        continue;
      }
      applyChecksums(unit, done->second);
      holdsDoneWork_[static_cast<size_t>(unit.file)] = true;
      ++unitsDone_, ++report_.unitsResumed;
      bytesDone_ += unit.sourceBytes;
    }
    for (size_t s = 0; s < table.shards.size(); ++s)
      if (!source_->shardPresent(static_cast<int>(s)) && remaining_[s] > 0)
        throw Error((options_.input / table.shards[s].name).string() + " is missing, but " +
                    std::to_string(remaining_[s]) +
                    " tensors or experts that read it are not converted yet; restore it and rerun");
  }

  void applyChecksums(const ConvertUnit& unit, const std::vector<uint64_t>& sums) {
    io::ContainerFile& file = plan_.files[static_cast<size_t>(unit.file)];
    const size_t expected = unit.expert >= 0 ? 7 : 2;
    if (sums.size() != expected)
      throw Error((work_ / kJournalFileName).string() + ": unit '" + unit.id + "' has " +
                  std::to_string(sums.size()) + " checksums, expected " + std::to_string(expected));
    if (unit.expert < 0) {
      io::TensorEntry& t = file.tensors[static_cast<size_t>(unit.tensor)];
      t.dataChecksum = sums[0];
      t.scalesChecksum = sums[1];
      return;
    }
    io::ExpertEntry& e = file.experts[static_cast<size_t>(unit.expert)];
    for (int p = 0; p < 3; ++p) {
      io::TensorEntry& t = file.tensors[static_cast<size_t>(e.tensors[p])];
      t.dataChecksum = sums[2 * p];
      t.scalesChecksum = sums[2 * p + 1];
    }
    e.checksum = sums[6];
  }

  // Rows in chunks of at most chunkBytes of source, each written where the plan puts it.
  std::vector<uint64_t> convertResident(const ConvertUnit& unit) {
    const SourceTensor& src = source_->table().tensors[static_cast<size_t>(unit.sources[0])];
    io::TensorEntry& e =
        plan_.files[static_cast<size_t>(unit.file)].tensors[static_cast<size_t>(unit.tensor)];
    const int64_t rows = e.rows(), cols = e.cols();
    if (rows * cols == 0) {
      applyChecksums(unit, {XXH3_64bits(nullptr, 0), XXH3_64bits(nullptr, 0)});
      return {e.dataChecksum, e.scalesChecksum};
    }
    const io::Fp8BlockSize block = source_->fp8Block();
    const uint64_t rawRow = static_cast<uint64_t>(cols) * io::dtypeSize(src.dtype);
    const uint64_t dataRow = e.dataBytes() / static_cast<uint64_t>(rows);
    const uint64_t scaleRow = e.scalesBytes() / static_cast<uint64_t>(rows);
    const int64_t slice = sliceRows(src, block);
    const int64_t fit = static_cast<int64_t>(options_.chunkBytes / rawRow);
    const int64_t chunk = std::max(slice, fit / slice * slice);
    const std::vector<float> scales =
        src.scale >= 0 ? source_->readScales(src) : std::vector<float>();

    XXH3_state_t* hashes[2] = {XXH3_createState(), XXH3_createState()};
    for (XXH3_state_t* h : hashes) XXH3_64bits_reset(h);
    std::vector<std::byte> raw, data, scaleBytes;
    try {
      for (int64_t r0 = 0; r0 < rows; r0 += chunk) {
        const int64_t n = std::min(chunk, rows - r0);
        raw.resize(static_cast<size_t>(n) * rawRow);
        data.resize(static_cast<size_t>(n) * dataRow);
        scaleBytes.resize(static_cast<size_t>(n) * scaleRow);
        source_->readRaw(src, static_cast<uint64_t>(r0) * rawRow, raw);
        encodeRows(src, raw.data(), r0, n, scales.data(), block,
                   {&e, data.data(), scaleBytes.data()}, options_.threads);
        writer_->write(unit.file, e.dataOffset + static_cast<uint64_t>(r0) * dataRow, data);
        XXH3_64bits_update(hashes[0], data.data(), data.size());
        if (!scaleBytes.empty()) {
          writer_->write(unit.file, e.scalesOffset + static_cast<uint64_t>(r0) * scaleRow,
                         scaleBytes);
          XXH3_64bits_update(hashes[1], scaleBytes.data(), scaleBytes.size());
        }
      }
    } catch (...) {
      for (XXH3_state_t* h : hashes) XXH3_freeState(h);
      throw;
    }
    std::vector<uint64_t> sums = {XXH3_64bits_digest(hashes[0]), XXH3_64bits_digest(hashes[1])};
    for (XXH3_state_t* h : hashes) XXH3_freeState(h);
    applyChecksums(unit, sums);
    return sums;
  }

  // The expert's whole span built in memory and written with one pwrite.
  std::vector<uint64_t> convertExpert(const ConvertUnit& unit) {
    io::ContainerFile& file = plan_.files[static_cast<size_t>(unit.file)];
    io::ExpertEntry& x = file.experts[static_cast<size_t>(unit.expert)];
    std::vector<std::byte> image(x.span);  // zeros: the padding
    std::vector<uint64_t> sums;
    for (int p = 0; p < 3; ++p) {
      const SourceTensor& src = source_->table().tensors[static_cast<size_t>(unit.sources[p])];
      const io::TensorEntry& e = file.tensors[static_cast<size_t>(x.tensors[p])];
      std::vector<std::byte> raw(src.bytes);
      source_->readRaw(src, 0, raw);
      const std::vector<float> scales =
          src.scale >= 0 ? source_->readScales(src) : std::vector<float>();
      std::byte* data = image.data() + (e.dataOffset - x.dataOffset);
      std::byte* scaleBytes = image.data() + (e.scalesOffset - x.dataOffset);
      encodeRows(src, raw.data(), 0, e.rows(), scales.data(), source_->fp8Block(),
                 {&e, data, scaleBytes}, options_.threads);
      sums.push_back(XXH3_64bits(data, e.dataBytes()));
      sums.push_back(XXH3_64bits(scaleBytes, e.scalesBytes()));
    }
    sums.push_back(XXH3_64bits(image.data(), x.bytes));
    writer_->write(unit.file, x.dataOffset, image);
    applyChecksums(unit, sums);
    return sums;
  }

  // Output first, then the journal lines that vouch for it.
  void commit() {
    writer_->sync();
    journal_->commit();
    committedBytes_ = writer_->bytesWritten();
  }

  void deleteFinishedShards() {
    const SourceTable& table = source_->table();
    bool committed = false;
    for (size_t s = 0; s < table.shards.size(); ++s) {
      if (remaining_[s] > 0 || !source_->shardPresent(static_cast<int>(s))) continue;
      if (!committed) commit(), committed = true;
      source_->releaseShard(static_cast<int>(s));
      const fs::path path = options_.input / table.shards[s].name;
      if (::unlink(path.c_str()) != 0 && errno != ENOENT)
        throw Error(path.string() + ": cannot delete (--delete-input): " + std::strerror(errno));
      journal_->addDeleted(table.shards[s].name);
      ++report_.shardsDeleted;
    }
  }

  void finish() {
    notify(ConvertProgress::Phase::Finishing, "");
    const fs::path& out = options_.output;
    std::vector<std::string> copied;
    for (const char* name : kCopiedFiles) {
      const fs::path from = options_.input / name;
      if (std::string(name) == "config.json")
        io::writeFileAtomically(out / name, source_->table().configText);
      else if (pathExists(from))
        io::copyFileAtomically(from, out / name);
      else
        continue;
      copied.push_back(name);
    }
    writer_->finish(plan_.files, plan_.identity, copied);
    if (!options_.keepJournal) {
      journal_.reset();
      std::error_code ignored;
      fs::remove_all(work_, ignored);
      io::syncDirectory(out);
    }
    report_.fingerprint = plan_.identity.sourceFingerprint;
    for (const io::ContainerFile& f : plan_.files) {
      report_.containerBytes += f.fileBytes;
      if (f.role == io::FileRole::Resident) report_.residentBytes += f.fileBytes;
    }
    report_.seconds = elapsed();
    report_.mbPerSecond = report_.seconds > 0 ? report_.sourceBytes / 1e6 / report_.seconds : 0;
    notify(ConvertProgress::Phase::Done, "");
  }

  double elapsed() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

  void notify(ConvertProgress::Phase phase, const std::string& current) {
    if (!progress_) return;
    ConvertProgress p;
    p.phase = phase;
    p.unitsDone = unitsDone_;
    p.unitsTotal = static_cast<int64_t>(plan_.units.size());
    p.bytesDone = bytesDone_;
    p.bytesTotal = plan_.sourceBytes;
    p.seconds = elapsed();
    p.mbPerSecond = p.seconds > 0 ? report_.sourceBytes / 1e6 / p.seconds : 0;
    if (p.mbPerSecond > 0) p.etaSeconds = (p.bytesTotal - p.bytesDone) / 1e6 / p.mbPerSecond;
    p.current = current;
    p.shardsDeleted = report_.shardsDeleted;
    progress_(p);
  }

  const ConvertOptions& options_;
  const std::function<void(const ConvertProgress&)>& progress_;
  std::chrono::steady_clock::time_point start_;
  fs::path work_;
  std::optional<SourceCheckpoint> source_;
  ContainerPlan plan_;
  std::optional<Journal> journal_;
  std::optional<io::ContainerWriter> writer_;
  std::vector<int64_t> remaining_;  // by shard: units not yet done that read it
  std::vector<bool> holdsDoneWork_;
  int64_t unitsDone_ = 0;
  uint64_t bytesDone_ = 0;
  uint64_t committedBytes_ = 0;
  ConvertReport report_;
};

}  // namespace

ConvertReport convertModel(const ConvertOptions& options,
                           const std::function<void(const ConvertProgress&)>& progress) {
  Converter converter(options, progress);
  return converter.run();
}

std::vector<std::string> convertPolicyNames() { return convert::policyNames(); }

}  // namespace strata
