// bench spec: each drafter's acceptance and speed-up against plain decoding in the same run
// (strata/spec_bench.h).
#include "strata/spec_bench.h"

#include <algorithm>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>

#include "core/median.h"
#include "core/work_directory.h"
#include "io/container.h"
#include "strata/chat.h"
#include "strata/convert.h"

namespace strata {
namespace {
namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

struct Prompt {
  std::vector<int32_t> ids;
  std::shared_ptr<const Grammar> grammar;  // JSON prompts: the expected keys as a schema
};

// A schema requiring the answer's keys with the answer's value types: what a caller asking
// for that object would send.
std::shared_ptr<const Grammar> schemaFor(const Json& answer) {
  Json properties = Json::object();
  Json required = Json::array();
  for (const auto& [key, value] : answer.items()) {
    const char* type = value.is_string()           ? "string"
                       : value.is_number_integer() ? "integer"
                       : value.is_number()         ? "number"
                       : value.is_boolean()        ? "boolean"
                                                   : nullptr;
    if (!type) return nullptr;
    properties[key] = {{"type", type}};
    required.push_back(key);
  }
  const Json schema = {{"type", "object"}, {"properties", properties}, {"required", required},
                       {"additionalProperties", false}};
  return Grammar::fromJsonSchema(schema.dump());
}

// `count` prompts spread over the file; jsonOnly: the "json" rows with their schema, rendered
// with thinking off, so the grammar covers the whole reply.
std::vector<Prompt> loadPrompts(const Engine& engine, const fs::path& file, int count, bool jsonOnly) {
  std::ifstream in(file);
  if (!in) throw Error(file.string() + ": cannot open the prompts file");
  std::vector<Json> rows;
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    Json row;
    try {
      row = Json::parse(line);
    } catch (const std::exception& e) {
      throw Error(file.string() + ": line " + std::to_string(rows.size() + 1) + " is not JSON: " + e.what());
    }
    if (!jsonOnly || row.value("task", "") == "json") rows.push_back(std::move(row));
  }
  std::vector<Prompt> prompts;
  if (rows.empty()) return prompts;
  const size_t stride = std::max<size_t>(1, rows.size() / static_cast<size_t>(count));
  for (size_t i = 0; i < rows.size() && static_cast<int>(prompts.size()) < count; i += stride) {
    ChatOptions chat;
    chat.addGenerationPrompt = true;
    chat.enableThinking = !jsonOnly;
    Prompt p;
    p.ids = engine.tokenizer()->encode(renderGlmChat(parseChatMessages(rows[i].at("messages")), {}, chat));
    if (jsonOnly) {
      const Json answer = Json::parse(rows[i].value("answer", "null"), nullptr, false);
      if (!answer.is_object() || !(p.grammar = schemaFor(answer))) continue;
    }
    prompts.push_back(std::move(p));
  }
  return prompts;
}

struct Run {
  double tokens = 0;   // after the first (which comes from the prefill)
  double seconds = 0;  // decoding them
  double forwards = 0;
  double draftSeconds = 0;  // of `seconds`, proposing drafts
  double tokS() const { return seconds > 0 ? tokens / seconds : 0; }
};

Run decodeAll(Engine& engine, const std::vector<Prompt>& prompts, int maxNewTokens) {
  Run run;
  for (const Prompt& p : prompts) {
    GenerateOptions o;
    o.sampling.temperature = 0;
    o.maxNewTokens = maxNewTokens;
    o.grammar = p.grammar;
    const GenerateResult r = engine.newSession()->generate(p.ids, o);
    run.tokens += static_cast<double>(r.tokens.size()) - 1;
    run.seconds += r.decodeSeconds;
    run.forwards += static_cast<double>(r.speculation.forwards);
    run.draftSeconds += r.speculation.draftSeconds;
  }
  return run;
}

SpeculationSettings allOff() {
  SpeculationSettings s;
  s.mtp = s.ngram = s.grammar = DrafterMode::Off;
  return s;
}

SpeculationSettings forced(const std::string& drafter, const SpecBenchOptions& options) {
  SpeculationSettings s = allOff();
  if (drafter == "mtp") s.mtp = DrafterMode::On;
  if (drafter == "ngram") s.ngram = DrafterMode::On;
  if (drafter == "grammar") s.grammar = DrafterMode::On;
  s.mtpDepth = options.mtpDepth;
  s.mtpMinProbability = options.mtpMinProbability;
  s.mtpDraftVocabulary = options.mtpDraftVocabulary;
  return s;
}

// Verify passes and first-token acceptances so far, of one drafter or ("auto") all.
DrafterStats totals(const Engine& engine, const std::string& drafter) {
  DrafterStats sum;
  for (const DrafterStats& d : engine.speculationStats()) {
    if (drafter != "auto" && d.name != drafter) continue;
    sum.rounds += d.rounds;
    sum.drafted += d.drafted;
    sum.accepted += d.accepted;
    sum.firstAccepted += d.firstAccepted;
  }
  return sum;
}


}  // namespace

std::vector<SpecBenchRow> benchSpeculation(const SpecBenchOptions& options,
                                           const std::function<void(const std::string&)>& progress) {
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  if (options.repeats < 1 || options.promptCount < 1 || options.maxNewTokens < 2)
    throw Error("bench spec: repeats and prompts must be at least 1, tokens at least 2");
  for (const std::string& mode : options.modes)
    if (mode != "ram" && mode != "stream") throw Error("bench spec: unknown mode '" + mode + "' (ram, stream)");
  const fs::path promptsFile = options.prompts.empty() ? options.model / "eval.jsonl" : options.prompts;
  WorkDirectory work(options.workDirectory, "strata-bench-spec-");
  std::vector<SpecBenchRow> rows;

  for (const std::string& mode : options.modes) {
    fs::path modelDir = options.model;
    EngineSettings settings = options.settings;
    if (mode == "stream") {
      if (!io::Container::isContainer(modelDir)) {
        say("converting " + modelDir.string() + " to a container for streaming");
        ConvertOptions c;
        c.input = modelDir;
        c.output = work.path() / "container";
        convertModel(c);
        modelDir = c.output;
      }
      EngineSettings probe = settings;
      probe.memory.budgetBytes = int64_t{1} << 50;
      const MemoryPlan all = Engine::plan(modelDir, probe);
      const auto experts = static_cast<int64_t>(options.streamExpertFraction * all.expertBytes * all.expertCount);
      settings.memory.budgetBytes = all.residentBytes + all.kvBytes + all.scratchBytes +
                                    std::max(experts, all.minimumExpertBytes);
      settings.memory.pinnedFraction = 0;  // every expert competes for the small cache
    }
    settings.speculation = allOff();
    auto engine = Engine::open(modelDir, settings);
    SpeculationSettings autoSettings;
    autoSettings.mtpDepth = options.mtpDepth;
    autoSettings.mtpMinProbability = options.mtpMinProbability;
    autoSettings.mtpDraftVocabulary = options.mtpDraftVocabulary;
    settings.speculation = autoSettings;
    auto tuned = Engine::open(modelDir, settings);  // its own tuner, settling from cold
    if (!engine->tokenizer()) throw Error(modelDir.string() + ": bench spec needs the model's tokenizer.json");
    const std::vector<Prompt> general = loadPrompts(*engine, promptsFile, options.promptCount, false);
    const std::vector<Prompt> json = loadPrompts(*engine, promptsFile, options.promptCount, true);
    if (general.empty()) throw Error(promptsFile.string() + ": no prompts");

    std::vector<std::string> drafters;
    if (engine->info().hasMtp) drafters.push_back("mtp");
    drafters.push_back("ngram");
    if (!json.empty()) drafters.push_back("grammar");
    drafters.push_back("auto");
    struct Samples {
      std::vector<double> ratio, tokS, plainTokS, draftCost, verifyCost, ceiling;
      Run total;
      DrafterStats start;
    };
    std::map<std::string, Samples> samples;

    say(mode + ": warming up (plain decoding, and self-tuning for auto)");
    decodeAll(*engine, general, options.maxNewTokens);
    for (int pass = 0; pass < 3; ++pass) decodeAll(*tuned, general, options.maxNewTokens);
    for (const std::string& d : drafters) samples[d].start = totals(d == "auto" ? *tuned : *engine, d);

    // Each drafter's run is paired with a plain run on the same engine and prompts, right
    // before or after it (alternating), so drift on a busy machine cancels out of the ratio.
    for (int r = 0; r < options.repeats; ++r) {
      for (const std::string& d : drafters) {
        const bool isJson = d == "grammar";
        Engine& target = d == "auto" ? *tuned : *engine;
        const std::vector<Prompt>& prompts = isJson ? json : general;
        const SpeculationSettings on = d == "auto" ? autoSettings : forced(d, options);
        Run run, base;
        for (int half = 0; half < 2; ++half) {
          const bool drafting = (half == 0) == (r % 2 == 1);
          target.setSpeculation(drafting ? on : allOff());
          (drafting ? run : base) = decodeAll(target, prompts, options.maxNewTokens);
        }
        target.setSpeculation(on);
        Samples& s = samples[d];
        s.ratio.push_back(run.tokS() / base.tokS());
        s.tokS.push_back(run.tokS());
        s.plainTokS.push_back(base.tokS());
        // A round's time in plain steps: 1 + draft cost + verify cost. Without a verify cost
        // (extra rows free) the round would give the ceiling.
        const double plainStep = 1.0 / base.tokS();
        const double draftCost = run.draftSeconds / run.forwards / plainStep;
        s.draftCost.push_back(draftCost);
        s.verifyCost.push_back((run.seconds - run.draftSeconds) / run.forwards / plainStep - 1.0);
        s.ceiling.push_back(run.tokens / run.forwards / (1.0 + draftCost));
        s.total.tokens += run.tokens;
        s.total.forwards += run.forwards;
        say(mode + " " + d + " repeat " + std::to_string(r + 1) + ": " + std::to_string(run.tokS()) +
            " tok/s vs plain " + std::to_string(base.tokS()));
      }
    }
    for (const std::string& d : drafters) {
      const Samples& s = samples.at(d);
      const DrafterStats end = totals(d == "auto" ? *tuned : *engine, d);
      SpecBenchRow row;
      row.drafter = d;
      row.mode = mode;
      row.rounds = end.rounds - s.start.rounds;
      row.drafted = end.drafted - s.start.drafted;
      row.accepted = end.accepted - s.start.accepted;
      row.acceptance = row.rounds ? static_cast<double>(end.firstAccepted - s.start.firstAccepted) / row.rounds : 0;
      row.tokensPerForward = s.total.forwards > 0 ? s.total.tokens / s.total.forwards : 0;
      row.speedup = median(s.ratio);
      row.tokensPerSecond = median(s.tokS);
      row.plainTokensPerSecond = median(s.plainTokS);
      row.draftCost = median(s.draftCost);
      row.verifyCost = median(s.verifyCost);
      row.ceiling = median(s.ceiling);
      rows.push_back(row);
    }
  }
  return rows;
}

}  // namespace strata
