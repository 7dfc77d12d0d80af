#pragma once
// A conversation written out for people (Markdown) and for programs (JSON).
//
// The JSON shape, version 1 (OpenAI-like messages, so other tools can read it):
//   {"format": "strata-conversation", "version": 1,
//    "title": "…", "created": "2026-11-30T16:20:00Z",
//    "messages": [{"role": "user" | "assistant" | "system", "content": "…",
//                  "reasoning_content": "…"  (only where the turn has thinking)}]}
#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QString>

#include "store/conversation_store.h"

namespace strata::app {

inline constexpr const char* kConversationFormat = "strata-conversation";
inline constexpr int kConversationFormatVersion = 1;

struct ConversationDocument {
  QString title;
  QDateTime created;  // invalid: unknown
  QList<StoredMessage> messages;
};

// "# Title", then each turn under "## User" / "## Assistant" / "## System"; thinking in a
// collapsed <details> block; the content verbatim (so code fences survive).
QString conversationToMarkdown(const ConversationDocument& doc);

// The versioned JSON above, indented.
QByteArray conversationToJson(const ConversationDocument& doc);

}  // namespace strata::app
