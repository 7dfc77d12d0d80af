"""GLM chat rendering for training and evaluation, with the upstream template itself.

The prompt is rendered by ../shared/reference/glm-4.7-chat_template.jinja through jinja2
exactly as Hugging Face transformers renders chat templates (the environment and `tojson` of
tools/chat_format/render_fixtures.py), so training text is what Strata's C++ formatter
produces for the same messages (spec §5).

A training example is (prompt, completion):
  prompt      the conversation up to the last user turn, rendered with
              add_generation_prompt=True and the row's enable_thinking: it ends with
              `<|assistant|><think>` (thinking on) or `<|assistant|></think>` (off);
  completion  what the model must generate after it: `reasoning</think>answer` or
              `</think>answer` when thinking is on (the template's rendering of that turn,
              an empty reasoning written as `</think>` right away), `answer` when off; then
              the end token `<|user|>`. GLM has no end-of-turn token: a turn ends at the next
              role token, and `<|user|>` is in the model's eos_token_id list.
Only completion tokens carry loss.
"""

from __future__ import annotations

import os

import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "chat_format"))
from hf_template import TEMPLATE_PATH, compile_template  # noqa: E402

END_OF_TURN = "<|user|>"  # the token the model emits after its answer (an eos id)


class ChatRenderer:
    def __init__(self, template_path: str = TEMPLATE_PATH):
        with open(template_path, encoding="utf-8") as f:
            self.template = compile_template(f.read())

    def render(self, messages, add_generation_prompt: bool, enable_thinking: bool | None = None) -> str:
        options = {} if enable_thinking is None else {"enable_thinking": enable_thinking}
        return self.template.render(messages=messages, tools=None, documents=None,
                                    add_generation_prompt=add_generation_prompt, **options)

    def prompt(self, messages, enable_thinking: bool | None = None) -> str:
        """What an engine feeds the model to answer the last user turn (template defaults:
        thinking on)."""
        return self.render(messages, True, enable_thinking)

    def training_pair(self, messages, enable_thinking: bool):
        """(prompt, completion) for a conversation whose last message is the assistant turn
        to learn. The completion ends with END_OF_TURN."""
        *context, reply = messages
        if reply["role"] != "assistant" or not context or context[-1]["role"] != "user":
            raise ValueError("a training conversation ends with a user turn and an assistant reply")
        prompt = self.render(context, True, enable_thinking)
        content = reply["content"].strip()
        reasoning = (reply.get("reasoning_content") or "").strip()
        if enable_thinking:
            completion = (reasoning + "</think>" if reasoning else "</think>") + content
            # With reasoning, prompt + completion is the template's own rendering of the turn.
            full = self.render(messages, False)
            assert not reasoning or full == prompt + completion, "template rendering disagrees"
        else:
            completion = content
            plain = context + [{"role": "assistant", "content": content}]
            assert self.render(plain, False) == prompt + completion, "template rendering disagrees"
        return prompt, completion + END_OF_TURN


def answer_from_generation(text: str) -> str:
    """The assistant content of a generated reply (after the prompt): the reasoning before
    `</think>` is dropped, the content stripped as the template strips it."""
    if "</think>" in text:
        text = text.split("</think>")[-1]
    return text.strip()
