// strata-container.json: reading and writing the container's table of contents.
#include <nlohmann/json.hpp>

#include "io/container_format.h"
#include "strata/error.h"

namespace strata::io {
namespace {

using ordered_json = nlohmann::ordered_json;

// A plain file name: manifests never point outside their directory.
bool isPlainName(const std::string& name) {
  return !name.empty() && name != "." && name != ".." && name.find('/') == std::string::npos &&
         name.find('\0') == std::string::npos;
}

}  // namespace

std::string formatManifest(const ContainerManifest& m) {
  ordered_json root;
  root["format"] = kContainerFormat;
  root["format_version"] = kContainerVersion;
  root["source_fingerprint"] = m.identity.sourceFingerprint;
  root["converter"] = m.identity.converter;
  root["policy"] = ordered_json::parse(m.identity.policy);
  ordered_json files = ordered_json::array();
  for (const auto& f : m.files) {
    ordered_json entry;
    entry["name"] = f.name;
    entry["role"] = f.role == FileRole::Resident ? "resident" : "experts";
    if (f.role == FileRole::Experts) entry["layer"] = f.layer;
    entry["bytes"] = f.bytes;
    entry["header_xxh3"] = hex64(f.headerChecksum);
    files.push_back(entry);
  }
  root["files"] = files;
  root["copied"] = m.copiedFiles;
  return root.dump(1) + "\n";
}

ContainerManifest parseManifest(const std::string& text, const std::string& where) {
  ordered_json root;
  try {
    root = ordered_json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": not valid JSON: " + e.what());
  }
  auto fail = [&](const std::string& problem) -> void { throw Error(where + ": " + problem); };
  if (!root.is_object()) fail("expected a JSON object");
  if (root.value("format", std::string()) != kContainerFormat)
    fail(std::string("\"format\" must be \"") + kContainerFormat + "\"");
  if (!root.contains("format_version") || !root["format_version"].is_number_integer())
    fail("\"format_version\" must be an integer");
  if (root["format_version"].get<int>() != kContainerVersion)
    fail(unsupportedVersionText(root["format_version"].dump()));
  ContainerManifest m;
  try {
    m.identity.sourceFingerprint = root.at("source_fingerprint").get<std::string>();
    m.identity.converter = root.at("converter").get<std::string>();
    m.identity.policy = root.at("policy").dump();
    for (const ordered_json& f : root.at("files")) {
      ContainerManifest::File file;
      file.name = f.at("name").get<std::string>();
      if (!isPlainName(file.name)) fail("file name '" + file.name + "' is not a plain file name");
      const std::string role = f.at("role").get<std::string>();
      if (role != "resident" && role != "experts") fail("file role '" + role + "' is unknown");
      file.role = role == "resident" ? FileRole::Resident : FileRole::Experts;
      if (file.role == FileRole::Experts) file.layer = f.at("layer").get<int>();
      file.bytes = f.at("bytes").get<uint64_t>();
      const auto checksum = parseHex64(f.at("header_xxh3").get<std::string>());
      if (!checksum) fail("header_xxh3 of " + file.name + " must be 16 hex digits");
      file.headerChecksum = *checksum;
      m.files.push_back(file);
    }
    for (const ordered_json& name : root.at("copied")) {
      m.copiedFiles.push_back(name.get<std::string>());
      if (!isPlainName(m.copiedFiles.back())) fail("copied file name is not a plain file name");
    }
  } catch (const nlohmann::json::exception& e) {
    throw Error(where + ": " + e.what());
  }
  return m;
}

}  // namespace strata::io
