"""The Jinja environment Hugging Face transformers renders chat templates in, configured once.

transformers compiles a chat template in an immutable sandbox with `trim_blocks`,
`lstrip_blocks`, `loopcontrols` and its `{% generation %}` block, a `tojson` that neither
HTML-escapes nor escapes non-ASCII text, and the `raise_exception` / `strftime_now` globals.
The reference renderer (`hf/reference.py`) renders with this environment and the converter
(`convert/`) parses with it, so both read a template the way transformers does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import jinja2
from jinja2 import nodes
from jinja2.ext import Extension, loopcontrols
from jinja2.parser import Parser
from jinja2.sandbox import ImmutableSandboxedEnvironment


class GenerationBlock(Extension):
    """`{% generation %}...{% endgeneration %}`: transformers marks assistant text with it.

    Only the rendered text matters here (not the assistant token mask), so the block renders
    its body unchanged, as transformers' tracker does.
    """

    tags = {"generation"}

    def parse(self, parser: Parser) -> nodes.Node:
        lineno = next(parser.stream).lineno
        body = parser.parse_statements(("name:endgeneration",), drop_needle=True)
        call = self.call_method("_render_body")
        return nodes.CallBlock(call, [], [], body).set_lineno(lineno)

    def _render_body(self, caller: Callable[[], str]) -> str:
        return caller()


def tojson(
    value: Any,
    ensure_ascii: bool = False,
    indent: int | str | None = None,
    separators: tuple[str, str] | None = None,
    sort_keys: bool = False,
) -> str:
    """Python's `json.dumps` with transformers' defaults: no HTML escaping, UTF-8 kept."""
    return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


def raise_exception(message: str) -> None:
    raise jinja2.exceptions.TemplateError(message)


def strftime_now(format: str) -> str:
    return datetime.now().strftime(format)


def environment() -> ImmutableSandboxedEnvironment:
    """A fresh Jinja environment configured like transformers' chat-template environment."""
    env = ImmutableSandboxedEnvironment(
        trim_blocks=True, lstrip_blocks=True, extensions=[GenerationBlock, loopcontrols]
    )
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env


def syntax_error(exc: jinja2.TemplateSyntaxError) -> str:
    """The one line naming where a template is not valid Jinja."""
    return f"the chat template is not valid Jinja (line {exc.lineno}: {exc.message})"


class _GenerationAsScope(jinja2.visitor.NodeTransformer):
    def visit_CallBlock(self, node: nodes.CallBlock) -> nodes.Node:
        self.generic_visit(node)  # NodeTransformer edits the node's children in place
        call = node.call
        if isinstance(call.node, nodes.ExtensionAttribute) and call.node.name == "_render_body":
            return nodes.Scope(node.body, lineno=node.lineno)
        return node


def parse(template: str) -> nodes.Template:
    """The template's syntax tree as transformers' environment parses it (raises
    jinja2.TemplateSyntaxError). A `{% generation %}` block is a plain scope around its body:
    what it renders is its body, and only that matters to a reader of the tree."""
    tree = environment().parse(template)
    if "endgeneration" not in template:
        return tree  # (no such block, which only `endgeneration` closes: no walk of the whole tree)
    return _GenerationAsScope().visit(tree)  # type: ignore[no-any-return]
