"""The upstream GLM chat template compiled as Hugging Face transformers compiles chat templates
(sandboxed jinja2, trim_blocks/lstrip_blocks, loop controls, transformers' own `tojson`:
key order kept, non-ASCII written raw). Shared by the fixture renderer and the trainer."""

import json
import pathlib

import jinja2
import jinja2.ext
from jinja2.sandbox import ImmutableSandboxedEnvironment

TEMPLATE_PATH = pathlib.Path(__file__).resolve().parents[3] / "shared" / "reference" / "glm-4.7-chat_template.jinja"


def compile_template(text):
    def raise_exception(message):
        raise jinja2.exceptions.TemplateError(message)

    def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
        return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators,
                          sort_keys=sort_keys)

    env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True,
                                        extensions=[jinja2.ext.loopcontrols])
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    return env.from_string(text)
