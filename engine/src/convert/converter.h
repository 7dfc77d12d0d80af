#pragma once
// The streaming FP8/BF16 -> Strata container converter behind strata::convertModel
// (strata/convert.h). The pieces: convert/source.h reads and validates the checkpoint,
// convert/plan.h decides the whole layout up front, convert/tensor_encoder.h turns rows into
// stored bytes, io/container_writer.h writes them, convert/journal.h records what is durable.
//
// The output directory's work area while a conversion is unfinished:
//   .strata-convert/state.json     the source table and policy (written once, atomically)
//   .strata-convert/journal.jsonl  finished units and deleted shards (appended, fsync'd)
// It is removed after the manifest is written, unless ConvertOptions::keepJournal.
#include "strata/convert.h"

namespace strata::convert {

inline constexpr const char* kWorkDirName = ".strata-convert";
inline constexpr const char* kStateFileName = "state.json";
inline constexpr const char* kJournalFileName = "journal.jsonl";

// Files copied from the source folder when present (config.json always).
inline constexpr const char* kCopiedFiles[] = {
    "config.json",           "generation_config.json",  "tokenizer.json",
    "tokenizer_config.json", "special_tokens_map.json", "chat_template.jinja"};

}  // namespace strata::convert
