// Reads tokenizer.json into TokenizerConfig. Field names and defaults follow Hugging Face
// tokenizers' serde layout; anything we do not implement is refused by name rather than
// ignored, because a silently skipped normalizer or pre-tokenizer gives wrong ids.
#include <cctype>
#include <limits>
#include <nlohmann/json.hpp>

#include "strata/error.h"
#include "tokenizer/tokenizer_config.h"

namespace strata::tokenizer {
namespace {

using Json = nlohmann::json;

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& path, const std::string& problem) const {
    throw Error(source_ + ": " + path + ": " + problem);
  }

  // The member, or nullptr when it is absent or null.
  const Json* find(const Json& object, const char* key) const {
    auto it = object.find(key);
    return it == object.end() || it->is_null() ? nullptr : &*it;
  }

  const Json& require(const Json& object, const char* key, const std::string& path) const {
    const Json* value = find(object, key);
    if (!value) fail(path, std::string("the field \"") + key + "\" is missing");
    return *value;
  }

  std::string string(const Json& value, const std::string& path) const {
    if (!value.is_string())
      fail(path, "expected a string, found " + std::string(value.type_name()));
    return value.get<std::string>();
  }

  bool flag(const Json& object, const char* key, bool fallback, const std::string& path) const {
    const Json* value = find(object, key);
    if (!value) return fallback;
    if (!value->is_boolean()) fail(path + "." + key, "expected true or false");
    return value->get<bool>();
  }

  int32_t id(const Json& value, const std::string& path) const {
    if (!value.is_number_integer() || value.get<int64_t>() < 0 ||
        value.get<int64_t>() > std::numeric_limits<int32_t>::max())
      fail(path, "expected a token id (an integer from 0 to 2^31-1), found " + value.dump());
    return static_cast<int32_t>(value.get<int64_t>());
  }

  const std::string& typeOf(const Json& object, const std::string& path) const {
    if (!object.is_object())
      fail(path, "expected an object, found " + std::string(object.type_name()));
    const Json& type = require(object, "type", path);
    if (!type.is_string()) fail(path + ".type", "expected a string");
    return type.get_ref<const std::string&>();
  }

 private:
  const std::string& source_;
};

void readNormalizer(const Reader& r, const Json& node, const std::string& path,
                    std::vector<NormalizationForm>& forms) {
  const std::string& type = r.typeOf(node, path);
  if (type == "NFC")
    forms.push_back(NormalizationForm::NFC);
  else if (type == "NFD")
    forms.push_back(NormalizationForm::NFD);
  else if (type == "NFKC")
    forms.push_back(NormalizationForm::NFKC);
  else if (type == "NFKD")
    forms.push_back(NormalizationForm::NFKD);
  else if (type == "Sequence") {
    const Json& list = r.require(node, "normalizers", path);
    if (!list.is_array()) r.fail(path + ".normalizers", "expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      readNormalizer(r, list[i], path + ".normalizers[" + std::to_string(i) + "]", forms);
  } else {
    r.fail(path, "unsupported normalizer " + type +
                     " (supported: NFC, NFD, NFKC, NFKD and a Sequence of them)");
  }
}

// A literal pattern as a PCRE2 regex: every ASCII punctuation character escaped.
std::string escapeRegex(const std::string& literal) {
  std::string out;
  for (char c : literal) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x80 && !std::isalnum(u) && c != '_' && u >= 0x20) out.push_back('\\');
    out.push_back(c);
  }
  return out;
}

SplitBehavior readBehavior(const Reader& r, const Json& node, const std::string& path) {
  const std::string name = r.string(r.require(node, "behavior", path), path + ".behavior");
  if (name == "Removed") return SplitBehavior::Removed;
  if (name == "Isolated") return SplitBehavior::Isolated;
  if (name == "MergedWithPrevious") return SplitBehavior::MergedWithPrevious;
  if (name == "MergedWithNext") return SplitBehavior::MergedWithNext;
  if (name == "Contiguous") return SplitBehavior::Contiguous;
  r.fail(path + ".behavior", "unknown split behavior '" + name +
                                 "' (expected Removed, Isolated, MergedWithPrevious, "
                                 "MergedWithNext or Contiguous)");
}

void readPreTokenizer(const Reader& r, const Json& node, const std::string& path,
                      std::vector<PreTokenizerStep>& steps) {
  const std::string& type = r.typeOf(node, path);
  PreTokenizerStep step;
  step.where = path;
  if (type == "Sequence") {
    const Json& list = r.require(node, "pretokenizers", path);
    if (!list.is_array()) r.fail(path + ".pretokenizers", "expected an array");
    for (size_t i = 0; i < list.size(); ++i)
      readPreTokenizer(r, list[i], path + ".pretokenizers[" + std::to_string(i) + "]", steps);
    return;
  }
  if (type == "Split") {
    step.kind = PreTokenizerStep::Kind::Split;
    const Json& pattern = r.require(node, "pattern", path);
    if (const Json* regex = pattern.is_object() ? r.find(pattern, "Regex") : nullptr)
      step.regex = r.string(*regex, path + ".pattern.Regex");
    else if (const Json* literal = pattern.is_object() ? r.find(pattern, "String") : nullptr)
      step.regex = escapeRegex(r.string(*literal, path + ".pattern.String"));
    else
      r.fail(path + ".pattern", "expected {\"Regex\": ...} or {\"String\": ...}");
    step.behavior = readBehavior(r, node, path);
    step.invert = r.flag(node, "invert", false, path);
  } else if (type == "ByteLevel") {
    step.kind = PreTokenizerStep::Kind::ByteLevel;
    step.addPrefixSpace = r.flag(node, "add_prefix_space", true, path);
    step.useRegex = r.flag(node, "use_regex", true, path);
  } else if (type == "Digits") {
    step.kind = PreTokenizerStep::Kind::Digits;
    step.individualDigits = r.flag(node, "individual_digits", false, path);
  } else {
    r.fail(path, "unsupported pre-tokenizer " + type +
                     " (supported: Split, ByteLevel, Digits and a Sequence of them)");
  }
  steps.push_back(std::move(step));
}

void checkDecoder(const Reader& r, const Json* node, const std::string& path) {
  if (!node)
    r.fail(path, "no decoder; Strata needs the ByteLevel decoder of a byte-level BPE tokenizer");
  const std::string& type = r.typeOf(*node, path);
  if (type == "ByteLevel") return;
  if (type == "Sequence") {
    const Json& list = r.require(*node, "decoders", path);
    if (!list.is_array() || list.empty()) r.fail(path + ".decoders", "expected a non-empty array");
    for (size_t i = 0; i < list.size(); ++i)
      checkDecoder(r, &list[i], path + ".decoders[" + std::to_string(i) + "]");
    return;
  }
  r.fail(path, "unsupported decoder " + type + " (only ByteLevel is supported)");
}

BpeConfig readModel(const Reader& r, const Json& root) {
  const Json* model = r.find(root, "model");
  if (!model) r.fail("model", "the \"model\" section is missing; a tokenizer.json needs one");
  if (!model->is_object()) r.fail("model", "expected an object");
  const Json* type = r.find(*model, "type");
  if (type && (!type->is_string() || type->get<std::string>() != "BPE"))
    r.fail("model.type", "model type " +
                             (type->is_string() ? type->get<std::string>() : type->dump()) +
                             " is not supported; only BPE is");
  if (!type && !r.find(*model, "merges"))
    r.fail("model", "no \"type\" and no \"merges\": not a BPE model");

  BpeConfig bpe;
  if (const Json* dropout = r.find(*model, "dropout"))
    if (!dropout->is_number() || dropout->get<double>() != 0.0)
      r.fail("model.dropout", "BPE dropout is not supported (it is for training)");
  for (const char* key : {"continuing_subword_prefix", "end_of_word_suffix"})
    if (const Json* affix = r.find(*model, key))
      if (!affix->is_string() || !affix->get<std::string>().empty())
        r.fail(std::string("model.") + key, "is not supported (byte-level BPE does not use it)");
  bpe.ignoreMerges = r.flag(*model, "ignore_merges", false, "model");
  bpe.byteFallback = r.flag(*model, "byte_fallback", false, "model");
  bpe.fuseUnk = r.flag(*model, "fuse_unk", false, "model");
  if (const Json* unk = r.find(*model, "unk_token"))
    bpe.unkToken = r.string(*unk, "model.unk_token");

  const Json& vocab = r.require(*model, "vocab", "model");
  if (!vocab.is_object()) r.fail("model.vocab", "expected an object of token -> id");
  bpe.vocab.reserve(vocab.size());
  for (const auto& [token, id] : vocab.items())
    bpe.vocab.emplace_back(token, r.id(id, "model.vocab[\"" + token + "\"]"));

  const Json& merges = r.require(*model, "merges", "model");
  if (!merges.is_array()) r.fail("model.merges", "expected an array");
  bpe.merges.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const Json& m = merges[i];
    const std::string path = "model.merges[" + std::to_string(i) + "]";
    if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      bpe.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
    } else if (m.is_string()) {
      const std::string& line = m.get_ref<const std::string&>();
      if (line.rfind("#version", 0) == 0) continue;  // a merges.txt header carried along
      const size_t space = line.find(' ');
      if (space == std::string::npos || line.find(' ', space + 1) != std::string::npos)
        r.fail(path, "'" + line + "' is not two tokens separated by one space");
      bpe.merges.emplace_back(line.substr(0, space), line.substr(space + 1));
    } else {
      r.fail(path, "expected \"a b\" or [\"a\", \"b\"], found " + m.dump());
    }
  }
  return bpe;
}

std::vector<AddedTokenConfig> readAddedTokens(const Reader& r, const Json& root) {
  std::vector<AddedTokenConfig> tokens;
  const Json* list = r.find(root, "added_tokens");
  if (!list) return tokens;
  if (!list->is_array()) r.fail("added_tokens", "expected an array");
  for (size_t i = 0; i < list->size(); ++i) {
    const Json& node = (*list)[i];
    const std::string path = "added_tokens[" + std::to_string(i) + "]";
    if (!node.is_object()) r.fail(path, "expected an object");
    AddedTokenConfig t;
    t.id = r.id(r.require(node, "id", path), path + ".id");
    t.content = r.string(r.require(node, "content", path), path + ".content");
    if (t.content.empty()) r.fail(path + ".content", "an added token cannot be empty");
    t.special = r.flag(node, "special", false, path);
    t.normalized = r.flag(node, "normalized", true, path);
    t.lstrip = r.flag(node, "lstrip", false, path);
    t.rstrip = r.flag(node, "rstrip", false, path);
    t.singleWord = r.flag(node, "single_word", false, path);
    tokens.push_back(std::move(t));
  }
  return tokens;
}

}  // namespace

TokenizerConfig parseTokenizerJson(std::string_view text, const std::string& source) {
  Json root;
  try {
    root = Json::parse(text.begin(), text.end());
  } catch (const Json::parse_error& e) {
    throw Error(source + ": not valid JSON (" + e.what() + ")");
  }
  const Reader r(source);
  if (!root.is_object()) r.fail("top level", "expected a JSON object (a tokenizer.json)");

  TokenizerConfig config;
  config.source = source;
  config.model = readModel(r, root);
  config.addedTokens = readAddedTokens(r, root);
  if (const Json* n = r.find(root, "normalizer"))
    readNormalizer(r, *n, "normalizer", config.normalizer);
  if (const Json* p = r.find(root, "pre_tokenizer"))
    readPreTokenizer(r, *p, "pre_tokenizer", config.preTokenizer);
  checkDecoder(r, r.find(root, "decoder"), "decoder");
  return config;
}

}  // namespace strata::tokenizer
