#pragma once
// Reads a conversation file (JSON) into a ConversationDocument. Accepted shapes:
//   - Strata's own, {"format": "strata-conversation", "version": 1, …} (conversation_export.h);
//   - a plain OpenAI request body, {"messages": [...]} (other keys ignored);
//   - a bare messages array, [...].
// Messages are {"role", "content", "reasoning_content"?}; roles user, assistant, system
// ("developer" is read as system); content is text, null or a list of {"type": "text"} parts.
// Anything else is refused with a message naming the field and what was expected.
#include <QByteArray>
#include <QString>
#include <optional>

#include "store/conversation_export.h"

namespace strata::app {

std::optional<ConversationDocument> parseConversationJson(const QByteArray& json, QString* error);

}  // namespace strata::app
