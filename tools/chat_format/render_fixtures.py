#!/usr/bin/env python3
"""Renders the GLM chat-format fixtures in tests/data/chat_format/ with the upstream jinja template.

Each case writes <name>.json (the input: {"messages", "tools"?, "options"?}) and <name>.txt (the
prompt the template renders, UTF-8, no newline added). The C++ renderer (engine/src/chat/) must
reproduce every .txt byte for byte; tests/engine/test_chat_format.cpp checks it.

The template is rendered exactly as Hugging Face transformers does (utils/chat_template_utils.py,
_compile_jinja_template / render_jinja_template):
  - jinja2.sandbox.ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
    extensions=[jinja2.ext.loopcontrols]) (transformers also adds its AssistantTracker extension,
    which only defines a {% generation %} tag this template does not use);
  - a `tojson` filter replaced by json.dumps(x, ensure_ascii=..., indent=None, separators=None,
    sort_keys=False) (key order kept, ", " / ": " separators, non-ASCII raw);
  - render(messages=..., tools=..., documents=None, add_generation_prompt=..., **options), where an
    option absent from the case is not passed at all (undefined in the template).

Three documented normalizations are applied to the input before rendering, the same ones Strata's
parser applies (engine/src/chat/chat_format.cpp), because the raw template would render nonsense:
  1. tool_calls[].function.arguments given as a JSON string (the OpenAI wire shape) is parsed into
     an object (as vLLM does); the template calls .items() on it and fails on a string.
     Empty or null arguments become {}.
  2. "content": null is treated as absent. Jinja renders None as the text "None", so the raw
     template would print "None" before an assistant's tool calls; vLLM also renders null as "".
  3. A tool message whose content is a non-empty list of {"type": "text"} parts is joined into one
     string (the template's list branch would print each part's Python dict repr).

Usage: python3 tools/chat_format/render_fixtures.py [--check]
  --check  render to memory and compare with the files on disk (exit 1 on any difference).
Needs python3-jinja2 (Debian) and nothing else.
"""
import argparse
import copy
import json
import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from hf_template import TEMPLATE_PATH as TEMPLATE, compile_template  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
OUT_DIR = ROOT / "tests" / "data" / "chat_format"


def normalize(messages):
    messages = copy.deepcopy(messages)
    for m in messages:
        if "content" in m and m["content"] is None:
            del m["content"]
        if m.get("role") == "tool" and m.get("content") and isinstance(m["content"], list) and all(
                isinstance(p, dict) and p.get("type") == "text" for p in m["content"]):
            m["content"] = "".join(p["text"] for p in m["content"])
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function", tc)
            args = fn.get("arguments")
            if not args:
                fn["arguments"] = {}
            elif isinstance(args, str):
                fn["arguments"] = json.loads(args)
    return messages


def render(template, case):
    return template.render(messages=normalize(case["messages"]), tools=case.get("tools"),
                           documents=None,
                           add_generation_prompt=case.get("options", {}).get(
                               "add_generation_prompt", False),
                           **{k: v for k, v in case.get("options", {}).items()
                              if k != "add_generation_prompt"})


WEATHER_TOOL = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Get the current weather for a city.",
        "parameters": {
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "City name"},
                "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            },
            "required": ["city"],
        },
    },
}

# Nested parameters, non-ASCII, escapes and numbers of every shape json.dumps formats specially.
SEARCH_TOOL = {
    "type": "function",
    "function": {
        "name": "search_catalogue",
        "description": "Recherche dans le catalogue — 検索 \"quoted\" \\ back\\slash\ttab\nnewline \u0001 \u007f \u2028 😀",
        "parameters": {
            "type": "object",
            "properties": {
                "query": {"type": "string", "minLength": 1},
                "filters": {
                    "type": "object",
                    "properties": {
                        "price": {"type": "object", "properties": {
                            "min": {"type": "number", "default": 0.0},
                            "max": {"type": "number", "default": 1e16},
                            "step": {"type": "number", "default": 1e-05},
                            "tiny": {"type": "number", "default": 0.0001},
                            "big": {"type": "number", "default": 1234567890123456.7},
                            "neg": {"type": "number", "default": -0.0},
                            "third": {"type": "number", "default": 0.3333333333333333},
                            "huge": {"type": "number", "default": 1.5e300},
                        }},
                        "tags": {"type": "array", "items": {"type": "string"}, "default": []},
                        "in_stock": {"type": "boolean", "default": True},
                        "extra": {"type": "object", "default": {}, "nullable": None},
                        "count": {"type": "integer", "default": 12345678901234567},
                    },
                },
                "ñandú": {"type": "integer", "maximum": -42},
            },
            "required": ["query"],
        },
    },
}

CASES = {
    "empty_generation_prompt": {"messages": [], "options": {"add_generation_prompt": True}},
    "user_only": {"messages": [{"role": "user", "content": "Hello!"}]},
    "user_generation_prompt": {
        "messages": [{"role": "user", "content": "What is 2+2?"}],
        "options": {"add_generation_prompt": True}},
    "thinking_off": {
        "messages": [{"role": "user", "content": "Quick answer please."}],
        "options": {"add_generation_prompt": True, "enable_thinking": False}},
    "thinking_on_explicit": {
        "messages": [{"role": "user", "content": "Think."}],
        "options": {"add_generation_prompt": True, "enable_thinking": True}},
    "system_user": {
        "messages": [{"role": "system", "content": "You are terse."},
                     {"role": "user", "content": "Hi"}],
        "options": {"add_generation_prompt": True}},
    "multi_turn": {
        "messages": [
            {"role": "system", "content": "  Be kind.  \n"},
            {"role": "user", "content": "  first question \n"},
            {"role": "assistant", "content": "first answer"},
            {"role": "user", "content": "second question"},
            {"role": "assistant", "content": "second answer"},
            {"role": "user", "content": "third"}],
        "options": {"add_generation_prompt": True}},
    "reasoning_before_and_after_last_user": {
        "messages": [
            {"role": "user", "content": "q1"},
            {"role": "assistant", "reasoning_content": "old thoughts", "content": "a1"},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "reasoning_content": "\n  new thoughts \n\n", "content": "\n\na2\n"}]},
    "clear_thinking_false": {
        "messages": [
            {"role": "user", "content": "q1"},
            {"role": "assistant", "reasoning_content": "old thoughts", "content": "a1"},
            {"role": "user", "content": "q2"}],
        "options": {"add_generation_prompt": True, "clear_thinking": False}},
    "clear_thinking_true": {
        "messages": [
            {"role": "user", "content": "q1"},
            {"role": "assistant", "reasoning_content": "old thoughts", "content": "a1"},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "reasoning_content": "kept", "content": "a2"}],
        "options": {"clear_thinking": True}},
    "think_in_content": {
        "messages": [
            {"role": "user", "content": "q1"},
            {"role": "assistant", "content": "<think>\nembedded old\n</think>\n\nanswer one"},
            {"role": "user", "content": "q2"},
            {"role": "assistant", "content": "prefix<think>\n\nembedded new\n\n</think>\n\n  answer two"},
            {"role": "assistant", "content": "no open tag\n</think>tail</think>\nlast part"},
            {"role": "assistant", "content": "<think>only an open tag"}]},
    "reasoning_string_keeps_think_in_content": {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "reasoning_content": "", "content": "<think>x</think>y"},
            {"role": "assistant", "reasoning_content": " \n ", "content": "z"}]},
    "no_user_messages": {
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "assistant", "reasoning_content": "r0", "content": "a0"}]},
    "content_lists": {
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "sys "}, {"type": "text", "text": "two"}]},
            {"role": "user", "content": [
                {"type": "text", "text": "Look: "},
                {"type": "image_url", "image_url": {"url": "http://example.com/x.png"}},
                "raw string part",
                {"type": "text", "text": " end"}]},
            {"role": "assistant", "content": [{"type": "text", "text": "  part one "}, {"type": "text", "text": "part two  "}]},
            {"role": "user", "content": []}],
        "options": {"add_generation_prompt": True}},
    "whitespace_strip": {
        "messages": [
            {"role": "user", "content": "\n\t keep user whitespace \t\n"},
            {"role": "assistant", "content": "\u00a0\u3000 stripped by str.strip \u2003\u2028\u0085\u001f"},
            {"role": "assistant", "content": " \n\t "},
            {"role": "assistant", "content": "\u200bzero width is not whitespace\u200b"},
            {"role": "user", "content": ""},
            {"role": "assistant", "reasoning_content": "\u00a0 r \u3000", "content": "\r\nx\x0b\x0c"}]},
    "tools_basic": {
        "messages": [{"role": "user", "content": "Weather in Paris?"}],
        "tools": [WEATHER_TOOL],
        "options": {"add_generation_prompt": True}},
    "tools_nested_non_ascii": {
        "messages": [{"role": "system", "content": "You help shoppers."},
                     {"role": "user", "content": "Trouve un vélo"}],
        "tools": [WEATHER_TOOL, SEARCH_TOOL],
        "options": {"add_generation_prompt": True, "enable_thinking": False}},
    "tool_call_string_args": {
        "messages": [
            {"role": "user", "content": "Weather in Paris?"},
            {"role": "assistant", "content": "",
             "tool_calls": [{"id": "call_1", "type": "function",
                             "function": {"name": "get_weather",
                                          "arguments": {"city": "Paris", "unit": "celsius"}}}]}],
        "tools": [WEATHER_TOOL]},
    "tool_call_mixed_args": {
        "messages": [
            {"role": "user", "content": "search"},
            {"role": "assistant", "reasoning_content": "I should search.", "content": "Searching now.",
             "tool_calls": [{"type": "function", "function": {"name": "search_catalogue", "arguments": {
                 "query": "vélo \"rouge\" \\ 😀\n",
                 "limit": 10, "ratio": 0.5, "big": 1e16, "small": 1e-05, "whole": 100.0, "neg": -3,
                 "flag": False, "nothing": None,
                 "filters": {"price": {"min": 10, "max": 99.99}, "tags": ["a", "ü", 1, True],
                             "nested": {"deep": [{"x": None}]}},
                 "empty_obj": {}, "empty_list": [], "digits": "42"}}}]}],
        "tools": [SEARCH_TOOL]},
    "tool_call_arguments_json_string": {
        "messages": [
            {"role": "user", "content": "Weather?"},
            {"role": "assistant", "content": None,
             "tool_calls": [
                 {"id": "c1", "type": "function", "function": {
                     "name": "get_weather",
                     "arguments": "{\"city\": \"Zürich\", \"days\": 3, \"opts\": {\"z\": 1, \"a\": [2.0, \"x\"]}}"}},
                 {"id": "c2", "type": "function", "function": {"name": "get_weather", "arguments": ""}}]}],
        "tools": [WEATHER_TOOL]},
    "tool_call_flat_shape": {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "tool_calls": [{"name": "get_weather", "arguments": {"city": "Oslo"}}]}]},
    "tool_loop_with_results": {
        "messages": [
            {"role": "system", "content": "sys"},
            {"role": "user", "content": "Weather in Paris and Rome?"},
            {"role": "assistant", "reasoning_content": "Two cities, two calls.", "content": "",
             "tool_calls": [
                 {"id": "a", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Paris"}}},
                 {"id": "b", "type": "function", "function": {"name": "get_weather", "arguments": {"city": "Rome"}}}]},
            {"role": "tool", "tool_call_id": "a", "content": "{\"temp\": 18}"},
            {"role": "tool", "tool_call_id": "b", "content": "  {\"temp\": 25}\n"},
            {"role": "tool", "tool_call_id": "c", "content": ""},
            {"role": "assistant", "reasoning_content": "Got both.", "content": "Paris 18, Rome 25.",
             "tool_calls": [{"type": "function", "function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}]},
            {"role": "tool", "content": "cold"},
            {"role": "assistant", "content": "Done."},
            {"role": "user", "content": "thanks"}],
        "tools": [WEATHER_TOOL],
        "options": {"add_generation_prompt": True}},
    "tool_result_output_list": {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "tool_calls": [{"type": "function", "function": {"name": "f", "arguments": {}}}]},
            {"role": "tool", "content": "first"},
            {"role": "tool", "content": [{"output": "second"}, "third", {"output": " fourth "}]},
            {"role": "tool", "content": [{"type": "text", "text": "fifth "}, {"type": "text", "text": "part"}]}],
        "options": {"add_generation_prompt": True}},
    "tool_content_missing_or_empty": {
        "messages": [
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": "calling", "tool_calls": [
                {"type": "function", "function": {"name": "f", "arguments": None}}]},
            {"role": "tool"},
            {"role": "tool", "content": None},
            {"role": "tool", "content": []},
            {"role": "tool", "content": "after lists"},
            {"role": "tool", "content": "same run"}],
        "options": {"add_generation_prompt": True}},
    "unicode": {
        "messages": [
            {"role": "system", "content": "Ты — помощник. 你好 🌍"},
            {"role": "user", "content": "e\u0301 vs \u00e9, שלום, 👩‍👩‍👧"},
            {"role": "assistant", "reasoning_content": "思考中…", "content": "Ответ: 42 ✓"},
            {"role": "user", "content": "🙂"}],
        "options": {"add_generation_prompt": True, "enable_thinking": False}},
    "assistant_last_keeps_reasoning": {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "reasoning_content": "thinking", "content": "answer"}]},
    "tools_with_system_and_history": {
        "messages": [
            {"role": "system", "content": "Use tools when needed."},
            {"role": "user", "content": "Weather in Oslo?"},
            {"role": "assistant", "reasoning_content": "call it", "tool_calls": [
                {"type": "function", "function": {"name": "get_weather", "arguments": "{\"city\":\"Oslo\"}"}}]},
            {"role": "tool", "content": "-3C"},
            {"role": "assistant", "content": "It is -3C."},
            {"role": "user", "content": "And tomorrow?"}],
        "tools": [WEATHER_TOOL],
        "options": {"add_generation_prompt": True, "clear_thinking": False}},
    "special_text_in_content": {
        "messages": [
            {"role": "user", "content": "literal <|assistant|> and <tool_call> and </think> in user text"},
            {"role": "assistant", "content": "a</think>b</think>c"}],
        "options": {"add_generation_prompt": True}},
}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    template = compile_template(TEMPLATE.read_text(encoding="utf-8"))
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    bad = 0
    for name, case in CASES.items():
        case_json = json.dumps(case, ensure_ascii=False, indent=1) + "\n"
        text = render(template, case)
        json_path, txt_path = OUT_DIR / f"{name}.json", OUT_DIR / f"{name}.txt"
        if args.check:
            if (json_path.read_text(encoding="utf-8") != case_json
                    or txt_path.read_bytes() != text.encode("utf-8")):
                print(f"differs: {name}")
                bad += 1
        else:
            json_path.write_text(case_json, encoding="utf-8")
            txt_path.write_bytes(text.encode("utf-8"))
    print(f"{len(CASES)} cases, {bad} differ" if args.check else f"wrote {len(CASES)} cases to {OUT_DIR}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
