#include "convert/policy.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "strata/error.h"

namespace strata::convert {
namespace {

using io::QuantFormat;

bool startsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}
bool endsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

// Reads a decimal index at the start of `s` followed by '.'; advances past the dot.
bool readIndex(std::string_view& s, int& value) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (ec != std::errc() || end == s.data() || end == s.data() + s.size() || *end != '.')
    return false;
  s.remove_prefix(static_cast<size_t>(end - s.data()) + 1);
  return true;
}

TensorRole layerRole(std::string_view rest, TensorName& out) {
  std::string_view experts = rest;
  if (startsWith(experts, "mlp.experts.")) {
    experts.remove_prefix(12);
    int expert = 0;
    if (readIndex(experts, expert)) {
      const char* projections[3] = {"gate_proj.weight", "up_proj.weight", "down_proj.weight"};
      for (int p = 0; p < 3; ++p)
        if (experts == projections[p]) {
          out.expert = expert;
          out.projection = p;
          return TensorRole::RoutedExpert;
        }
    }
    return TensorRole::Other;
  }
  if (startsWith(rest, "mlp.shared_experts.") && endsWith(rest, "_proj.weight"))
    return TensorRole::SharedExpert;
  if (rest == "mlp.gate_proj.weight" || rest == "mlp.up_proj.weight" ||
      rest == "mlp.down_proj.weight")
    return TensorRole::DenseMlp;
  if (rest == "mlp.gate.weight") return TensorRole::Router;
  if (rest == "mlp.gate.e_score_correction_bias") return TensorRole::RouterBias;
  if (rest == "self_attn.indexer.weights_proj.weight") return TensorRole::IndexerWeightsProj;
  if (rest == "self_attn.indexer.wq_b.weight" || rest == "self_attn.indexer.wk.weight")
    return TensorRole::IndexerProjection;
  for (const char* p : {"q_a_proj", "q_b_proj", "kv_a_proj_with_mqa", "kv_b_proj", "o_proj"})
    if (rest == std::string("self_attn.") + p + ".weight") return TensorRole::Attention;
  if (rest == "eh_proj.weight") return TensorRole::MtpProjection;
  if (rest == "shared_head.head.weight") return TensorRole::LmHead;
  if (endsWith(rest, "norm.weight") || endsWith(rest, "norm.bias")) return TensorRole::Norm;
  return TensorRole::Other;
}

QuantChoice keepExact(io::DType source) {
  return {source == io::DType::BF16 ? QuantFormat::BF16 : QuantFormat::F32, 0};
}

Policy makePolicy(std::string name, QuantChoice experts, QuantChoice dense) {
  Policy p;
  p.name = std::move(name);
  p.routedExperts = experts;
  p.dense = dense;
  return p;
}

}  // namespace

std::string_view roleName(TensorRole role) {
  switch (role) {
    case TensorRole::Embedding:
      return "embedding";
    case TensorRole::LmHead:
      return "lm_head";
    case TensorRole::Attention:
      return "attention";
    case TensorRole::IndexerProjection:
      return "indexer";
    case TensorRole::IndexerWeightsProj:
      return "indexer_weights_proj";
    case TensorRole::DenseMlp:
      return "dense_mlp";
    case TensorRole::SharedExpert:
      return "shared_expert";
    case TensorRole::RoutedExpert:
      return "routed_expert";
    case TensorRole::Router:
      return "router";
    case TensorRole::RouterBias:
      return "router_bias";
    case TensorRole::Norm:
      return "norm";
    case TensorRole::MtpProjection:
      return "mtp_eh_proj";
    case TensorRole::Other:
      return "other";
  }
  return "?";
}

TensorName classifyTensor(std::string_view name) {
  TensorName out;
  if (name == "model.embed_tokens.weight") {
    out.role = TensorRole::Embedding;
  } else if (name == "lm_head.weight") {
    out.role = TensorRole::LmHead;
  } else if (name == "model.norm.weight") {
    out.role = TensorRole::Norm;
  } else if (startsWith(name, "model.layers.")) {
    std::string_view rest = name.substr(13);
    int layer = 0;
    if (readIndex(rest, layer) && layer >= 0) {
      out.layer = layer;
      out.role = layerRole(rest, out);
    }
  }
  return out;
}

std::string describe(const QuantChoice& c) {
  std::string text(io::quantFormatName(c.format));
  if (io::isInteger(c.format))
    text += c.groupSize == 0 ? "-row" : "-g" + std::to_string(c.groupSize);
  return text;
}

std::string Policy::toJson() const {
  nlohmann::ordered_json j;
  j["name"] = name;
  j["routed_experts"] = describe(routedExperts);
  j["attention_dense_shared"] = describe(dense);
  j["embed_tokens_lm_head"] = describe(embeddings);
  j["mtp_layer"] = describe(mtp);
  j["kept_exact"] =
      "router, e_score_correction_bias, norms, indexer weights_proj, eh_proj: "
      "bf16 sources stay bf16, others f32";
  return j.dump();
}

const std::vector<std::string>& policyNames() {
  static const std::vector<std::string> names = {"default",  "int8",      "int4-g32",
                                                 "int4-g64", "int4-g128", "int4-row"};
  return names;
}

Policy policyByName(std::string_view name) {
  const QuantChoice int8Row{QuantFormat::Int8, 0};
  if (name == "default") return makePolicy("default", {QuantFormat::Int4, 32}, int8Row);
  if (name == "int8") return makePolicy("int8", int8Row, int8Row);
  for (int64_t group : {32, 64, 128})
    if (name == "int4-g" + std::to_string(group))
      return makePolicy(std::string(name), {QuantFormat::Int4, group}, {QuantFormat::Int4, group});
  if (name == "int4-row")
    return makePolicy("int4-row", {QuantFormat::Int4, 0}, {QuantFormat::Int4, 0});
  std::string known;
  for (const std::string& n : policyNames()) known += (known.empty() ? "" : ", ") + n;
  throw Error("unknown conversion policy '" + std::string(name) + "' (known: " + known + ")");
}

QuantChoice chooseFormat(const Policy& policy, const TensorName& tensor, bool mtpLayer,
                         io::DType source, const std::vector<int64_t>& shape) {
  QuantChoice choice;
  switch (tensor.role) {
    case TensorRole::Embedding:
    case TensorRole::LmHead:
      choice = policy.embeddings;
      break;
    case TensorRole::RoutedExpert:
      choice = mtpLayer ? policy.mtp : policy.routedExperts;
      break;
    case TensorRole::Attention:
    case TensorRole::IndexerProjection:
    case TensorRole::DenseMlp:
    case TensorRole::SharedExpert:
      choice = mtpLayer ? policy.mtp : policy.dense;
      break;
    default:
      return keepExact(source);
  }
  bool quantizable = shape.size() == 2;
  for (int64_t dim : shape) quantizable = quantizable && dim > 0;
  return quantizable ? choice : keepExact(source);
}

}  // namespace strata::convert
