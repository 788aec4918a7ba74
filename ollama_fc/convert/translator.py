"""Translate a Jinja chat template's syntax tree into an Ollama Go template.

One visitor walks jinja2's own AST. Expressions become Go pipeline operands tagged with what
they hold in Ollama's data model (a message, the tool list, a string...), so that attribute
access, tests and filters resolve statically to Ollama's fields. Anything Go cannot do in an
expression (trimming, substring search) is computed by statements emitted just before the
action that needs it. What cannot be expressed exactly raises ConversionError or records a
ConversionWarning naming the construct and line.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import jinja2
import markupsafe
from jinja2 import nodes

from ..errors import ConversionError
from . import schema, strlists, textops
from .analysis import (
    assigned_names,
    filtered_names,
    growing_lists,
    literal_dict_names,
    names_holding_text,
    only_raises,
    parse_jinja,
)
from ..hf.shapes import TOOL_RESULT_ROLES, role_constants
from .gohelpers import MAX_INDENT_DEPTH, REPR_HELPER, json_helper_name, json_helpers
from .jsonwriter import JsonWriter
from .result import ConversionWarning
from .model import (
    ANY,
    ANYOF,
    ARGS,
    BOOL,
    BOUND_METHOD,
    CALL,
    CALLS,
    CONTENT,
    DICT,
    DICT_KINDS,
    DICT_METHODS,
    ELEMENT,
    FIELDS,
    FUNC,
    FUNCTION,
    GLOBAL_FUNCTIONS,
    INT,
    LIST,
    LITERAL_OR,
    MAPPINGS,
    MESSAGE_FIELDS,
    MONTHS,
    MSG,
    MSGS,
    NONE,
    NOT_CONST,
    NS,
    OPTIONAL_MESSAGE_KEYS,
    PARAMS,
    PART,
    PARTS,
    PROP,
    PROPS,
    RECORD,
    SEQUENCES,
    STR,
    STRFTIME,
    STRLIST,
    TFUNC,
    TOOL,
    TOOLS,
    UNDEF,
    UNDEFINED,
    Frame,
    Loop,
    Value,
    const,
    final_of,
    py_str,
)
from .textops import go_string

#: string filters applied at conversion time to a constant (jinja2's own, so exactly)
CONSTANT_FILTERS = {"replace", "title", "capitalize", "center", "indent", "wordcount"}
CONSTANT_FOLDER = jinja2.Environment()
#: kinds printed (or passed through |string) as Python's repr() of the dict or list
PYTHON_REPR = {TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP, ANYOF, ARGS}
#: what json.dumps of a tool schema loses through Ollama's structs
JSON_SCHEMA_EFFECT = (
    "Ollama keeps only type/description/enum/items/properties/required of a schema and "
    "sorts top-level properties; other schema keys are dropped and keys are written in "
    "get_json_schema order"
)
#: how deep a recursive macro is expanded (calls of it inside one another)
MAX_RECURSION = 3
#: how deep a recursive macro is expanded on untyped arguments
MAX_UNTYPED_RECURSION = 2


class Translator:
    """Jinja AST -> Go template text, with the warnings the translation forced."""

    def __init__(self, template: str, special_tokens: dict[str, str]) -> None:
        self.source = template
        self.tree = parse_jinja(template)
        self.tokens = special_tokens
        self.out: list[str] = []
        self.warnings: list[ConversionWarning] = []
        self.helpers: dict[str, str] = {}
        self.macros: dict[str, nodes.Macro] = {}
        #: for each body being translated, the statements after the current one (see read_later)
        self.following: list[tuple[Frame, int, list[nodes.Node]]] = []
        #: bodies of the `{% call %}` blocks being expanded (innermost last), with their scopes
        self.callers: list[tuple[list[nodes.Node], Frame]] = []
        #: macros being expanded, each with whether some argument is untyped
        self.expanding: list[tuple[str, bool]] = []
        self.counter = 0
        self.ns_attrs: dict[str, list[str]] = {}
        self.cond_depth = 0
        #: advances at every run-time branch point (`if`, `else`, `range`, `end`...): a namespace
        #: attribute set to a constant is known until the epoch moves on
        self.flow_epoch = 0
        self.open_blocks: list[bool] = []
        #: the Go variable output goes to while a `{% set x %}` body or a macro used as a value runs
        self.sink: str | None = None
        self.sink_construct = ""
        #: assistant prefill: once the final message's text may have been printed, output is
        #: guarded by `$ofc_stop` (open while `guard_open`); see `print_final_text`
        self.prefill_armed = False
        self.guard_open = False
        #: variables that may hold a message's text get a Go flag: is it the final message's?
        self.text_names = names_holding_text(self.tree)
        #: captured text variables that may hold the final message's text (see `capture`)
        self.capture_finals: set[str] = set()
        #: names some `is defined` test asks about: their assignments also set a Go flag
        self.tested_defined = {
            n.node.name
            for n in self.tree.find_all(nodes.Test)
            if n.name in {"defined", "undefined"} and isinstance(n.node, nodes.Name)
        }
        #: variables that grow as lists at run time (held as strlists, never statically)
        self.growing = growing_lists(self.tree)
        #: variables that may hold a filtered view of a list (see `selection_test`)
        self.filtered = filtered_names(self.tree)
        #: variables that may be given a dict literal on some paths (see `literal_or`)
        self.literal_dicts = literal_dict_names(self.tree)
        self.literal_uses = self.branching_uses(self.tree)
        #: checks that only raise_exception (dropped: they render nothing)
        self.dead_checks = {id(n) for n in self.tree.find_all((nodes.For, nodes.If)) if only_raises(n)}
        unread = {
            id(name)
            for n in self.tree.find_all((nodes.For, nodes.If))
            if id(n) in self.dead_checks
            for name in n.find_all(nodes.Name)
        }
        self.read_names = self.names_read(unread)
        #: attributes each name is given by `set name.attr` (Jinja lets a namespace grow)
        self.ns_refs: dict[str, list[str]] = {}
        for ref in self.tree.find_all(nodes.NSRef):
            self.ns_refs.setdefault(ref.name, []).append(ref.attr)
        #: the strings the template compares a role with (see role_constants)
        self.role_names = role_constants(self.tree)
        #: the role name this template gives tool results, when it is not Ollama's `tool`
        self.tool_role = next((r for r in TOOL_RESULT_ROLES if r in self.role_names), "tool")

    def names_read(self, unread: set[int]) -> set[str]:
        """Names some statement that renders reads (a `set` of any other name has no effect).

        A read in the value of a `set` counts only once its target is read: a list a loop
        keeps appending to, and nothing else reads, is never needed.
        """
        assigns = [
            a
            for a in self.tree.find_all(nodes.Assign)
            if isinstance(a.target, nodes.Name) and not self.calls_in(a.node)
        ]
        in_assign = {id(name): a.target.name for a in assigns for name in a.node.find_all(nodes.Name)}
        loads = [n for n in self.tree.find_all(nodes.Name) if n.ctx == "load" and id(n) not in unread]
        read = {ref.name for ref in self.tree.find_all(nodes.NSRef)}
        read |= {n.name for n in loads if id(n) not in in_assign}
        while True:
            more = {n.name for n in loads if in_assign.get(id(n)) in read} - read
            if not more:
                return read
            read |= more

    @staticmethod
    def calls_in(expr: nodes.Expr) -> bool:
        """Does this expression call something (which may change state: `xs.append(x)`)?"""
        return isinstance(expr, nodes.Call) or any(True for _ in expr.find_all(nodes.Call))

    # ---- plumbing -------------------------------------------------------------------

    def fail(self, node: nodes.Node, construct: str, why: str = "has no Go template equivalent") -> ConversionError:
        return ConversionError(f"line {getattr(node, 'lineno', '?')}: {construct} {why}")

    def warn(self, node: nodes.Node | None, construct: str, effect: str) -> None:
        line = getattr(node, "lineno", None)
        if not any(w.construct == construct and w.line == line for w in self.warnings):
            self.warnings.append(ConversionWarning(construct=construct, line=line, effect=effect))

    def temp(self) -> str:
        self.counter += 1
        return f"$_{self.counter}"

    def action(self, code: str) -> None:
        self.close_guard()
        self.track_flow(code)
        self.out.append("{{ " + code + " }}")

    def track_flow(self, code: str) -> None:
        """Count the run-time branch points (see `flow_epoch`): a value set since the last one
        is certainly what a read sees; `if true` (an inlined macro's block) is no branch."""
        word = code.split(" ", 1)[0]
        if word in {"if", "range", "with"}:
            runtime = code != "if true"
            self.open_blocks.append(runtime)
            self.flow_epoch += runtime
        elif word == "end" and self.open_blocks:
            self.flow_epoch += self.open_blocks.pop()
        elif word in {"else", "break", "continue"}:
            self.flow_epoch += 1

    def show(self, code: str) -> None:
        """Template output (text or a printing action); silent once an assistant prefill has ended."""
        if self.prefill_armed and not self.guard_open:
            self.out.append("{{ if not $ofc_stop }}")
            self.guard_open = True
        self.out.append(code)

    def close_guard(self) -> None:
        if self.guard_open:
            self.guard_open = False
            self.out.append("{{ end }}")

    def put(self, code: str) -> None:
        """Print a Go string or number (or append it to the variable being captured)."""
        if self.sink is not None:
            self.action(f'{self.sink} = printf "%s%v" {self.sink} {code}')
        else:
            self.show("{{ " + code + " }}")

    def call_helper(self, name: str, code: str, node: nodes.Node) -> None:
        """Print through a `define` helper; Go cannot capture a helper's output in a variable."""
        if self.sink is not None:
            raise self.fail(node, self.sink_construct, "(its text needs a helper whose output Go cannot capture)")
        self.show(f'{{{{ template "{name}" {code} }}}}')

    def text(self, data: str) -> None:
        """Literal output: `{{` cannot appear as text, and a trailing `{` would join the next action."""
        if not data:
            return
        if self.sink is not None:
            self.put(go_string(data))
            return
        parts = data.split("{{")
        for i, part in enumerate(parts):
            if i:
                self.show('{{ "{{" }}')
            if part.endswith("{"):
                self.show(part[:-1])
                self.show('{{ "{" }}')
            elif part:
                self.show(part)

    def translate(self) -> str:
        for node in self.tree.find_all(nodes.Macro):
            self.macros[node.name] = node
        root = Frame(names={})
        self.declare_scope(root, self.tree.body)
        self.visit_body(self.tree.body, root)
        self.close_guard()
        body = "".join(self.out)
        if self.prefill_armed or "$ofc_final" in body:  # printed, or only tracked, final text
            body = self.prefill_prologue() + body
        return "".join(self.helpers.values()) + body

    def prefill_prologue(self) -> str:
        """Go variables describing an assistant prefill, computed once before the body runs.

        Ollama has no `add_generation_prompt`: a conversation ending with the assistant's message
        is continued. transformers' `continue_final_message` renders the closed conversation and
        cuts it after the last occurrence of the final message's stripped text (keeping its
        trailing whitespace when the message had no leading whitespace and was printed whole);
        an empty text cuts nothing. `$ofc_final` is that message, `$ofc_open` whether a cut is
        due, `$ofc_cut` the stripped text, `$ofc_whole` whether the text has no leading space.
        """
        body, self.out = self.out, []
        self.action("$ofc_final := 0")
        self.action("$ofc_open := false")
        self.action("$ofc_stop := false")
        self.action('$ofc_cut := ""')
        self.action("$ofc_whole := false")
        self.action("if $.Messages")
        self.action("$ofc_final = index $.Messages (len (slice $.Messages 1))")
        self.action('if eq $ofc_final.Role "assistant"')
        stripped = self.trim("$ofc_final.Content", "strip", None)
        self.action(f"$ofc_cut = {stripped.code}")
        self.action('$ofc_open = ne $ofc_cut ""')
        self.action("$ofc_whole = and $ofc_open (eq (slice $ofc_final.Content 0 (len $ofc_cut)) $ofc_cut)")
        self.action("end")
        self.action("end")
        prologue, self.out = "".join(self.out), body
        return prologue

    def print_final_text(self, code: str, final: str) -> None:
        """Print message text; when it is the prefilled final message's, end the output after it.

        `final` is a Go condition true when the text comes from the final message. The cut falls
        after the last occurrence of `$ofc_cut` in this text (see `prefill_prologue`).
        """
        self.prefill_armed = True
        text, k, i, rest, n = (self.temp() for _ in range(5))
        self.action(f"if and $ofc_open (not $ofc_stop) {final}")
        self.action(f"{text} := {code}")
        self.action(f"{k} := -1")
        self.action(f"range {i} := len {text}")
        self.action(f"{rest} := slice {text} {i}")
        self.action(f"if and (ge (len {rest}) (len $ofc_cut)) (eq (slice {rest} 0 (len $ofc_cut)) $ofc_cut)")
        self.action(f"{k} = {i}")
        self.action("end")
        self.action("end")
        self.action(f"if ge {k} 0")
        self.action(f"{rest} := slice {text} {k}")
        self.action(f"{n} := len $ofc_cut")
        self.action(
            f"if and $ofc_whole (ge (len {rest}) (len $ofc_final.Content)) "
            f"(eq (slice {rest} 0 (len $ofc_final.Content)) $ofc_final.Content)"
        )
        self.action(f"{n} = len $ofc_final.Content")
        self.action("end")
        self.put(f"slice {text} 0 {k}")
        self.put(f"slice {rest} 0 {n}")
        self.action("$ofc_stop = true")
        self.action("else")
        self.put(text)
        self.action("end")
        self.action("else")
        self.put(code)
        self.action("end")

    def declare_scope(self, frame: Frame, body: Iterable[nodes.Node]) -> None:
        """Pre-declare every name a scope sets, so `if` branches assign rather than shadow."""
        frame.depth = self.cond_depth
        for name in assigned_names(body):
            outer = frame.lookup(name)
            if outer is None and not name.endswith("_token"):
                known = self.global_name(name, None)
                outer = known if known.kind != UNDEF else None
            var = "$" + name if not name.startswith("_") else "$v" + name
            init = self.operand(outer, body) if outer is not None and outer.code else '""'
            kind = outer.kind if outer is not None else UNDEF
            self.action(f"{var} := {init}")
            slot = Value(var, kind, extra={"var": True, "set": outer is not None})
            if name in self.filtered:
                slot.extra["filter_flag"] = var + "_filtered"
                self.action(f"{var}_filtered := false")
            if name in self.literal_dicts:
                slot.extra["literal_flag"] = var + "_literal"
                self.action(f"{var}_literal := false")
            if outer is not None:
                slot.extra.update(
                    {k: v for k, v in outer.extra.items() if k in {"nullable", "maybe_none", "defined_flag"}}
                )
            elif name in self.tested_defined:
                slot.extra["defined_flag"] = var + "_defined"
                self.action(f"{var}_defined := false")
            if name in self.text_names:
                slot.extra["final"] = var + "_final"
                self.action(
                    f"{var}_final := {final_of(outer)['final'] if outer is not None and final_of(outer) else 'false'}"
                )
            frame.names[name] = slot

    # ---- statements -----------------------------------------------------------------

    def visit_body(self, body: Iterable[nodes.Node], frame: Frame) -> None:
        statements = list(body)
        for i, node in enumerate(statements):
            self.following.append((frame, self.cond_depth, statements[i + 1 :]))
            try:
                self.visit(node, frame)
            finally:
                self.following.pop()

    def read_later(self, name: str, owner: Frame) -> bool:
        """May the variable `name` of scope `owner` be read once the run-time `if` around the
        statement being translated has ended (or in a later branch of it)? If not, a `set` of it
        on some paths is as good as certain wherever it is read."""
        return any(
            isinstance(n, nodes.Name) and n.name == name and n.ctx == "load"
            for frame, depth, statements in self.following
            if depth < self.cond_depth and frame.owner(name) is owner
            for statement in statements
            for n in [statement, *statement.find_all(nodes.Name)]
        )

    def visit(self, node: nodes.Node, frame: Frame) -> None:
        if id(node) in self.dead_checks:
            self.warn(
                node,
                "raise_exception()",
                "dropped with the check around it: Ollama renders instead of refusing this conversation",
            )
            return
        method = getattr(self, "stmt_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"{{% {type(node).__name__.lower()} %}}")
        method(node, frame)

    def stmt_Output(self, node: nodes.Output, frame: Frame) -> None:
        for child in node.nodes:
            if isinstance(child, nodes.TemplateData):
                self.text(child.data)
            else:
                self.output(child, frame)

    def output(self, expr: nodes.Expr, frame: Frame, plus: bool = False) -> None:
        """Print an expression; concatenations print piece by piece, macro calls inline.

        `plus` marks a piece of a `+` concatenation: Python refuses `str + dict`, so tool call
        arguments there must be the JSON string the template was written for.
        """
        if isinstance(expr, (nodes.Concat,)):
            for piece in expr.nodes:
                self.output(piece, frame)
            return
        if isinstance(expr, nodes.Add) and self.stringish(expr) and not self.adds_markup(expr):
            self.output(expr.left, frame, plus=True)
            self.output(expr.right, frame, plus=True)
            return
        if isinstance(expr, nodes.Call) and isinstance(expr.node, nodes.Name):
            name = expr.node.name
            if name in self.macros and frame.lookup(name) is None:
                self.inline_macro(expr, frame)
                return
            if name == "caller" and frame.lookup(name) is None:
                self.run_caller(expr)
                return
        if isinstance(expr, nodes.CondExpr):
            test = self.truth(expr.test, frame)
            self.action(f"if {test}")
            self.output(expr.expr1, frame)
            if expr.expr2 is not None:
                self.action("else")
                self.output(expr.expr2, frame)
            self.action("end")
            return
        if isinstance(expr, nodes.Filter) and expr.name == "safe" and expr.node is not None and not expr.args:
            self.output(expr.node, frame, plus)  # no escaping to undo: printed as it is
            return
        if isinstance(expr, nodes.Filter) and expr.name == "tojson":
            self.tojson(expr, frame)
            return
        if (
            isinstance(expr, nodes.Filter)
            and expr.name == "string"
            and isinstance(expr.node, (nodes.Name, nodes.Getattr, nodes.Getitem))
        ):
            # a plain lookup (no side effects to repeat): a schema's repr printed, not captured
            inner = self.expr(expr.node, frame)
            if inner.kind in PYTHON_REPR or (inner.kind == LIST and not inner.is_const):
                self.repr_action(inner, expr)
                return
            if inner.kind == ANY:
                self.print_value(inner, expr)  # str(): strings bare, anything else its repr
                return
        value = self.expr(expr, frame)
        if plus and value.kind == ARGS:
            self.json_action(value, None, expr)
            return
        self.print_value(value, expr)

    @staticmethod
    def adds_markup(expr: nodes.Add) -> bool:
        """Does a `|safe` string take part in this `+` (then the other operands are HTML-escaped)?"""
        leaves: list[nodes.Expr] = [expr]
        while leaves:
            leaf = leaves.pop()
            if isinstance(leaf, nodes.Add):
                leaves += [leaf.left, leaf.right]
            elif isinstance(leaf, nodes.Filter) and leaf.name == "safe":
                return True
        return False

    def stringish(self, expr: nodes.Add) -> bool:
        """Is this `+` a string concatenation (some operand is text)?"""
        for leaf in (expr.left, expr.right):
            if isinstance(leaf, nodes.Add) and self.stringish(leaf):
                return True
            if isinstance(leaf, nodes.Const) and isinstance(leaf.value, str):
                return True
            if isinstance(leaf, nodes.Filter) and leaf.name in {"tojson", "trim", "string", "upper", "lower"}:
                return True
            if isinstance(leaf, (nodes.Concat, nodes.TemplateData)):
                return True
        return False

    def print_value(self, value: Value, node: nodes.Node) -> None:
        if value.is_const:
            if isinstance(value.const, (list, dict)):
                raise self.fail(node, "printing a list or dict literal")
            self.text(py_str(value.const))
        elif value.kind == UNDEF:
            return
        elif value.kind == NONE and not value.extra.get("maybe_undefined"):
            self.text("None")  # a variable certainly holding None
        elif value.kind == BOOL:
            self.action(f"if {value.code}")
            self.text("True")
            self.action("else")
            self.text("False")
            self.action("end")
        elif value.kind == STR and value.code.endswith(".Role") and self.tool_role != "tool":
            self.action(f'if eq {value.code} "tool"')
            self.text(self.tool_role)
            self.action("else")
            self.put(value.code)
            self.action("end")
        elif value.kind in {STR, CONTENT} and value.extra.get("final") and self.sink is None:
            self.print_final_text(value.code, value.extra["final"])
        elif value.kind in {STR, INT, CONTENT}:
            if value.extra.get("final") and self.sink is not None:
                self.action(f"{self.sink}_final = or {self.sink}_final {value.extra['final']}")
            self.put(value.code)
        elif value.kind in PYTHON_REPR:
            self.repr_action(value, node)
        elif value.kind == ANY and self.sink is not None:
            self.untyped_repr(value.code, node)  # captured: written inline, not by the helper
        elif value.kind == LIST and self.sink is not None:
            self.repr_action(value, node)
        elif value.kind in {ARGS, LIST} or value.kind == ANY:
            self.helpers.setdefault("ofc_repr", REPR_HELPER)
            self.call_helper("ofc_str" if value.kind == ANY else "ofc_repr", value.code, node)
        else:
            raise self.fail(node, f"printing {value.kind} (a {value.kind} object as text)")

    def tojson(self, expr: nodes.Filter, frame: Frame) -> None:
        value, indent = self.tojson_options(expr, frame)
        separators, ascii_only = self.tojson_layout(expr, frame)
        if value.is_const:
            import json

            self.text(json.dumps(value.const, ensure_ascii=ascii_only, indent=indent, separators=separators))
            return
        if ascii_only:
            self.put(self.ascii_json_text(value, indent, separators, expr))
            return
        self.json_action(value, indent, expr, separators)

    def tojson_options(self, expr: nodes.Filter, frame: Frame) -> tuple[Value, int | None]:
        assert expr.node is not None
        value = self.expr(expr.node, frame)
        indent = None
        for kw in expr.kwargs:
            if kw.key == "indent":
                indent = self.const_of(kw.value, frame)
            elif kw.key not in {"ensure_ascii", "separators"}:
                raise self.fail(expr, f"tojson({kw.key}=...)")
        if expr.args:
            indent = self.const_of(expr.args[0], frame)
        if indent is not None and not isinstance(indent, int):
            raise self.fail(expr, "tojson(indent=...) with a non-integer indent")
        return value, indent

    def tojson_layout(self, expr: nodes.Filter, frame: Frame) -> tuple[tuple[str, str] | None, bool]:
        """transformers' `tojson(separators=..., ensure_ascii=...)` options, which must be constant."""
        options = {
            kw.key: self.const_of(kw.value, frame) for kw in expr.kwargs if kw.key in {"separators", "ensure_ascii"}
        }
        positional = [self.const_of(arg, frame) for arg in expr.args[1:3]]  # tojson(indent, separators, sort_keys)
        separators = options.get("separators", positional[0] if positional else None)
        if len(positional) > 1 and positional[1]:
            raise self.fail(expr, "tojson(sort_keys=True)")
        if separators is not None:
            if not (
                isinstance(separators, (list, tuple))
                and len(separators) == 2
                and all(isinstance(part, str) for part in separators)
            ):
                raise self.fail(expr, "tojson(separators=...) other than two strings")
            separators = (separators[0], separators[1])
        ascii_only = options.get("ensure_ascii", False)
        if not isinstance(ascii_only, bool):
            raise self.fail(expr, "tojson(ensure_ascii=...) other than True or False")
        return separators, ascii_only

    def ascii_json_text(
        self, value: Value, indent: int | None, separators: tuple[str, str] | None, expr: nodes.Filter
    ) -> str:
        """`tojson(ensure_ascii=True)`: the JSON text captured, then its non-ASCII escaped."""
        text = self.capture(lambda: self.json_action(value, indent, expr, separators), "|tojson", expr)
        return textops.ascii_json(self, text)

    def json_action(
        self, value: Value, indent: int | None, expr: nodes.Node, separators: tuple[str, str] | None = None
    ) -> None:
        """Print `value` as Python's json.dumps would."""
        if value.kind in {PART, PARTS}:
            # a part exists only as the template's view of a string (which Python iterates by character)
            raise self.fail(expr, "tojson of a content part")
        if value.kind in {"select", "mapped"}:
            self.json_view(value, indent, expr)
            return
        if value.kind == UNDEF and not value.extra.get("maybe_undefined"):
            self.warn(
                expr,
                "tojson of an undefined value",
                "Jinja fails there (Undefined is not JSON serializable); written as empty text instead",
            )
            return
        if value.kind in {TOOL, TOOLS, TFUNC, PARAMS, PROPS, PROP}:
            self.warn(expr, "tojson of tools", JSON_SCHEMA_EFFECT)
        if value.kind in {ARGS, CALL, FUNC, CALLS}:
            self.warn(expr, "tojson of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        if indent is not None and value.kind in {TOOLS, TOOL, TFUNC, PARAMS, PROPS, PROP, ARGS, CALLS, CALL, FUNC, ANY}:
            self.warn(
                expr,
                f"tojson(indent=...) nested deeper than {MAX_INDENT_DEPTH} levels",
                "written without indentation from there on",
            )
        if value.kind == RECORD:
            self.json_record(value, indent, expr, separators)
            return
        if self.sink is not None or value.kind in {CALL, CALLS, FUNC}:
            # inline: capturable, and it knows the tool call structures the helpers do not
            JsonWriter(self, indent, expr, separators=separators).value(value.code, value.kind, 0)
            return
        self.call_helper(self.json_helper(indent, 0, expr, separators), value.code, expr)

    def repr_action(self, value: Value, node: nodes.Node) -> None:
        """Print a tool schema (or tool call arguments) as Python's repr() of the dict would."""
        if value.kind == ARGS:
            self.warn(node, "repr of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        elif value.kind != LIST:
            self.warn(node, f"repr of a {value.kind} schema", schema.ORDER_EFFECT)
        JsonWriter(self, None, node, python=True, schema=value.kind != ARGS).value(value.code, value.kind, 0)

    def json_record(
        self, value: Value, indent: int | None, expr: nodes.Node, separators: tuple[str, str] | None = None
    ) -> None:
        """json.dumps of a dict literal whose keys are constant: each value written by its kind."""
        import json

        if indent is not None:
            raise self.fail(expr, "tojson(indent=...) of a dict literal with run-time values")
        item_sep, key_sep = separators or (", ", ": ")
        self.text("{")
        for n, (key, field) in enumerate(self.dict_fields(value).items()):
            if field.kind == UNDEF:
                raise self.fail(expr, "tojson of a dict literal holding an undefined value")
            self.text((item_sep if n else "") + json.dumps(key, ensure_ascii=False) + key_sep)
            if field.is_const:
                self.text(json.dumps(field.const, ensure_ascii=False, separators=(item_sep, key_sep)))
            else:
                self.json_action(field, None, expr, separators)
        self.text("}")

    def json_helper(
        self, indent: int | None, depth: int, node: nodes.Node, separators: tuple[str, str] | None = None
    ) -> str:
        """The `define` helper writing JSON at this nesting depth (emitted once per template)."""
        self.helpers.setdefault("ofc_json", json_helpers(None)[1])
        compact, code = json_helpers(None, separators)
        self.helpers.setdefault(compact, code)
        if indent is None or depth > MAX_INDENT_DEPTH:
            return compact
        name, code = json_helpers(indent, separators)
        self.helpers.setdefault(name, code)
        return json_helper_name(indent, depth, separators)

    def stmt_If(self, node: nodes.If, frame: Frame) -> None:
        branches = [(node.test, node.body)] + [(e.test, e.body) for e in node.elif_]
        first = self.expr(node.test, frame)
        if first.kind in {UNDEF, NONE} and not first.extra:
            first = const(False)
        if not first.is_const and self.truth_of(first) in {"true", "false"}:
            first = const(
                self.truth_of(first) == "true"
            )  # a mapping Ollama always fills (a message, a tool's function)
        if first.is_const:
            # resolved statically (Ollama's data model makes it certain): keep the branch taken
            if first.const:
                self.visit_body(node.body, frame)
            elif len(branches) > 1:
                rest = nodes.If(branches[1][0], branches[1][1], node.elif_[1:], node.else_, lineno=node.elif_[0].lineno)
                self.stmt_If(rest, frame)
            else:
                self.visit_body(node.else_, frame)
            return
        test = self.truth_of(first)
        self.action(f"if {test}")
        self.cond_depth += 1
        self.following.append((frame, self.cond_depth - 1, [*node.elif_, *node.else_]))  # they see the old values
        try:
            self.visit_body(node.body, frame)
        finally:
            self.following.pop()
        if node.elif_:
            # the rest is an `if` of its own inside the else: its test is computed there and
            # may resolve statically
            self.action("else")
            first_elif = node.elif_[0]
            self.stmt_If(
                nodes.If(first_elif.test, first_elif.body, node.elif_[1:], node.else_, lineno=first_elif.lineno), frame
            )
        elif node.else_:
            self.action("else")
            self.visit_body(node.else_, frame)
        self.cond_depth -= 1
        self.action("end")

    def stmt_Assign(self, node: nodes.Assign, frame: Frame) -> None:
        target = node.target
        if isinstance(target, nodes.NSRef):
            ns = frame.lookup(target.name)
            if ns is None or ns.kind != NS:
                raise self.fail(node, f"set {target.name}.{target.attr}", "on something that is not a namespace()")
            value = self.expr(node.node, frame)
            if value.kind == "split":
                value = self.split_list(value)
            var = f"{ns.code}_{target.attr}"
            attrs = ns.extra["attrs"]
            if (target.attr in attrs and attrs[target.attr].kind == STRLIST) or value.kind == STRLIST:
                value = Value(self.strlist_code(value, node), STRLIST, extra=final_of(value))
            if target.attr not in attrs:
                raise self.fail(
                    node, f"set {target.name}.{target.attr}", "sets an attribute namespace() did not declare"
                )
            joined = self.join(attrs[target.attr], value)
            if any(
                v.extra.get("maybe_negative") or (v.is_const and isinstance(v.const, int) and v.const < 0)
                for v in (attrs[target.attr], value)
            ):
                joined.extra["maybe_negative"] = True  # Go's printf-width arithmetic needs to know
            if attrs[target.attr].extra.get("maybe_undefined"):
                joined.extra["maybe_undefined"] = True
                flag = attrs[target.attr].extra.get("defined_flag")
                if flag and (value.kind == UNDEF or not value.extra.get("maybe_undefined")):
                    joined.extra["defined_flag"] = flag
                    self.action(f"{flag} = {'false' if value.kind == UNDEF else 'true'}")
            if attrs[target.attr].kind == NONE or attrs[target.attr].extra.get("maybe_none") or value.kind == NONE:
                joined.extra["maybe_none"] = True  # some path may leave (or set) None
            attrs[target.attr] = joined
            self.action(f"{var} = {self.operand(value, node)}")
            if value.is_const and not isinstance(value.const, (list, dict)):
                joined.extra["known"] = (self.flow_epoch, value.const)  # until the next branch point
            if target.attr in ns.extra.get("text_attrs", ()):
                self.action(f"{var}_final = {value.extra.get('final') or 'false'}")
            return
        if (
            isinstance(target, nodes.Tuple)
            and isinstance(node.node, nodes.Tuple)
            and self.independent_pairs(target, node.node)
        ):
            # `set a, b = x, y`: one assignment per pair (no right side reads a name set here)
            for name, item in zip(target.items, node.node.items):
                self.stmt_Assign(nodes.Assign(name, item, lineno=node.lineno), frame)
            return
        if not isinstance(target, nodes.Name):
            raise self.fail(node, "tuple assignment in set")
        if target.name not in self.read_names and not self.calls_in(node.node):
            return  # never read, and computing it changes nothing
        value = self.expr(node.node, frame)
        if value.kind == "split":
            value = self.split_list(value)
        slot = frame.lookup(target.name)
        assert slot is not None, target.name
        slot.extra.pop("known", None)
        if target.name in self.growing and (
            value.kind == STRLIST or (value.is_const and isinstance(value.const, list))
        ):
            value = Value(self.strlist_code(value, node), STRLIST, extra=final_of(value))
        if value.kind == NS:
            slot.kind = NS
            slot.extra["attrs"] = value.extra["attrs"]
            # Jinja lets `set ns.x` add attributes; declare them all now, undefined until set
            for attr in self.ns_refs.get(target.name, []):
                if attr not in value.extra["attrs"]:
                    # a Go flag tells whether some `set ns.attr` ran (for `ns.attr is defined`)
                    flag = f"{slot.code}_{attr}_defined"
                    value.extra["attrs"][attr] = Value("", UNDEF, extra={"maybe_undefined": True, "defined_flag": flag})
                    self.action(f"{flag} := false")
            for attr, init in value.extra["attrs"].items():
                if init.is_const and isinstance(init.const, list):
                    # a list attribute can only be a list of strings built at run time
                    init = value.extra["attrs"][attr] = Value(self.strlist_code(init, node), STRLIST)
                self.action(f"{slot.code}_{attr} := {self.operand(init, node)}")
            # a list, not a set: the flags are declared in attribute order, the same on every run
            slot.extra["text_attrs"] = [a for a in value.extra["attrs"] if f"{target.name}.{a}" in self.text_names]
            for attr in slot.extra["text_attrs"]:
                self.action(f"{slot.code}_{attr}_final := false")
            return
        owner = frame.owner(target.name)
        strong = owner is not None and (self.cond_depth == owner.depth or not self.read_later(target.name, owner))
        static = (value.is_const and isinstance(value.const, (list, tuple, dict))) or value.kind in {
            "select",
            "reversed",
            RECORD,
        }
        if not strong and value.kind == "select" and self.filters_own_list(slot, value):
            # `set xs = xs | rejectattr(..)` on some paths: the filters apply once a Go flag is on
            flag = slot.extra["filter_flag"]
            self.action(f"{flag} = true")
            slot.extra["filters"] = [
                *slot.extra.get("filters", []),
                *((f, fr, flag) for f, fr, _ in value.extra["filters"]),
            ]
            if slot.kind != "select":
                slot.extra["base"] = Value(slot.code, slot.kind)
                slot.kind = "select"
            return
        if (
            value.is_const
            and isinstance(value.const, dict)
            and not strong
            and slot.extra.get("literal_flag")
            and not slot.is_const
        ):
            # a dict literal on some paths: a Go flag says the variable holds it (see `literal_or`)
            if slot.extra.get("literal", value).const != value.const:
                raise self.fail(node, f"set {target.name}", "(different dict literals on different paths)")
            slot.extra["literal"] = value
            self.action(f"{slot.extra['literal_flag']} = true")
            return
        if (
            not strong
            and value.is_const
            and value.const == []
            and slot.kind in {TOOLS, MSGS, CALLS}
            and not slot.is_const
        ):
            # `set tools = []` on some paths: an empty list of the kind the variable holds
            self.action(f"{slot.code} = slice {slot.code} 0 0")
            slot.extra["emptied"] = True  # no longer None where Ollama's list is empty
            slot.extra["set"] = True
            return
        if static or slot.is_const:
            # a literal list or a filtered list has no Go value: the variable holds it statically
            if not strong:
                raise self.fail(node, f"set {target.name}", "(a list stored only on some paths)")
            slot.const = value.const if value.is_const else NOT_CONST
        if static:
            slot.kind = value.kind
            slot.extra["set"] = True
            if value.kind == RECORD:
                slot.extra["fields"] = value.extra["fields"]
            if value.kind in {"select", "reversed"}:
                base: Value = value.extra["base"]
                self.action(f"{slot.code} = {base.code}")
                slot.extra.update(value.extra)
                slot.extra["base"] = Value(slot.code, base.kind)
            return
        if bool(value.extra.get("ordered")) != bool(slot.extra.get("ordered")) and value.kind not in {UNDEF, NONE}:
            # a nested property map is ranged through .All, a plain map directly: one of them
            if not (strong or slot.kind == UNDEF or not slot.extra.get("set")):
                raise self.fail(node, f"set {target.name}", "(an ordered and a plain property map on different paths)")
            if value.extra.get("ordered"):
                slot.extra["ordered"] = True
            else:
                slot.extra.pop("ordered", None)
        if strong:
            slot.kind = value.kind
            slot.extra.pop("maybe_undefined", None)
            slot.extra.pop("list_or_text", None)
            slot.extra.pop("emptied", None)
        else:
            if slot.kind == UNDEF or slot.extra.get("maybe_undefined"):
                slot.extra["maybe_undefined"] = True
            list_or_text = self.list_or_text(slot, value) if slot.extra.get("set") else None
            slot.kind = self.join(slot, value).kind if slot.extra.get("set") else value.kind
            slot.extra.pop("list_or_text", None)
            if list_or_text is not None and slot.kind == ANY:
                slot.extra["list_or_text"] = list_or_text
        slot.extra["set"] = True
        if value.extra.get("maybe_none") and value.kind in MAPPINGS:
            slot.extra["maybe_none"] = True  # `x if c else none`: None is held as ""
        if value.extra.get("maybe_undefined") and not value.extra.get("defined_flag") and value.kind in MAPPINGS:
            slot.extra["maybe_undefined"] = True  # no flag tells where: `is defined` of it is refused
            slot.extra.pop("defined_flag", None)
        flag = slot.extra.get("defined_flag")
        if flag:
            self.action(f"{flag} = {'false' if value.kind == UNDEF else 'true'}")
        if slot.extra.get("literal"):
            self.action(f"{slot.extra['literal_flag']} = false")
        if value.is_const and not isinstance(value.const, (list, dict)):
            slot.extra["known"] = (self.flow_epoch, value.const)  # until the next branch point
        if slot.extra.get("final"):
            self.action(f"{slot.extra['final']} = {value.extra.get('final') or 'false'}")
        if value.kind in {UNDEF, NONE}:
            self.action(f'{slot.code} = ""')
            if value.kind == NONE:
                slot.extra["maybe_none"] = True
            return
        self.action(f"{slot.code} = {self.operand(value, node)}")

    @staticmethod
    def independent_pairs(targets: nodes.Tuple, values: nodes.Tuple) -> bool:
        names = {t.name for t in targets.items if isinstance(t, nodes.Name)}
        read = {n.name for v in values.items for n in [v, *v.find_all(nodes.Name)] if isinstance(n, nodes.Name)}
        return len(names) == len(targets.items) == len(values.items) and not names & read

    def filters_own_list(self, slot: Value, value: Value) -> bool:
        """Is `value` a filtering of the list the variable holds now (not yet filtered on some path)?"""
        base: Value = value.extra["base"]
        own = slot.extra.get("base", slot)
        unflagged = all(when is None for _, _, when in value.extra["filters"])
        return bool(slot.extra.get("filter_flag")) and base.code == own.code and base.kind == own.kind and unflagged

    @staticmethod
    def list_or_text(old: Value, new: Value) -> tuple[str, str] | None:
        """(list kind, text kind) when a variable set on some paths holds Ollama's messages, tool
        calls or tools on one and a message's text on another: a loop over it branches on the Go type."""
        kinds: set[str] = set()
        for value in (old, new):
            if value.kind == ANY and value.extra.get("list_or_text"):
                kinds.update(value.extra["list_or_text"])
            elif value.kind != UNDEF:
                kinds.add(value.kind)
        lists, texts = kinds & {MSGS, CALLS, TOOLS}, kinds & {STR, CONTENT}
        if len(lists) != 1 or len(texts) != 1 or len(kinds) != 2:
            return None
        return (lists.pop(), texts.pop())

    def join(self, old: Value, new: Value) -> Value:
        if old.kind in {UNDEF, NONE} or old.kind == new.kind:
            return Value(old.code, new.kind)
        if new.kind in {NONE, UNDEF}:
            return old
        if {old.kind, new.kind} <= {STR, CONTENT}:
            return Value(old.code, STR)
        if {old.kind, new.kind} <= {CALL, FUNC}:
            return Value(old.code, FUNC)
        return Value(old.code, ANY)

    def operand(self, value: Value, node: nodes.Node) -> str:
        if value.kind in {"split", "select", "mapped", "loop", BOUND_METHOD, LITERAL_OR} or value.kind.startswith(
            "method:"
        ):
            raise self.fail(node, f"a {value.kind.split(':')[0]} value stored in a variable")
        if value.is_const and value.kind == LIST:
            raise self.fail(node, "a list literal as a value")
        if value.kind in {UNDEF, NONE}:
            return '""'
        return value.code

    def stmt_AssignBlock(self, node: nodes.AssignBlock, frame: Frame) -> None:
        """`{% set x %}...{% endset %}`: the body's output appended to x piece by piece."""
        if not isinstance(node.target, nodes.Name) or node.filter is not None:
            raise self.fail(node, "{% set %}...{% endset %} with a filter or into an attribute")
        slot = frame.lookup(node.target.name)
        assert slot is not None
        captured = self.capture(lambda: self.visit_body(node.body, frame), "{% set %}...{% endset %} block", node)
        value = self.captured(captured)
        self.stmt_Assign(
            nodes.Assign(node.target, nodes.Name("__captured__", "load"), lineno=node.lineno),
            Frame({"__captured__": value}, parent=frame),
        )

    def capture(self, produce: Callable[[], None], construct: str, node: nodes.Node) -> str:
        """Run `produce` with its output appended to a fresh Go string variable; that variable."""
        var = self.temp()
        self.action(f'{var} := ""')
        # whether a prefilled final message's text went into it (declared only when some may)
        self.action(f"{var}_final := false")
        flag_at = len(self.out) - 1
        outer, outer_construct = self.sink, self.sink_construct
        self.sink, self.sink_construct = var, construct
        try:
            produce()
        finally:
            self.sink, self.sink_construct = outer, outer_construct
        if f"{var}_final =" in "".join(self.out[flag_at + 1 :]):
            self.capture_finals.add(var)
        else:
            del self.out[flag_at]
        return var

    def captured(self, var: str) -> Value:
        """The text a `capture` collected, marked when it may hold the final message's text."""
        return Value(var, STR, extra={"final": f"{var}_final"} if var in self.capture_finals else {})

    def stmt_Macro(self, node: nodes.Macro, frame: Frame) -> None:
        return  # expanded inline where called

    def stmt_Scope(self, node: nodes.Scope, frame: Frame) -> None:
        self.visit_body(node.body, frame)

    def stmt_Break(self, node: nodes.Node, frame: Frame) -> None:
        self.action("break")

    def stmt_Continue(self, node: nodes.Node, frame: Frame) -> None:
        self.action("continue")

    def stmt_ExprStmt(self, node: nodes.ExprStmt, frame: Frame) -> None:
        raise self.fail(node, "{% do %}")

    def stmt_CallBlock(self, node: nodes.CallBlock, frame: Frame) -> None:
        """`{% call m(..) %}body{% endcall %}`: m inlined, its `caller()` rendering body where the call is."""
        call = node.call
        if (
            node.args
            or not isinstance(call.node, nodes.Name)
            or call.node.name not in self.macros
            or frame.lookup(call.node.name) is not None
        ):
            raise self.fail(
                node,
                "{% call %} block",
                "other than a macro called with a caller() taking no arguments has no Go template equivalent",
            )
        self.callers.append((node.body, frame))
        try:
            self.inline_macro(call, frame)
        finally:
            self.callers.pop()

    def run_caller(self, node: nodes.Call) -> None:
        """`caller()` in a macro: the body of the `{% call %}` block, in the scope it was written in."""
        if not self.callers or node.args or node.kwargs:
            raise self.fail(
                node, "caller()", "outside a {% call %} block, or with arguments, has no Go template equivalent"
            )
        body, frame = self.callers.pop()  # the body sees the callers outside its own block
        try:
            self.action("if true")
            self.visit_body(body, frame)
            self.action("end")
        finally:
            self.callers.append((body, frame))

    def stmt_FilterBlock(self, node: nodes.FilterBlock, frame: Frame) -> None:
        """`{% filter f %}...{% endfilter %}`: the body captured as text, printed through `f`."""
        captured = self.capture(lambda: self.visit_body(node.body, frame), "{% filter %} block", node)
        self.output(
            self.filtered_capture(node.filter, node), Frame({"__captured__": self.captured(captured)}, parent=frame)
        )

    @staticmethod
    def filtered_capture(chain: nodes.Filter, node: nodes.Node) -> nodes.Expr:
        """The block filter `chain` (whose innermost filter has no operand) applied to `__captured__`."""

        def rebuild(f: nodes.Filter) -> nodes.Filter:
            inner = (
                rebuild(f.node)
                if isinstance(f.node, nodes.Filter)
                else nodes.Name("__captured__", "load", lineno=node.lineno)
            )
            return nodes.Filter(inner, f.name, f.args, f.kwargs, f.dyn_args, f.dyn_kwargs, lineno=node.lineno)

        return rebuild(chain)

    def inline_macro(self, call: nodes.Call, frame: Frame, bound: dict[str, Value] | None = None) -> None:
        """Expand a macro call in place; `bound` fixes some parameters' values (see `literal_or`)."""
        assert isinstance(call.node, nodes.Name)
        macro = self.macros[call.node.name]
        bound = bound or {}
        for param, source in zip([p.name for p in macro.args], call.args):
            slot = frame.lookup(source.name) if isinstance(source, nodes.Name) and param not in bound else None
            if slot is not None and slot.extra.get("literal"):
                # the argument is a dict literal on some paths: expand the macro for each case
                choice = self.literal_or(slot)
                self.action(f"if {choice.extra['flag']}")
                self.inline_macro(call, frame, {**bound, param: choice.extra["literal"]})
                self.action("else")
                self.inline_macro(call, frame, {**bound, param: choice.extra["other"]})
                self.action("end")
                return
        if [name for name, _ in self.expanding].count(macro.name) >= MAX_RECURSION:
            # each call is expanded in place; recursion stops where the data model makes the
            # arguments static, and is cut here where only run-time values could go deeper
            self.warn(
                call,
                f"recursive macro {macro.name}() nested deeper than {MAX_RECURSION} calls",
                "the deeper call renders nothing",
            )
            return
        scope = Frame(names={}, parent=self.root_of(frame), loop=None)
        args = list(call.args)
        params = [p.name for p in macro.args]
        defaults = dict(zip(params[len(params) - len(macro.defaults) :], macro.defaults))
        kwargs = {kw.key: kw.value for kw in call.kwargs}
        self.action("if true")
        for i, param in enumerate(params):
            source = args[i] if i < len(args) else kwargs.get(param, defaults.get(param))
            if source is None:
                scope.names[param] = UNDEFINED
                continue
            value = bound[param] if param in bound else self.expr(source, frame)
            if value.kind == LITERAL_OR:
                raise self.fail(call, f"macro {macro.name}() given a dict literal on some paths")
            if value.is_const or value.kind in {UNDEF, NONE, RECORD, BOUND_METHOD}:
                scope.names[param] = value
            else:
                var = self.temp()
                self.action(f"{var} := {value.code}")
                # what is known of the argument holds for the parameter (it may be unset, None...)
                known = {
                    k: v
                    for k, v in value.extra.items()
                    if k
                    in {"defined_flag", "maybe_none", "nullable", "final", "items", "sorted", "ordered", "optional"}
                }
                if "defined_flag" in known and value.extra.get("maybe_undefined"):
                    known["maybe_undefined"] = True
                scope.names[param] = Value(var, value.kind, extra={"var": True, "set": True, **known})
        # free names in the macro body see the caller's loop variables only through globals
        scope.parent = self.root_of(frame)
        untyped = any(v.kind == ANY for v in scope.names.values())
        if untyped and self.expanding.count((macro.name, True)) >= MAX_UNTYPED_RECURSION:
            # untyped values (schema `items`, argument values) can nest without end, and each
            # level copies the macro's code: cut sooner than typed schema levels
            self.warn(
                call,
                f"recursive macro {macro.name}() on untyped values nested deeper than {MAX_UNTYPED_RECURSION} calls",
                "the deeper call renders nothing",
            )
            self.action("end")
            return
        self.expanding.append((macro.name, untyped))
        self.declare_scope(scope, macro.body)
        self.visit_body(macro.body, scope)
        self.expanding.pop()
        self.action("end")

    def root_of(self, frame: Frame) -> Frame:
        while frame.parent is not None:
            frame = frame.parent
        return frame

    def stmt_For(self, node: nodes.For, frame: Frame) -> None:
        if node.recursive:
            raise self.fail(node, "recursive for loop")
        self.close_guard()
        #: where a filtered loop's `else` flag is declared (before anything the loop emits)
        flag_at = len(self.out)
        seq_node = node.iter
        predicate = None
        if isinstance(seq_node, nodes.Filter) and seq_node.name in {"selectattr", "rejectattr"}:
            predicate = seq_node
            assert seq_node.node is not None
            seq_node = seq_node.node
        seq = self.range_of(seq_node, frame) if self.is_range(seq_node, frame) else self.expr(seq_node, frame)
        if seq.kind == "reversed":
            seq = Value(seq.code, seq.extra["base"].kind, extra={"reversed": True})
        if seq.kind == "split":
            seq = self.split_list(seq)
        filters: list[tuple[nodes.Filter, Frame, str | None]] = [] if predicate is None else [(predicate, frame, None)]
        if seq.kind == "select":
            filters, seq = [*seq.extra["filters"], *filters], seq.extra["base"]
        if seq.is_const and isinstance(seq.const, (list, tuple)):
            self.unrolled_for(node, seq.const, frame)
            return
        if seq.kind in {UNDEF, NONE} and not seq.extra:
            # Jinja's Undefined iterates as empty (None would raise, and the reference with it)
            self.visit_body(node.else_, frame)
            return
        uses_loop = any(n.name == "loop" for n in nodes.Template(node.body).find_all(nodes.Name))
        if seq.kind in schema.KEY_ORDER:
            self.schema_for(node, seq, frame, uses_loop)
            return
        if seq.kind == ANY and seq.extra.get("list_or_text") and predicate is None and not seq.extra.get("items"):
            self.list_or_text_for(node, seq, frame)
            return
        if seq.kind == ANY and not seq.extra.get("items"):
            self.untyped_for(node, seq, frame, uses_loop)
            return
        counted = (node.test is not None or bool(filters)) and uses_loop
        if counted and (seq.kind not in {MSGS, CALLS, TOOLS, LIST} or seq.extra.get("reversed")):
            raise self.fail(node, "loop.* in a filtered for loop")
        body = Frame(names={}, parent=frame)
        target = node.target
        if seq.kind == CONTENT and self.elements_used_whole(node) and not node.else_ and node.test is None:
            if seq.extra.get("final"):
                self.warn(
                    node,
                    "a loop over the characters of a message's text",
                    "an assistant prefill ending in this text is not cut there",
                )
            self.chars_for(node, Value(seq.code, STR), frame, uses_loop)
            return
        if seq.kind in {CONTENT, PARTS}:
            if not isinstance(target, nodes.Name):
                raise self.fail(node, "unpacking content parts")
            body.names[target.name] = Value("$.Messages", PART, extra={"content": seq.code, **final_of(seq)})
            body.loop = Loop(index="0", seq="", last="", fixed=(0, 1))
            self.action("if true")
            self.declare_scope(body, node.body)
            self.visit_body(node.body, body)
            self.action("end")
            return
        if seq.kind in {DICT, RECORD}:
            raise self.fail(node, "iterating a dict literal")
        if seq.kind in {PROPS, ARGS} or seq.extra.get("items"):
            key, val = (self.temp(), self.temp())
            if isinstance(target, nodes.Name) and not seq.extra.get("items"):
                body.names[target.name] = Value(key, STR)  # a mapping iterates as its keys
            elif isinstance(target, nodes.Tuple) and len(target.items) == 2:
                body.names[target.items[0].name] = Value(key, STR)  # type: ignore[attr-defined]
                body.names[target.items[1].name] = Value(val, PROP if seq.kind == PROPS else ANY)  # type: ignore[attr-defined]
            else:
                raise self.fail(node, "iterating a mapping without (key, value)")
            if seq.kind == ARGS:
                self.warn(node, "iterating tool call arguments", "keys come out sorted (Ollama passes a map)")
            # a nested property map is Ollama's ordered map: ranged (in the order sent) through .All
            ordered = bool(seq.extra.get("ordered"))
            if uses_loop:
                # a map has no index: count the steps (the body sees loop.*, not the outer loop's)
                mapvar, seen, idx, last = self.temp(), self.temp(), self.temp(), self.temp()
                self.action(f"{mapvar} := {seq.code}")
                size = f"{mapvar}.Len" if ordered else f"(len {mapvar})"
                self.action(f"{seen} := 0")
                self.action(f"range {key}, {val} := {mapvar}{'.All' if ordered else ''}")
                body.loop = self.counted_step(idx, seen, last, size)
            else:
                self.action(f"range {key}, {val} := {seq.code}{'.All' if ordered else ''}")
        elif seq.kind == STRLIST:
            self.strlist_for(node, seq, body, frame, uses_loop)
            return
        elif seq.kind == STR and not seq.extra.get("final"):
            self.chars_for(node, seq, frame, uses_loop)
            return
        elif seq.kind in {MSGS, CALLS, TOOLS, LIST, ANYOF} or seq.kind == INT:
            if not isinstance(target, nodes.Name):
                raise self.fail(node, "tuple unpacking in for")
            seqvar, idx, item = self.temp(), self.temp(), self.temp()
            self.action(f"{seqvar} := {seq.code}")
            kind = ELEMENT.get(seq.kind, ANY) if seq.kind != INT else INT
            body.names[target.name] = Value(item, kind)
            if seq.kind == INT:
                # Go ranges over an integer with one variable: the step count; the value follows from it
                self.action(f"range {idx} := {seqvar}")
                start, step, last = seq.extra.get("start", "0"), seq.extra.get("step", 1), self.temp()
                if step == 1:
                    self.action(f'{item} := len (printf "%*s%*s" {start} "" {idx} "")')
                else:
                    self.action(f'{item} := len (slice (printf "%*s" {start} "") {idx})')
                if uses_loop:
                    self.action(f'{last} := len (slice (printf "%*s" {seqvar} "") 1)')
                body.loop = Loop(index=idx, seq="", last=last, length=seqvar)
            else:
                if counted:
                    # loop.* counts the elements that pass the filter: count them all first
                    passing = self.count_passing(node, filters, seqvar, kind, frame)
                if seq.extra.get("reversed"):
                    # the i-th step takes element len-1-i, which is len(seq[i+1:])
                    self.action(f"range {idx} := len {seqvar}")
                    self.action(f"{item} := index {seqvar} (len (slice {seqvar} ({textops.plus_one(idx)})))")
                else:
                    self.action(f"range {idx}, {item} := {seqvar}")
                last = self.temp()
                if uses_loop:
                    self.action(f"{last} := len (slice {seqvar} 1)")
                neighbours = kind if not seq.extra.get("reversed") else None
                body.loop = Loop(index=idx, seq=seqvar, last=last, item_kind=neighbours)
        else:
            raise self.fail(node, f"for over {seq.kind}")
        guard = 0
        if node.test is not None:
            self.action(f"if {self.truth(node.test, body)}")
            guard += 1
        if filters:
            self.action(f"if {self.selection_test(filters, body.names[target.name])}")  # type: ignore[union-attr]
            guard += 1
        iterated = None
        if node.else_ and guard:
            # Jinja's `else` runs when no element passed the filter: a Go flag set by each that does
            iterated = self.temp()
            self.out.insert(flag_at, f"{{{{ {iterated} := false }}}}")
            self.action(f"{iterated} = true")
        if counted:
            total, seen = passing
            body.loop = self.counted_step(self.temp(), seen, self.temp(), total)
        self.declare_scope(body, node.body)
        self.visit_body(node.body, body)
        for _ in range(guard):
            self.action("end")
        if node.else_ and iterated is not None:
            self.action("end")
            self.action(f"if not {iterated}")
            self.cond_depth += 1
            self.visit_body(node.else_, frame)
            self.cond_depth -= 1
        elif node.else_:
            self.action("else")
            self.cond_depth += 1
            self.visit_body(node.else_, frame)
            self.cond_depth -= 1
        self.action("end")

    @staticmethod
    def elements_used_whole(node: nodes.For) -> bool:
        """Does a loop over a message's text use its elements only whole (printed, filtered),
        never as content parts (no attribute, item or test of them, not passed to a call)? Then
        they are what Python's loop over Ollama's string gives: its characters."""
        if not isinstance(node.target, nodes.Name):
            return False
        name = node.target.name
        body = nodes.Template(node.body)

        def is_target(expr: nodes.Node | None) -> bool:
            return isinstance(expr, nodes.Name) and expr.name == name

        for sub in body.find_all((nodes.Getattr, nodes.Getitem, nodes.Test)):
            if is_target(sub.node):
                return False
        for call in body.find_all(nodes.Call):
            if any(is_target(arg) for arg in (*call.args, *(kw.value for kw in call.kwargs))):
                return False
        for assign in body.find_all(nodes.Assign):
            if any(is_target(n) for n in (assign.node, *assign.node.find_all(nodes.Name))):
                return False  # kept under another name, which may be used as a part
        return True

    def list_or_text_for(self, node: nodes.For, seq: Value, frame: Frame) -> None:
        """A loop over a variable holding a list on some paths and text on others (see
        `list_or_text`): the same loop twice, each under a test of the Go value's type."""
        list_kind, text_kind = seq.extra["list_or_text"]
        self.action(f'if eq (printf "%T" {seq.code}) "string"')
        self.cond_depth += 1
        for kind in (text_kind, list_kind):
            if kind == list_kind:
                self.action("else")
            alias = Frame(
                names={"__alternative__": Value(seq.code, kind, extra=final_of(seq) if kind == text_kind else {})},
                parent=frame,
            )
            alias.depth = frame.depth
            loop = nodes.For(
                node.target,
                nodes.Name("__alternative__", "load"),
                node.body,
                node.else_,
                node.test,
                node.recursive,
                lineno=node.lineno,
            )
            self.stmt_For(loop, alias)
        self.cond_depth -= 1
        self.action("end")

    @staticmethod
    def is_range(node: nodes.Node, frame: Frame) -> bool:
        return (
            isinstance(node, nodes.Call)
            and isinstance(node.node, nodes.Name)
            and node.node.name == "range"
            and frame.lookup("range") is None
            and not node.kwargs
        )

    def range_of(self, call: nodes.Call, frame: Frame) -> Value:
        """`range(start, stop[, step])` looped over: the step count as a Go int (0 when Python's
        range is empty), with the first value and the step (1 or -1) the loop computes values from."""
        args = [self.expr(a, frame) for a in call.args]
        if (
            all(a.is_const and isinstance(a.const, int) and not isinstance(a.const, bool) for a in args)
            and 1 <= len(args) <= 3
        ):
            return const(list(range(*(a.const for a in args))))
        if len(args) == 1:
            return self.expr(call, frame)
        step = args[2] if len(args) == 3 else const(1)
        if not (step.is_const and step.const in (1, -1)) or len(args) > 3:
            raise self.fail(call, "range() with a step other than 1 or -1")
        start, stop = args[0], args[1]
        for bound in (start, stop):
            if bound.kind != INT:
                raise self.fail(call, f"range() of a {bound.kind}")
        if start.is_const and start.const < 0:
            raise self.fail(call, "range() from a negative number")
        count = self.temp()
        if step.const == -1 and stop.is_const and stop.const == -1:
            self.action(f"{count} := {textops.plus_one(start.code)}")  # start, start-1, ..., 0
        elif stop.is_const and stop.const < 0:
            raise self.fail(call, "range() down to a negative number other than -1")
        else:
            low, high = (start, stop) if step.const == 1 else (stop, start)
            self.action(f"{count} := 0")
            self.action(f"if lt {low.code} {high.code}")
            self.action(f'{count} = len (slice (printf "%*s" {high.code} "") {low.code})')
            self.action("end")
        return Value(count, INT, extra={"start": start.code, "step": step.const})

    def count_passing(
        self,
        node: nodes.For,
        filters: list[tuple[nodes.Filter, Frame, str | None]],
        seqvar: str,
        kind: str,
        frame: Frame,
    ) -> tuple[str, str]:
        """Go variables: how many elements pass a filtered loop's filters, and a step counter at 0."""
        assert isinstance(node.target, nodes.Name)
        total, seen, idx, item = self.temp(), self.temp(), self.temp(), self.temp()
        scope = Frame(names={node.target.name: Value(item, kind)}, parent=frame)
        self.action(f"{total} := 0")
        self.action(f"range {idx}, {item} := {seqvar}")
        tests = [self.selection_test(filters, scope.names[node.target.name])] if filters else []
        if node.test is not None:
            tests.append(self.truth(node.test, scope))
        self.action(f"if {tests[0] if len(tests) == 1 else '(and ' + ' '.join(tests) + ')'}")
        self.action(f"{total} = {textops.plus_one(total)}")
        self.action("end")
        self.action("end")
        self.action(f"{seen} := 0")
        return total, seen

    def counted_step(self, idx: str, seen: str, last: str, total: str) -> Loop:
        """Number a step of a loop whose Go `range` gives no usable index (a map, a filtered or a
        schema loop): `idx` := the steps `seen` so far (then one more), `last` := `total` - 1."""
        self.action(f"{idx} := {seen}")
        self.action(f"{seen} = {textops.plus_one(seen)}")
        self.action(f'{last} := len (slice (printf "%*s" {total} "") 1)')
        return Loop(index=idx, seq="", last=last, length=total)

    def schema_for(self, node: nodes.For, seq: Value, frame: Frame, uses_loop: bool) -> None:
        """A loop over a tool schema dict: one step per key its Ollama struct has set."""
        target = node.target
        pairs = bool(seq.extra.get("items"))
        names = [n.name for n in target.items] if isinstance(target, nodes.Tuple) else [target.name]  # type: ignore[attr-defined]
        if len(names) != (2 if pairs else 1) or node.else_:
            raise self.fail(node, f"this loop over a {seq.kind} schema dict")
        if any(True for _ in nodes.Template(node.body).find_all((nodes.Break, nodes.Continue))):
            raise self.fail(node, "break/continue in a loop over a schema dict")
        keys = schema.KEY_ORDER[seq.kind]
        if seq.extra.get("sorted"):
            keys = tuple(sorted(keys, key=str.lower))
        self.warn(node, f"iterating a {seq.kind} schema dict", schema.ORDER_EFFECT)
        obj = Value(self.temp(), seq.kind)
        self.action(f"{obj.code} := {seq.code}")
        steps = []
        for key in keys:
            if not schema.passes(key, seq.extra.get("key_tests", ())):
                continue
            step = Frame(names={names[0]: const(key)}, parent=frame)
            if pairs:
                step.names[names[1]] = self.attr(obj, key, node)
            test = self.expr(node.test, step) if node.test is not None else const(True)
            if test.is_const and not test.const:
                continue
            guard = schema.present(obj.code, seq.kind, key)
            if not test.is_const:
                guard = f"and {guard} {self.truth_of(test)}" if guard != "true" else self.truth_of(test)
            steps.append((step, guard))
        if uses_loop:
            # which keys are set is known only at run time: count them first, then each step
            total, seen = self.temp(), self.temp()
            self.action(f"{total} := 0")
            self.action(f"{seen} := 0")
            for _, guard in steps:
                self.action(f"if {guard}")
                self.action(f"{total} = {textops.plus_one(total)}")
                self.action("end")
        for step, guard in steps:
            self.action(f"if {guard}")
            if uses_loop:
                step.loop = self.counted_step(self.temp(), seen, self.temp(), total)
            self.declare_scope(step, node.body)
            self.visit_body(node.body, step)
            self.action("end")

    def untyped_for(self, node: nodes.For, seq: Value, frame: Frame, uses_loop: bool) -> None:
        """A loop over an untyped value: a list's elements, a mapping's keys (in Go's sorted
        order); a string's characters are not stepped through (warned)."""
        if not isinstance(node.target, nodes.Name) or node.else_ or node.test is not None:
            raise self.fail(node, "this loop over an untyped value")
        self.warn(node, "a loop over an untyped value", "a mapping's keys come out sorted; a string is not iterated")
        obj = self.temp()
        self.action(f"{obj} := {seq.code}")
        for is_list in (True, False):
            self.action(f'if eq (printf "%.2T" {obj}) "[]"' if is_list else f'else if eq (printf "%.3T" {obj}) "map"')
            idx, item, last = self.temp(), self.temp(), self.temp()
            if is_list:
                self.action(f"range {idx}, {item} := {obj}")
                self.action(f"{last} := len (slice {obj} 1)")
                loop = Loop(index=idx, seq=obj, last=last)
            else:
                seen, ignored = self.temp(), self.temp()
                self.action(f"{seen} := 0")
                self.action(f"range {item}, {ignored} := {obj}")
                loop = self.counted_step(idx, seen, last, f"(len {obj})")
            body = Frame(names={node.target.name: Value(item, STR if not is_list else ANY)}, parent=frame, loop=loop)
            self.declare_scope(body, node.body)
            self.visit_body(node.body, body)
            self.action("end")
        self.action("end")

    def chars_for(self, node: nodes.For, seq: Value, frame: Frame, uses_loop: bool) -> None:
        """A loop over a string: one step per character. A schema `type` (a list in Ollama) is
        a string when it names one type, and a list of the names when it has several."""
        if not isinstance(node.target, nodes.Name) or node.else_ or node.test is not None:
            raise self.fail(node, "this loop over a string")
        types = seq.extra.get("types")
        if types:
            self.action(f"if eq (len {types}) 1")
        text, at, count, idx, last, char = (self.temp() for _ in range(6))
        self.action(f"{text} := {seq.code}")
        total = None
        if uses_loop:
            total = self.temp()
            self.action(f"{total} := 0")
            self.action(f"range {at} := len {text}")
            self.action(f"if not (and (ge (index {text} {at}) 128) (lt (index {text} {at}) 192))")
            self.action(f"{total} = {textops.plus_one(total)}")
            self.action("end")
            self.action("end")
        self.action(f"{count} := 0")
        self.action(f"range {at} := len {text}")
        # a character starts at every byte that is not a UTF-8 continuation byte
        self.action(f"if not (and (ge (index {text} {at}) 128) (lt (index {text} {at}) 192))")
        self.action(f'{char} := printf "%.1s" (slice {text} {at})')
        self.action(f"{idx} := {count}")
        self.action(f"{count} = {textops.plus_one(count)}")
        self.action(f"{last} := -1")
        self.action(f"if eq (len (slice {text} {at})) (len {char})")
        self.action(f"{last} = {idx}")
        self.action("end")
        body = Frame(
            names={node.target.name: Value(char, STR)},
            parent=frame,
            loop=Loop(index=idx, seq="", last=last, length=total),
        )
        self.declare_scope(body, node.body)
        self.visit_body(node.body, body)
        self.action("end")
        self.action("end")
        if types:
            self.action("else")
            listed, i, item, final = self.temp(), self.temp(), self.temp(), self.temp()
            self.action(f"{listed} := {types}")
            self.action(f"range {i}, {item} := {listed}")
            self.action(f"{final} := len (slice {listed} 1)")
            body = Frame(
                names={node.target.name: Value(item, STR)}, parent=frame, loop=Loop(index=i, seq=listed, last=final)
            )
            self.declare_scope(body, node.body)
            self.visit_body(node.body, body)
            self.action("end")
            self.action("end")

    def strlist_for(self, node: nodes.For, seq: Value, body: Frame, frame: Frame, uses_loop: bool) -> None:
        """A loop over a list of strings built at run time: a scan for its element markers."""
        if not isinstance(node.target, nodes.Name):
            raise self.fail(node, "tuple unpacking in for")
        if node.else_:
            self.action(f"if {seq.code}")
        item, idx, total = strlists.each(self, seq.code)
        body.names[node.target.name] = Value(item, STR, extra=final_of(seq))
        last = self.temp()
        if uses_loop:
            self.action(f'{last} := len (slice (printf "%*s" {total} "") 1)')
        body.loop = Loop(index=idx, seq="", last=last, length=total)
        if node.test is not None:
            self.action(f"if {self.truth(node.test, body)}")
        self.declare_scope(body, node.body)
        self.visit_body(node.body, body)
        if node.test is not None:
            self.action("end")
        self.action("end")
        self.action("end")
        if node.else_:
            self.action("else")
            self.cond_depth += 1
            self.visit_body(node.else_, frame)
            self.cond_depth -= 1
            self.action("end")

    def unrolled_for(self, node: nodes.For, items: list[Any], frame: Frame) -> None:
        """A loop over a literal list: the body once per element, with the element as a constant."""
        if not items:
            self.visit_body(node.else_, frame)
            return
        if any(True for _ in nodes.Template(node.body).find_all((nodes.Break, nodes.Continue))):
            raise self.fail(node, "break/continue in a loop over a literal list")
        target = node.target
        unpacks = isinstance(target, nodes.Tuple) and all(isinstance(n, nodes.Name) for n in target.items)
        if not (isinstance(target, nodes.Name) or unpacks) or node.test is not None:
            raise self.fail(node, "a filtered or unpacking loop over a literal list")
        for i, element in enumerate(items):
            if unpacks:
                names = [n.name for n in target.items]  # type: ignore[attr-defined]
                if not isinstance(element, (list, tuple)) or len(element) != len(names):
                    raise self.fail(node, "unpacking a literal list element of another length")
                bound = {name: const(part) for name, part in zip(names, element)}
            else:
                bound = {target.name: const(element)}  # type: ignore[attr-defined]
            body = Frame(names=bound, parent=frame, loop=Loop("", "", "", fixed=(i, len(items))))
            self.action("if true")
            self.declare_scope(body, node.body)
            self.visit_body(node.body, body)
            self.action("end")

    def selection_test(self, filters: list[tuple[nodes.Filter, Frame, str | None]], item: Value) -> str:
        """Go condition: `item` passes every filter of a selection; a filter stored on some paths
        only applies when its Go flag is on."""
        tests = []
        for flt, frame, when in filters:
            test = self.select_test(flt, item, frame)
            tests.append(f"(or (not {when}) {test})" if when else test)
        return tests[0] if len(tests) == 1 else f"(and {' '.join(tests)})"

    def select_test(self, node: nodes.Filter, item: Value, frame: Frame) -> str:
        args = [self.const_of(a, frame) for a in node.args]
        if not args or not isinstance(args[0], str):
            raise self.fail(node, f"{node.name} without an attribute name")
        attr = item
        for name in args[0].split("."):  # Jinja's attribute filters follow dotted paths
            attr = self.attr(attr, name, node)
        if len(args) == 1:
            test = self.truth_of(attr)
        elif len(args) == 3 and args[1] in {"equalto", "==", "eq"}:
            test = self.compare_eq(attr, const(args[2]), node)
        elif len(args) == 3 and args[1] in {"ne", "!="}:
            test = f"(not {self.compare_eq(attr, const(args[2]), node)})"
        elif len(args) == 2 and args[1] in {"defined", "undefined", "none"}:
            test = self.is_test(args[1], attr, node)
        else:
            raise self.fail(node, f"{node.name} with test {args[1:]}")
        return test if node.name == "selectattr" else f"(not {test})"

    # ---- expressions ----------------------------------------------------------------

    def const_of(self, node: nodes.Expr, frame: Frame) -> Any:
        value = self.expr(node, frame)
        if not value.is_const:
            raise self.fail(node, "a non-constant argument where a constant is needed")
        return value.const

    def global_name(self, name: str, node: nodes.Node | None) -> Value:
        if name == "messages":
            return Value("$.Messages", MSGS)
        if name == "tools":
            return Value("$.Tools", TOOLS, extra={"nullable": True})
        if name == "add_generation_prompt":
            return Value('(ne (index $.Messages (len (slice $.Messages 1))).Role "assistant")', BOOL)
        if name in self.tokens:
            return const(self.tokens[name])
        if name.endswith("_token"):
            self.warn(node, name, "the tokenizer does not define it; rendered as empty text")
            return UNDEFINED
        if name in GLOBAL_FUNCTIONS:
            return Value("", FUNCTION)
        if name in {"true", "True"}:
            return const(True)
        if name in {"false", "False"}:
            return const(False)
        if name in {"none", "None"}:
            return const(None)
        return UNDEFINED

    def expr(self, node: nodes.Expr, frame: Frame) -> Value:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise self.fail(node, f"expression {type(node).__name__}")
        return method(node, frame)

    def expr_Const(self, node: nodes.Const, frame: Frame) -> Value:
        return const(node.value)

    def expr_TemplateData(self, node: nodes.TemplateData, frame: Frame) -> Value:
        return const(node.data)

    def expr_List(self, node: nodes.List, frame: Frame) -> Value:
        items = [self.expr(item, frame) for item in node.items]
        if all(item.is_const for item in items):
            return const([item.const for item in items])
        codes = [self.strlist_item(item, node, may_be_final=True) for item in items]
        return Value(strlists.of_items(codes), STRLIST, extra=self.any_final(items))

    @staticmethod
    def any_final(values: list[Value]) -> dict[str, Any]:
        """The `final` mark of a value built from these: set when any of them may be the final text."""
        finals = [v.extra["final"] for v in values if v.extra.get("final")]
        if not finals:
            return {}
        return {"final": finals[0] if len(finals) == 1 else f"(or {' '.join(finals)})"}

    def strlist_item(self, value: Value, node: nodes.Node, may_be_final: bool = False) -> str:
        """Go operand of a string going into a run-time list (only strings can be held there).

        A message's text goes in only where the list carries the `final` mark on (`may_be_final`):
        its elements are then printed as the final text may be, cut after the first holding it.
        """
        if value.is_const and isinstance(value.const, str):
            return go_string(value.const)
        if value.kind not in {STR, CONTENT} or value.is_const:
            raise self.fail(
                node,
                f"a list of {value.kind if not value.is_const else type(value.const).__name__} values built at run time",
            )
        if value.extra.get("final"):
            if not may_be_final:
                raise self.fail(
                    node, "a message's text stored in a list", "(an assistant prefill could not be cut inside it)"
                )
            self.warn(
                node,
                "a message's text stored in a list",
                "if it is the prefilled final message's text, the reply is cut after the first element "
                "holding that text (transformers cuts after the last)",
            )
        return value.code

    def strlist_code(self, value: Value, node: nodes.Node) -> str:
        """Go operand of a list of strings: a literal list or one built at run time."""
        if value.kind == STRLIST:
            return value.code
        if value.is_const and isinstance(value.const, list):
            if not all(isinstance(item, str) for item in value.const):
                raise self.fail(node, "a list literal of non-strings as a value")
            return strlists.literal(value.const)
        raise self.fail(node, f"a list of strings combined with {value.kind}")

    expr_Tuple = expr_List

    def expr_Name(self, node: nodes.Name, frame: Frame) -> Value:
        if node.name == "loop" and frame.lookup("loop") is None:
            return Value("", "loop")
        found = frame.lookup(node.name)
        known = found.extra.get("known") if found is not None else None
        if known is not None and known[0] == self.flow_epoch:
            return const(known[1])  # set to a constant with no branch point since
        if found is not None and found.extra.get("literal"):
            if id(node) not in self.literal_uses:
                raise self.fail(
                    node, f"{node.name} (a dict literal on some paths) used other than tested or handed to a macro"
                )
            return self.literal_or(found)
        if found is not None:
            return found
        return self.global_name(node.name, node)

    @staticmethod
    def branching_uses(tree: nodes.Template) -> set[int]:
        """Name nodes where a `LITERAL_OR` value can branch on its flag: tested (truth, `is none`,
        `is defined`) or handed to a macro."""
        uses: set[int] = set()
        macros = {m.name for m in tree.find_all(nodes.Macro)}
        for node in tree.find_all((nodes.If, nodes.Not, nodes.CondExpr, nodes.Test, nodes.Call)):
            if isinstance(node, (nodes.If, nodes.CondExpr)):
                uses.add(id(node.test))
            elif isinstance(node, nodes.Not) or (
                isinstance(node, nodes.Test) and node.name in {"none", "defined", "undefined"}
            ):
                uses.add(id(node.node))
            elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) and node.node.name in macros:
                uses.update(id(arg) for arg in node.args)
        return uses

    @staticmethod
    def literal_or(slot: Value) -> Value:
        """A variable given a dict literal on some paths: `LITERAL_OR`, which only `is none`,
        `is defined`, truth tests and macro arguments take (each branches on the Go flag);
        anything else refuses the kind."""
        other = Value(
            slot.code, slot.kind, extra={k: v for k, v in slot.extra.items() if k not in {"literal", "literal_flag"}}
        )
        return Value(
            slot.code,
            LITERAL_OR,
            extra={"flag": slot.extra["literal_flag"], "literal": slot.extra["literal"], "other": other},
        )

    def loop_of(self, frame: Frame) -> Loop:
        f: Frame | None = frame
        while f is not None:
            if f.loop is not None:
                return f.loop
            f = f.parent
        raise ConversionError("loop used outside a for loop")

    def expr_Getattr(self, node: nodes.Getattr, frame: Frame) -> Value:
        base = self.expr(node.node, frame)
        if base.kind == "loop":
            return self.loop_attr(node, frame)
        if base.kind in DICT_KINDS and node.attr in DICT_METHODS:
            return Value("", BOUND_METHOD)  # Jinja's getattr finds dict methods before keys
        return self.attr(base, node.attr, node)

    def loop_attr(self, node: nodes.Getattr, frame: Frame) -> Value:
        loop = self.loop_of(frame)
        if loop.fixed is not None:
            i, n = loop.fixed
            values = {
                "first": i == 0,
                "last": i == n - 1,
                "index0": i,
                "index": i + 1,
                "length": n,
                "revindex": n - i,
                "revindex0": n - i - 1,
            }
            if node.attr in values:
                return const(values[node.attr])
            raise self.fail(node, f"loop.{node.attr}")
        if node.attr == "index0":
            return Value(loop.index, INT)
        if node.attr == "index":
            return Value(f"({textops.plus_one(loop.index)})", INT)
        if node.attr == "first":
            return Value(f"(eq {loop.index} 0)", BOOL)
        if node.attr == "last":
            return Value(f"(eq {loop.index} {loop.last})", BOOL)
        if node.attr == "length":
            return Value(loop.length or f"(len {loop.seq})", INT)
        if node.attr in {"previtem", "nextitem"} and loop.item_kind is not None:
            return self.neighbour_item(loop, node.attr == "previtem")
        raise self.fail(node, f"loop.{node.attr}")

    def neighbour_item(self, loop: Loop, previous: bool) -> Value:
        """loop.previtem / nextitem: the element beside this step, Undefined at the list's ends.

        The Go variable holds `false` at an end, so only a guarded access (`loop.previtem and
        loop.previtem.role`) reads a field, as only a guarded one renders in Jinja.
        """
        item, exists = self.temp(), self.temp()
        if previous:
            self.action(f"{exists} := ne {loop.index} 0")
            position = f'(len (slice (printf "%*s" {loop.index} "") 1))'
        else:
            self.action(f"{exists} := lt {loop.index} (len (slice {loop.seq} 1))")
            position = f"({textops.plus_one(loop.index)})"
        self.action(f"{item} := false")
        self.action(f"if {exists}")
        self.action(f"{item} = index {loop.seq} {position}")
        self.action("end")
        return Value(item, loop.item_kind or ANY, extra={"maybe_undefined": True, "defined_flag": exists})

    def attr(self, base: Value, name: str, node: nodes.Node) -> Value:
        value = self.field(base, name, node)
        if schema.optional(base.kind, name) and value.kind != UNDEF:
            value.extra["optional"] = True
        return value

    def field(self, base: Value, name: str, node: nodes.Node) -> Value:
        if base.kind == BOUND_METHOD or base.extra.get("items"):
            return UNDEFINED  # neither a method nor a list of (key, value) pairs has fields
        if base.kind in {DICT, RECORD}:
            return self.dict_fields(base).get(name, UNDEFINED)
        if base.kind == NS:
            attrs = base.extra["attrs"]
            if name not in attrs:
                return UNDEFINED
            found = attrs[name]
            known = found.extra.get("known")
            if known is not None and known[0] == self.flow_epoch:
                return const(known[1])  # set to a constant with no branch point since
            extra = {"maybe_undefined": True} if found.extra.get("maybe_undefined") else {}
            if found.extra.get("defined_flag"):
                extra["defined_flag"] = found.extra["defined_flag"]
            if found.kind == NONE or found.extra.get("maybe_none"):
                extra["maybe_none"] = True  # None is held as "" until some path sets it
            if found.extra.get("maybe_negative") or (
                found.is_const and isinstance(found.const, int) and found.const < 0
            ):
                extra["maybe_negative"] = True
            if name in base.extra.get("text_attrs", ()):
                extra["final"] = f"{base.code}_{name}_final"
            return Value(f"{base.code}_{name}", found.kind if found.kind not in {NONE, UNDEF} else ANY, extra=extra)
        if base.kind == PART:
            if name == "type":
                return const("text")
            if name == "text":
                return Value(base.extra["content"], STR, extra=final_of(base))
            return UNDEFINED
        if base.kind in {CONTENT} and name in {"text"}:
            return UNDEFINED
        if base.kind == ARGS:
            return Value(f"(index {base.code} {go_string(name)})", ANY)
        if base.kind == PROPS:
            return Value(f"(index {self.plain_map(base)} {go_string(name)})", PROP)
        if base.kind == PROP and name in {"type"}:
            return Value(f"(index {base.code}.Type 0)", STR, extra={"types": f"{base.code}.Type"})
        if base.kind == PROP and name == "properties":
            # a *api.ToolPropertiesMap (ordered); ranged through .All, tojson'd by its Go type
            return Value(f"{base.code}.Properties", PROPS, extra={"ordered": True})
        if base.kind == PROP and name == "required":
            return Value(f"{base.code}.Required", LIST)
        if base.kind == PROP and name == "anyOf":
            return Value(f"{base.code}.AnyOf", ANYOF)
        if base.kind == CALL and name in {"name", "arguments"}:
            # a flat {"name", "arguments"} call: read through `.function`
            return self.attr(Value(f"{base.code}.Function", FUNC), name, node)
        if base.kind == CALL and name == "type":
            return const("function")
        fields = FIELDS.get(base.kind)
        if fields is not None:
            if name in fields:
                go, kind = fields[name]
                value = Value(f"{base.code}.{go}", kind)
                if base.kind == MSG and name in OPTIONAL_MESSAGE_KEYS:
                    value.extra["optional"] = True
                if base.kind == MSG and name == "content":
                    value.extra["final"] = f"(eq {base.code} $ofc_final)"
                return value
            return UNDEFINED
        if base.kind in {UNDEF, NONE}:
            return UNDEFINED
        if base.kind in {STR, CONTENT}:
            if not hasattr(str, name):
                return UNDEFINED  # a string has no such attribute: Jinja gives Undefined
            return Value("", "method:" + name, extra={"self": base})
        if (base.kind in SEQUENCES or base.kind == STRLIST) and not hasattr(list, name):
            return UNDEFINED  # a list has no such attribute: Jinja gives Undefined
        if base.kind in {MSGS, TOOLS, CALLS, LIST} and name in {"items", "keys", "values", "get"}:
            raise self.fail(node, f".{name}() on a list")
        if base.kind == ANY:
            return self.untyped_field(base, name)
        raise self.fail(node, f"attribute .{name} of {base.kind}")

    def untyped_field(self, base: Value, name: str) -> Value:
        """`x.name` / `x['name']` of an untyped value (decoded JSON): the key's value where `x` is
        a mapping that has it, else Undefined (empty text) — found by a scan, so a key holding
        null still counts as defined."""
        obj, value, found, k, v = (self.temp() for _ in range(5))
        self.action(f"{obj} := {base.code}")
        self.action(f'{value} := ""')
        self.action(f"{found} := false")
        self.action(f'if eq (printf "%.3T" {obj}) "map"')
        self.key_scan(k, v, obj, go_string(name), f"{value} = {v}", f"{found} = true")
        self.action("end")
        return Value(value, ANY, extra={"maybe_undefined": True, "defined_flag": found})

    def key_scan(self, k: str, v: str, mapping: str, key: str, *statements: str) -> None:
        """Run `statements` where the Go map `mapping` (ranged as `k`, `v`) has the key `key`:
        a scan, as Go's `index` of a missing key gives the same as a key holding null."""
        self.action(f"range {k}, {v} := {mapping}")
        self.action(f"if eq {k} {key}")
        for statement in statements:
            self.action(statement)
        self.action("end")
        self.action("end")

    def untyped_get(self, base: Value, key: str, default: Value | None, node: nodes.Node) -> Value:
        """`x.get(key[, default])` of an untyped value: the key's value where `x` is a mapping that
        has it, else the default, None without one (Go's nil: `index` of a missing map key)."""
        if default is not None and default.kind in {UNDEF, NONE}:
            default = None
        if default is not None and not (
            default.kind in {STR, CONTENT, ANY} or (default.is_const and isinstance(default.const, (str, int)))
        ):
            raise self.fail(node, f".get() of an untyped value with a {default.kind} default")
        obj, result, k, v = self.temp(), self.temp(), self.temp(), self.temp()
        self.action(f"{obj} := {base.code}")
        initial = '""' if default is None else self.operand(default, node)
        self.action(f"{result} := {initial}")
        self.action(f'if eq (printf "%.3T" {obj}) "map"')
        if default is None:
            self.action(f"{result} = index {obj} {go_string(key)}")
        else:
            self.key_scan(k, v, obj, go_string(key), f"{result} = {v}")
        self.action("end")
        return Value(result, ANY)

    def untyped_element(self, base: Value, at: int) -> Value:
        """`x[i]` of an untyped value: the element where `x` is a list long enough, else Undefined."""
        seq, value, found = self.temp(), self.temp(), self.temp()
        self.action(f"{seq} := {base.code}")
        self.action(f'{value} := ""')
        self.action(f"{found} := false")
        self.action(f'if eq (printf "%.2T" {seq}) "[]"')
        need = at + 1 if at >= 0 else -at
        self.action(f"if ge (len {seq}) {need}")
        position = str(at) if at >= 0 else f"(len (slice {seq} {-at}))"
        self.action(f"{value} = index {seq} {position}")
        self.action(f"{found} = true")
        self.action("end")
        self.action("end")
        return Value(value, ANY, extra={"maybe_undefined": True, "defined_flag": found})

    @staticmethod
    def plain_map(value: Value) -> str:
        """Go operand of a mapping `index` and `len` work on (an ordered map made a Go map)."""
        return f"{value.code}.ToMap" if value.extra.get("ordered") else value.code

    def expr_Getitem(self, node: nodes.Getitem, frame: Frame) -> Value:
        base = self.expr(node.node, frame)
        if isinstance(node.arg, nodes.Slice):
            return self.slice(base, node.arg, frame, node)
        key = self.expr(node.arg, frame)
        if key.is_const and isinstance(key.const, str):
            if base.kind == "loop":
                return self.loop_attr(nodes.Getattr(node.node, key.const, "load", lineno=node.lineno), frame)
            value = self.attr(base, key.const, node)
            if base.kind in DICT_KINDS and key.const in DICT_METHODS:
                # Jinja's subscript falls back to the attribute: a missing key is the dict's method
                if value.kind == UNDEF:
                    return Value("", BOUND_METHOD)
                if value.extra.pop("optional", None):
                    value.extra["or_method"] = True
            return value
        if base.kind == "split":
            if key.is_const and (key.const == 0 or (key.const == -1 and "limit" not in base.extra)):
                return self.split_part(base, key.const, node)
            base = self.split_list(base)
        if base.kind in {DICT, RECORD}:
            return self.dict_lookup(base, key, node)
        if base.kind == "select" and key.is_const and key.const in (0, -1):
            return self.selected_element(base, key.const)
        if base.kind == STRLIST and key.is_const and key.const in (0, -1):
            return Value(strlists.element(self, base.code, key.const), STR, extra=final_of(base))
        if base.kind == STRLIST and key.kind == INT and not (key.is_const and key.const < 0):
            element, found = strlists.nth(self, base.code, key.code)
            return Value(element, STR, extra={"maybe_undefined": True, "defined_flag": found, **final_of(base)})
        if base.kind in {CONTENT}:
            if key.is_const and key.const in (0, -1):
                return Value("$.Messages", PART, extra={"content": base.code, **final_of(base)})
            raise self.fail(node, "indexing message content")
        if base.kind in SEQUENCES and key.kind == INT:
            element = ELEMENT.get(base.kind, ANY)
            if key.is_const and key.const < 0:
                return Value(f"(index {base.code} (len (slice {base.code} {-key.const})))", element)
            return Value(f"(index {base.code} {key.code})", element)
        if base.kind == ANY and key.is_const and isinstance(key.const, int) and not isinstance(key.const, bool):
            return self.untyped_element(base, key.const)
        if base.kind == ANY and key.is_const and isinstance(key.const, str):
            return self.untyped_field(base, key.const)
        if base.kind in {STR} and key.kind == INT:
            raise self.fail(node, "indexing a string")
        if base.kind == ARGS and key.kind == STR:
            return self.argument_named(base, key)
        raise self.fail(node, f"subscript of {base.kind}")

    def argument_named(self, args: Value, key: Value) -> Value:
        """`arguments[key]` with a key known at run time: the argument's value where the call has
        it, else Undefined — found by a scan, as Go's `index` of a missing key gives no value."""
        value, found, k, v = (self.temp() for _ in range(4))
        self.action(f'{value} := ""')
        self.action(f"{found} := false")
        self.key_scan(k, v, args.code, key.code, f"{value} = {v}", f"{found} = true")
        return Value(value, ANY, extra={"maybe_undefined": True, "defined_flag": found})

    def slice(self, base: Value, sl: nodes.Slice, frame: Frame, node: nodes.Node) -> Value:
        if sl.step is not None:
            step = self.expr(sl.step, frame)
            if (
                step.is_const
                and step.const == -1
                and sl.start is None
                and sl.stop is None
                and base.kind in {MSGS, CALLS, TOOLS}
            ):
                return Value(base.code, "reversed", extra={"base": base})
            raise self.fail(node, "slice with a step other than [::-1] of a list")
        start = self.expr(sl.start, frame) if sl.start is not None else None
        stop = self.expr(sl.stop, frame) if sl.stop is not None else None
        if base.kind == UNDEF and not base.extra.get("maybe_undefined"):
            self.warn(node, "slicing an undefined value", "Jinja fails there; rendered as an empty value instead")
            return UNDEFINED
        if base.kind in {STR, CONTENT}:
            if start is None and stop is not None and stop.is_const and stop.const >= 0:
                return Value(f'(printf "%.*s" {stop.code} {base.code})', STR)
            if self.runtime_count(start) or self.runtime_count(stop):
                return self.slice_by_count(base, start, stop, node)
            bounds = [
                b.const
                if b is not None and b.is_const and isinstance(b.const, int) and not isinstance(b.const, bool)
                else b
                for b in (start, stop)
            ]
            if any(isinstance(b, Value) for b in bounds):
                raise self.fail(node, "string slicing with a bound known only at run time")
            return Value(textops.slice_text(self, base.code, bounds[0], bounds[1]), STR)
        if base.kind == "split":
            base = self.split_list(base)
        if (
            base.kind == STRLIST
            and stop is None
            and start is not None
            and start.kind == INT
            and not (start.is_const and start.const < 0)
        ):
            return Value(strlists.tail(self, base.code, start.code), STRLIST, extra=final_of(base))
        if base.kind not in {MSGS, CALLS, TOOLS}:
            raise self.fail(node, f"slicing {base.kind}")

        def bound(value: Value) -> str:
            if value.is_const and isinstance(value.const, int) and value.const < 0:
                return f"(len (slice {base.code} {-value.const}))"
            if value.kind != INT:
                raise self.fail(node, "a non-integer slice bound")
            return value.code

        lo = bound(start) if start is not None else "0"
        if stop is None:
            return Value(f"(slice {base.code} {lo})", base.kind)
        return Value(f"(slice {base.code} {lo} {bound(stop)})", base.kind)

    @staticmethod
    def runtime_count(bound: Value | None) -> bool:
        """A run-time int that cannot be negative (Go's printf-width subtraction fails below zero)."""
        return bound is not None and not bound.is_const and bound.kind == INT and not bound.extra.get("maybe_negative")

    def slice_by_count(self, base: Value, start: Value | None, stop: Value | None, node: nodes.Node) -> Value:
        """`text[a:b]` with run-time bounds that are never negative: `%.*s` keeps the first n
        characters (clamped to the text, as Python clamps)."""
        for bound in (start, stop):
            if (
                bound is not None
                and not self.runtime_count(bound)
                and not (
                    bound.is_const
                    and isinstance(bound.const, int)
                    and not isinstance(bound.const, bool)
                    and bound.const >= 0
                )
            ):
                raise self.fail(node, "string slicing with a bound known only at run time")
        text, head = self.temp(), self.temp()
        self.action(f"{text} := {base.code}")
        self.action(f"{head} := {text}")
        if stop is not None:
            self.action(f'{head} = printf "%.*s" {stop.code} {text}')
        if start is None:
            return Value(head, STR)
        result = self.temp()
        self.action(f'{result} := slice {head} (len (printf "%.*s" {start.code} {head}))')
        return Value(result, STR)

    def expr_Neg(self, node: nodes.Neg, frame: Frame) -> Value:
        inner = self.expr(node.node, frame)
        if inner.is_const and isinstance(inner.const, int):
            return const(-inner.const)
        raise self.fail(node, "negation of a non-constant")

    def expr_Not(self, node: nodes.Not, frame: Frame) -> Value:
        inner = self.expr(node.node, frame)
        if inner.is_const:
            return const(not inner.const)
        return Value(f"(not {self.truth_of(inner)})", BOOL)

    def expr_And(self, node: nodes.And, frame: Frame) -> Value:
        return self.logic(node, frame, "and")

    def expr_Or(self, node: nodes.Or, frame: Frame) -> Value:
        return self.logic(node, frame, "or")

    def logic(self, node: nodes.BinExpr, frame: Frame, op: str) -> Value:
        left = self.expr(node.left, frame)
        if left.kind in {UNDEF, NONE} and not left.is_const:
            # only ever Undefined or None (a name not set yet, a context variable Ollama lacks): falsy
            return self.expr(node.right, frame) if op == "or" else left
        if left.is_const and bool(left.const) == (op == "or"):
            return left  # decided by the left operand: the right one is never evaluated (as in Jinja)
        right = self.expr(node.right, frame)
        if left.is_const:
            if op == "and":
                return right if left.const else left
            return left if left.const else right
        if (
            op == "or"
            and right.is_const
            and right.const in ([], {})
            and (left.kind in SEQUENCES or left.kind in MAPPINGS or left.kind == ANY)
        ):
            return left  # `x or []`: an empty collection ranges, tests and measures like the empty one
        if left.kind == BOOL and right.is_const and right.const is (op == "or"):
            return right  # `b and False` is False, `b or True` is True, whichever bool b is
        if right.is_const and (right.const is None or isinstance(right.const, bool)):
            if op == "and" and not right.const:
                # `x and false` is falsy either way; keep x's evaluation out
                return Value(f"(and {self.truth_of(left)} false)", BOOL)
            if op == "or" and right.const:
                return Value(f"(or {self.truth_of(left)} true)", BOOL)
        kind = left.kind if left.kind == right.kind else ANY
        if {left.kind, right.kind} <= {BOOL}:
            kind = BOOL
        if all(v.kind in {STR, CONTENT} or (v.is_const and isinstance(v.const, str)) for v in (left, right)):
            # Go's and/or return an operand, as Python's do: text either way (`content or ''`)
            return Value(
                f"({op} {self.truth_operand(left)} {self.truth_operand(right)})",
                STR,
                extra=self.any_final([left, right]),
            )
        return Value(f"({op} {self.truth_operand(left)} {self.truth_operand(right)})", kind)

    def truth_operand(self, value: Value) -> str:
        if value.extra.get("maybe_undefined") and value.code:
            return value.code
        if value.kind in {UNDEF, NONE}:
            return "false"
        if value.extra.get("or_method"):
            return "true"
        if value.kind == BOOL or value.kind in {STR, INT, CONTENT, MSGS, CALLS, TOOLS, ARGS, ANY}:
            return value.code
        return self.truth_of(value)

    def truth_of(self, value: Value) -> str:
        """Go's truthiness matches Python's for strings, numbers, lists and maps."""
        if value.kind == LITERAL_OR:
            flag = value.extra["flag"]
            return f"(or (and {flag} {self.truth_of(value.extra['literal'])}) (and (not {flag}) {self.truth_of(value.extra['other'])}))"
        if value.is_const:
            return "true" if value.const else "false"
        if (value.extra.get("maybe_undefined") or value.extra.get("maybe_none")) and value.code:
            return value.code  # "" until some path sets it (None is stored as "" too)
        if value.kind in {UNDEF, NONE}:
            return "false"
        if value.kind in {MSG, CALL, FUNC, TOOL, TFUNC, PART, NS, BOUND_METHOD} or value.extra.get("or_method"):
            return "true"
        if value.kind == RECORD:
            return "true" if value.extra["fields"] else "false"
        if value.extra.get("ordered"):
            return f"{value.code}.Len"  # a non-nil pointer to an empty map is still {}
        if value.kind in {"select", "mapped"}:
            return self.count_selected(value).code  # a selection is true when some element passes
        return value.code

    def truth(self, node: nodes.Expr, frame: Frame) -> str:
        return self.truth_of(self.expr(node, frame))

    def expr_CondExpr(self, node: nodes.CondExpr, frame: Frame) -> Value:
        test = self.expr(node.test, frame)
        truth = None if test.is_const else self.truth_of(test)
        if truth in {"true", "false"}:
            test = const(truth == "true")  # known from the data model (an absent schema key...)
        if test.is_const:
            # only the branch taken is evaluated, as in Python
            if test.const:
                return self.expr(node.expr1, frame)
            return self.expr(node.expr2, frame) if node.expr2 is not None else UNDEFINED
        yes = self.expr(node.expr1, frame)
        no = self.expr(node.expr2, frame) if node.expr2 is not None else UNDEFINED
        yes, no = self.empty_list_as(yes, no), self.empty_list_as(no, yes)
        result = self.temp()
        self.action(f"{result} := {self.operand(no, node)}")
        self.action(f"if {truth}")
        self.action(f"{result} = {self.operand(yes, node)}")
        self.action("end")
        kind = yes.kind if yes.kind == no.kind or no.kind in {UNDEF, NONE} else ANY
        if yes.kind in {STR, CONTENT} and no.kind in {STR, CONTENT, UNDEF, NONE}:
            kind = STR
        extra: dict[str, Any] = {}
        if kind in MAPPINGS and {yes.kind, no.kind} & {UNDEF, NONE}:
            # a message (or tool...) on one side, None or Undefined ("" in Go) on the other
            extra["maybe_none" if NONE in {yes.kind, no.kind} else "maybe_undefined"] = True
        return Value(result, kind, extra=extra)

    @staticmethod
    def empty_list_as(value: Value, other: Value) -> Value:
        """`[]` beside a Go list (`x if c else []`): an empty Go slice, whose element type
        no length or loop can see (a run-time Go list has no literal)."""
        if value.is_const and value.const == [] and other.kind in {MSGS, CALLS} and not other.is_const:
            return Value("(slice $.Messages 0 0)", other.kind)
        return value

    def expr_Compare(self, node: nodes.Compare, frame: Frame) -> Value:
        left = self.expr(node.expr, frame)
        parts = []
        for op in node.ops:
            right = self.expr(op.expr, frame)
            parts.append(self.compare(op.op, left, right, node))
            left = right
        if len(parts) == 1:
            return parts[0]
        if all(p.is_const for p in parts):
            return const(all(p.const for p in parts))
        return Value("(and " + " ".join(self.truth_of(p) for p in parts) + ")", BOOL)

    def compare(self, op: str, left: Value, right: Value, node: nodes.Node) -> Value:
        if left.is_const and right.is_const and not isinstance(left.const, list):
            import operator

            ops = {
                "eq": operator.eq,
                "ne": operator.ne,
                "lt": operator.lt,
                "gt": operator.gt,
                "lteq": operator.le,
                "gteq": operator.ge,
            }
            if op in ops:
                return const(ops[op](left.const, right.const))
        if op in {"in", "notin"}:
            test = self.contains(left, right, node)
            if test.is_const:
                return const(test.const if op == "in" else not test.const)
            return test if op == "in" else Value(f"(not {test.code})", BOOL)
        if op == "eq":
            eq = self.compare_eq(left, right, node)
            return const(eq == "true") if eq in {"true", "false"} else Value(eq, BOOL)
        if op == "ne":
            eq = self.compare_eq(left, right, node)
            return const(eq != "true") if eq in {"true", "false"} else Value(f"(not {eq})", BOOL)
        go = {"lt": "lt", "gt": "gt", "lteq": "le", "gteq": "ge"}[op]
        if left.kind not in {INT, STR} or right.kind not in {INT, STR}:
            raise self.fail(node, f"ordering comparison of {left.kind} and {right.kind}")
        return Value(f"({go} {left.code} {right.code})", BOOL)

    def compare_eq(self, left: Value, right: Value, node: nodes.Node) -> str:
        if left.is_const and not right.is_const:
            left, right = right, left
        if left.kind in {UNDEF} or (left.kind == NONE and not left.extra):
            if right.is_const:
                return "true" if right.const is None and left.kind == NONE else "false"
            return "false"
        if right.is_const:
            value = right.const
            if value is None:
                return "false"
            if isinstance(value, str):
                if left.kind in {INT, BOOL} or left.kind in MAPPINGS or left.kind in {MSGS, CALLS, TOOLS}:
                    return "false"  # never equal to a string (nor is Undefined, when it may be unset)
                if left.code.endswith(".Role") and self.tool_role != "tool":
                    if value == self.tool_role:
                        value = "tool"
                    elif value == "tool":
                        return "false"
                return f"(eq {left.code} {go_string(value)})"
            if isinstance(value, bool):
                return left.code if value else f"(not {left.code})"
            if isinstance(value, int):
                if left.kind not in {INT}:
                    raise self.fail(node, f"comparing {left.kind} with a number")
                return f"(eq {left.code} {value})"
            raise self.fail(node, "comparison with a list")
        if left.kind in {STR, CONTENT, INT} and right.kind in {STR, CONTENT, INT}:
            return f"(eq {left.code} {right.code})"
        if left.kind == BOOL and right.kind == BOOL:
            return f"(eq {left.code} {right.code})"
        if left.kind == MSG and right.kind == MSG:
            # Python compares the message dicts by value: every field Ollama keeps
            fields = " ".join(
                f"(eq {left.code}.{go} {right.code}.{go})"
                for go in ("Role", "Content", "Thinking", "ToolName", "ToolCallID")
            )
            return f"(and {fields} (eq (json {left.code}.ToolCalls) (json {right.code}.ToolCalls)))"
        if left.kind == ANY or right.kind == ANY:
            return f'(eq (printf "%v" {left.code}) (printf "%v" {right.code}))'
        raise self.fail(node, f"comparing {left.kind} with {right.kind}")

    def contains(self, needle: Value, hay: Value, node: nodes.Node) -> Value:
        if (hay.kind == ANY and needle.kind in {STR, CONTENT} | {ANY}) or (
            hay.kind == ANY and needle.is_const and isinstance(needle.const, str)
        ):
            return self.untyped_contains(needle, hay, node)
        if hay.is_const and isinstance(hay.const, list):
            if needle.is_const:
                return const(needle.const in hay.const)
            if not hay.const:
                return const(False)
            return Value(f"(eq {needle.code} " + " ".join(go_string(str(v)) for v in hay.const) + ")", BOOL)
        if hay.kind in {DICT, RECORD}:
            keys = list(self.dict_fields(hay))
            if needle.is_const:
                return const(needle.const in keys)
            texts = [k for k in keys if isinstance(k, str)]
            if needle.kind not in {STR, CONTENT}:
                raise self.fail(node, f"'in' on a dict literal with a {needle.kind}")
            if not texts:
                return const(False)
            return Value(f"(eq {needle.code} " + " ".join(go_string(k) for k in texts) + ")", BOOL)
        if hay.kind == LIST and not hay.is_const and (needle.kind in {STR, CONTENT} or needle.is_const):
            # a Go list of strings (a schema's `required`): compare element by element
            found, item = self.temp(), self.temp()
            self.action(f"{found} := false")
            self.action(f"range {item} := {hay.code}")
            text = needle.code if not needle.is_const else go_string(py_str(needle.const))
            self.action(f'if and (eq (printf "%T" {item}) "string") (eq (printf "%v" {item}) {text})')
            self.action(f"{found} = true")
            self.action("break")
            self.action("end")
            self.action("end")
            if needle.is_const and not isinstance(needle.const, str):
                return const(False)
            return Value(found, BOOL)
        if hay.kind == STRLIST:
            if needle.is_const and not isinstance(needle.const, str):
                return const(False)
            return Value(strlists.contains(self, hay.code, self.strlist_item(needle, node)), BOOL)
        if hay.kind == MSG and needle.is_const:
            key = needle.const
            if key in {"role", "content"}:
                return const(True)
            if key in MESSAGE_FIELDS:
                return Value(f"(not (not {hay.code}.{MESSAGE_FIELDS[key][0]}))", BOOL)
            return const(False)
        if hay.kind in {TFUNC, PARAMS} and needle.is_const and schema.optional(hay.kind, needle.const):
            # the dict has the key only where Ollama's field is set (a tool without a description)
            return Value(f"(not (not {schema.present(hay.code, hay.kind, needle.const)}))", BOOL)
        if hay.kind in {CALL, FUNC, TOOL, TFUNC, PARAMS} and needle.is_const:
            return const(
                needle.const in FIELDS.get(hay.kind, {}) or (hay.kind == CALL and needle.const in {"function", "type"})
            )
        if hay.kind in {STR, CONTENT} and needle.is_const and isinstance(needle.const, str):
            return Value(textops.contains(self, hay.code, needle.const), BOOL)
        if hay.kind == PROP and needle.is_const and isinstance(needle.const, str):
            # a property has a key when Ollama's field for it is set; Ollama keeps no other key
            if needle.const not in schema.KEY_ORDER[PROP]:
                self.warn(
                    node,
                    f"'{needle.const}' in a tool schema property",
                    "always false: Ollama keeps no such key of a property",
                )
                return const(False)
            return Value(f"(not (not {schema.present(hay.code, PROP, needle.const)}))", BOOL)
        if hay.kind in {STR, CONTENT} and needle.kind in {STR, CONTENT} and not needle.is_const:
            return Value(textops.contains_text(self, hay.code, needle.code), BOOL)
        if hay.kind in {ARGS, PROPS} and needle.kind in {STR}:
            return Value(f"(not (not (index {self.plain_map(hay)} {needle.code})))", BOOL)
        if hay.kind == UNDEF and not hay.extra.get("maybe_undefined"):
            return const(False)  # Jinja's Undefined iterates as empty
        if hay.kind in {UNDEF, NONE}:
            raise self.fail(node, "'in' on an undefined value")
        raise self.fail(node, f"'in' on {hay.kind}")

    def expr_Test(self, node: nodes.Test, frame: Frame) -> Value:
        value = self.expr(node.node, frame)
        result = self.is_test(node.name, value, node, [self.expr(a, frame) for a in node.args])
        return const(result == "true") if result in {"true", "false"} else Value(result, BOOL)

    def is_test(self, name: str, value: Value, node: nodes.Node, args: list[Value] | None = None) -> str:
        kind = value.kind
        if kind == LITERAL_OR and name in {"none", "defined", "undefined"}:
            flag, literal = value.extra["flag"], self.is_test(name, value.extra["literal"], node, args)
            return (
                f"(or (and {flag} {literal}) (and (not {flag}) {self.is_test(name, value.extra['other'], node, args)}))"
            )
        if name in {"defined", "undefined"}:
            if kind == UNDEF and not value.extra.get("maybe_undefined"):
                defined = "false"
            elif value.extra.get("maybe_undefined"):
                flag = value.extra.get("defined_flag")
                if not flag:
                    raise self.fail(node, "`is defined` on a variable set only on some paths")
                defined = flag
            elif value.extra.get("optional"):
                defined = f"(not (not {value.code}))"
            else:
                defined = "true"
            return defined if name == "defined" else self.negate(defined)
        if name == "none":
            if value.is_const:
                return "true" if value.const is None else "false"
            if kind == NONE:
                return "true"
            if kind == TOOLS:
                if value.extra.get("emptied"):
                    raise self.fail(
                        node, "`is none` on a list set to [] on some paths", "(Go cannot tell [] from None there)"
                    )
                return f"(not {value.code})"
            if value.extra.get("maybe_none"):
                return f'(eq (printf "%v" {value.code}) "")'
            if kind == ANY:
                return f'(eq (printf "%T" {value.code}) "<nil>")'  # JSON null
            return "false"
        if name == "string":
            if value.is_const:
                return "true" if isinstance(value.const, str) else "false"
            if kind in {STR, CONTENT}:
                return "true"
            if kind == ANY:
                return f'(eq (printf "%T" {value.code}) "string")'
            return "false"
        if name in {"mapping"}:
            if kind in MAPPINGS and value.extra.get("maybe_none"):
                return f'(ne (printf "%v" {value.code}) "")'  # None is held as ""
            if kind in MAPPINGS and value.extra.get("maybe_undefined"):
                if not value.extra.get("defined_flag"):
                    raise self.fail(node, "`is mapping` of a value left undefined on some paths")
                return self.is_test("defined", value, node)
            if kind in MAPPINGS:
                return "true"
            if kind == ANY:
                return f'(eq (printf "%.3T" {value.code}) "map")'
            return "false"
        if name in {"iterable", "sequence"}:
            if kind in {STR, CONTENT, STRLIST} or kind in SEQUENCES or value.extra.get("items"):
                return "true"
            if kind == UNDEF and not value.extra.get("maybe_undefined"):
                return "true"  # Jinja's Undefined has a length (0) and iterates as empty
            if kind in MAPPINGS:
                return "true" if name == "iterable" else "false"
            if kind == ANY:
                # Jinja's sequence test holds for anything with a length and items: a dict too
                return f'(or (eq (printf "%T" {value.code}) "string") (eq (printf "%.2T" {value.code}) "[]") (eq (printf "%.3T" {value.code}) "map"))'
            return "false"
        if name in {"number", "integer"}:
            if kind == ANY:
                # a decoded JSON number is a float64 either way (an untyped 1.0 tests as an integer)
                if name == "integer":
                    self.warn(
                        node, "`is integer` of an untyped value", "a whole float such as 1.0 also counts as an integer"
                    )
                    whole = f'(eq (printf "%v" {value.code}) (printf "%.0f" {value.code}))'
                    return f'(and (eq (printf "%T" {value.code}) "float64") {whole})'
                return f'(eq (printf "%T" {value.code}) "float64" "bool")'  # Python's bool is a Number
            return "true" if kind == INT else "false"
        if name == "boolean":
            if kind == ANY:
                return f'(eq (printf "%T" {value.code}) "bool")'
            return "true" if kind == BOOL else "false"
        if name in {"true", "false"}:
            if value.is_const:
                return "true" if value.const is (name == "true") else "false"
            if kind == BOOL:
                return value.code if name == "true" else f"(not {value.code})"
            if kind == ANY:
                return f'(eq (printf "%T:%v" {value.code} {value.code}) "bool:{name}")'
            return "false"
        if name in {"equalto", "eq", "sameas"} and args:
            return self.compare_eq(value, args[0], node)
        raise self.fail(node, f"test `is {name}`")

    @staticmethod
    def negate(code: str) -> str:
        return {"true": "false", "false": "true"}.get(code, f"(not {code})")

    def expr_Concat(self, node: nodes.Concat, frame: Frame) -> Value:
        values = [self.expr(n, frame) for n in node.nodes]
        # `~` takes str() of each operand: an untyped value (an enum entry, an argument) too
        values = [self.untyped_str(v, node) if v.kind == ANY and not v.is_const else v for v in values]
        return self.concat(values, node)

    def concat(self, values: list[Value], node: nodes.Node) -> Value:
        if all(v.is_const for v in values):
            return const("".join(py_str(v.const) for v in values))
        pieces = []
        for v in values:
            if v.kind in {UNDEF}:
                continue
            if v.is_const:
                pieces.append(go_string(py_str(v.const)))
            elif v.kind in {STR, CONTENT, INT}:
                pieces.append(v.code)
            else:
                raise self.fail(node, f"string concatenation with {v.kind}")
        fmt = "%v" * len(pieces)
        # text holding a message's text may hold the prefilled final one (cut inside it, see print_final_text)
        distinct = list({v.extra["final"]: v for v in values if v.extra.get("final")}.values())
        return Value(f'(printf "{fmt}" {" ".join(pieces)})', STR, extra=self.any_final(distinct))

    def expr_Add(self, node: nodes.Add, frame: Frame) -> Value:
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if left.extra.get("markup") or right.extra.get("markup"):
            return self.markup_add(left, right, node)
        if left.is_const and right.is_const:
            return const(left.const + right.const)
        if STRLIST in {left.kind, right.kind}:
            return Value(
                strlists.concat(self.strlist_code(left, node), self.strlist_code(right, node)),
                STRLIST,
                extra=self.any_final([left, right]),
            )
        if left.kind == INT and right.kind == INT:
            if right.extra.get("maybe_negative") and left.is_const:
                left, right = right, left
            if left.extra.get("maybe_negative") and right.is_const and right.const >= 0:
                # a negative left (a `namespace(x=-1)` marker) plus n: n - |x| (a printf width of -k pads to k)
                below = f'(printf ".%s" (slice (printf "%*s" {right.code} "") (len (printf "%*s" {left.code} ""))))'
                above = f'(printf ".%*s%*s" {left.code} "" {right.code} "")'
                return Value(f"(len (slice (or (and (lt {left.code} 0) {below}) {above}) 1))", INT)
            if left.extra.get("maybe_negative") or right.extra.get("maybe_negative"):
                raise self.fail(node, "'+' of a possibly negative number and a non-constant")
            return Value(f'(len (printf "%*s%*s" {left.code} "" {right.code} ""))', INT)
        if {left.kind, right.kind} <= {STR, CONTENT} or (
            (left.kind in {STR, CONTENT} or right.kind in {STR, CONTENT}) and (left.is_const or right.is_const)
        ):
            return self.concat([left, right], node)
        if ARGS in {left.kind, right.kind} and ({left.kind, right.kind} - {ARGS}) <= {STR, CONTENT}:
            # Python refuses `str + dict`: the arguments are the JSON string the template was written for
            left, right = (self.arguments_json(v, node) if v.kind == ARGS else v for v in (left, right))
            return self.concat([left, right], node)
        if ANY in {left.kind, right.kind} and ({left.kind, right.kind} - {ANY}) <= {STR, CONTENT}:
            # Python's `str + x` works only for a string x, which prints bare, as str() of it does
            self.warn(
                node,
                "'+' of text and an untyped value",
                "Jinja fails where the value is not a string; here it is written as str() of it",
            )
            return self.concat([self.untyped_str(v, node) if v.kind == ANY else v for v in (left, right)], node)
        raise self.fail(node, f"'+' of {left.kind} and {right.kind}")

    def arguments_json(self, arguments: Value, node: nodes.Node) -> Value:
        """Tool call arguments as the JSON string a client sends them as (json.dumps layout)."""
        return Value(
            self.capture(lambda: self.json_action(arguments, None, node), "|tojson", node),
            STR,
            extra={"json_text": True},
        )

    def markup_add(self, left: Value, right: Value, node: nodes.Node) -> Value:
        """`'x'|safe + y`: a Markup string escapes the plain operand it is added to (either side).

        markupsafe escapes & < > ' " exactly as Go's `html` does (Go also turns NUL into U+FFFD).
        """
        sides = [side if side.extra.get("markup") else self.html_escaped(side, node) for side in (left, right)]
        if all(side.is_const for side in sides):
            joined = const(sides[0].const + sides[1].const)
        else:
            joined = self.concat(sides, node)
        joined.extra["markup"] = True
        return joined

    def html_escaped(self, value: Value, node: nodes.Node) -> Value:
        if value.is_const and isinstance(value.const, str):
            return const(str(markupsafe.escape(value.const)))
        if value.kind in {STR, CONTENT} and not value.is_const:
            if value.extra.get("final"):
                raise self.fail(
                    node,
                    "a message's text HTML-escaped by a |safe concatenation",
                    "(an assistant prefill could not be cut inside it)",
                )
            return Value(f"(html {value.code})", STR)
        raise self.fail(
            node,
            f"'+' of a |safe string and {value.kind if not value.is_const else type(value.const).__name__}",
            "(Python escapes it as HTML; Go cannot here)",
        )

    def expr_Sub(self, node: nodes.Sub, frame: Frame) -> Value:
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if left.is_const and right.is_const:
            return const(left.const - right.const)
        if left.kind == INT and right.kind == INT:
            return Value(f'(len (slice (printf "%*s" {left.code} "") {right.code}))', INT)
        raise self.fail(node, f"'-' of {left.kind} and {right.kind}")

    def expr_Mul(self, node: nodes.Mul, frame: Frame) -> Value:
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if left.is_const and right.is_const:
            return const(left.const * right.const)
        if right.is_const and isinstance(right.const, str):
            left, right = right, left
        if left.is_const and isinstance(left.const, str) and right.kind == INT:
            # a string repeated n times (none when n <= 0, as Go's range over an int)
            repeated = self.temp()
            self.action(f'{repeated} := ""')
            self.action(f"range {right.code}")
            self.action(f'{repeated} = printf "%s%s" {repeated} {left.code}')
            self.action("end")
            return Value(repeated, STR)
        raise self.fail(node, f"'*' of {left.kind} and {right.kind}")

    def expr_Mod(self, node: nodes.Mod, frame: Frame) -> Value:
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if left.is_const and right.is_const:
            return const(left.const % right.const)
        if left.kind == INT and right.is_const and right.const == 2:
            # parity: the last digit of a non-negative number
            return Value(
                f'(or (and (eq (printf "%.1s" (slice (printf "%d" {left.code}) (len (slice (printf "%d" {left.code}) 1)))) "1" "3" "5" "7" "9") 1) 0)',
                INT,
            )
        raise self.fail(node, "'%' operator")

    def expr_Call(self, node: nodes.Call, frame: Frame) -> Value:
        callee = node.node
        if isinstance(callee, nodes.Name):
            name = callee.name
            if name == "namespace":
                attrs = {kw.key: self.expr(kw.value, frame) for kw in node.kwargs}
                return Value("", NS, extra={"attrs": attrs})
            if name == "raise_exception":
                self.warn(node, "raise_exception()", "dropped: Ollama renders instead of refusing this conversation")
                return UNDEFINED
            if name == "strftime_now":
                return self.strftime(node, frame)
            if (
                name == "dict"
                and not node.args
                and not node.dyn_args
                and not node.dyn_kwargs
                and frame.lookup(name) is None
            ):
                # keyword arguments only: a dict literal with constant keys
                pairs = [nodes.Pair(nodes.Const(kw.key), kw.value, lineno=node.lineno) for kw in node.kwargs]
                return self.expr_Dict(nodes.Dict(pairs, lineno=node.lineno), frame)
            if name == "range":
                args = [self.expr(a, frame) for a in node.args]
                if len(args) == 1 and args[0].kind == INT:
                    return Value(args[0].code, INT)
                raise self.fail(node, "range() with more than one argument")
            if name in self.macros and frame.lookup(name) is None:
                captured = self.capture(lambda: self.inline_macro(node, frame), f"macro {name}() used as a value", node)
                return self.captured(captured)
            if name == "caller" and frame.lookup(name) is None:
                return self.captured(self.capture(lambda: self.run_caller(node), "caller() used as a value", node))
            raise self.fail(node, f"function {name}()")
        if isinstance(callee, nodes.Getattr):
            base = self.expr(callee.node, frame)
            method = callee.attr
            args = [self.expr(a, frame) for a in node.args]
            if (
                method == "format"
                and base.is_const
                and isinstance(base.const, str)
                and not node.dyn_args
                and not node.dyn_kwargs
            ):
                return self.str_format(
                    base.const, args, {kw.key: self.expr(kw.value, frame) for kw in node.kwargs}, node
                )
            stringish = base.kind in {STR, CONTENT} or (base.is_const and isinstance(base.const, str))
            if (node.kwargs or node.dyn_args or node.dyn_kwargs) and (
                stringish or (base.kind == ANY and hasattr(str, method))
            ):
                raise self.fail(node, f".{method}() with keyword or unpacked arguments")
            if stringish:
                return self.string_method(method, base, args, node)
            if base.kind == ANY and hasattr(str, method) and not hasattr(dict, method) and not hasattr(list, method):
                # a method only strings have: Jinja fails on any other value
                self.warn(
                    node,
                    f".{method}() of an untyped value",
                    "Jinja fails where it is not a string; here it applies to str() of the value",
                )
                return self.string_method(method, self.untyped_str(base, node), args, node)
            if base.kind == UNDEF and not base.extra.get("maybe_undefined"):
                self.warn(
                    node,
                    f"calling .{method}() of an undefined value",
                    "Jinja fails there; rendered as an empty value instead",
                )
                return UNDEFINED
            if base.kind == NONE and not hasattr(None, method):
                # a variable only ever None (or unset): no path reaches here without Jinja failing
                self.warn(node, f"calling .{method}() of None", "Jinja fails there; rendered as an empty value instead")
                return UNDEFINED
            if method == "items" and (base.kind in {PROPS, ARGS} or base.kind in schema.KEY_ORDER) and not args:
                return Value(base.code, base.kind, extra={**base.extra, "items": True})
            if method == "items" and base.kind == ANY and not args:
                self.warn(
                    node, ".items() of an untyped mapping", "keys come out sorted (Ollama decodes it into a Go map)"
                )
                return Value(base.code, ANY, extra={**base.extra, "items": True})
            if method == "keys" and base.kind in schema.KEY_ORDER and not args:
                return base  # a dict iterates as its keys
            if base.kind == STRLIST and method == "append" and len(args) == 1:
                strlists.append(self, base.code, self.strlist_item(args[0], node))
                return const(None)
            if (
                base.kind == STRLIST
                and method == "pop"
                and all(a.is_const for a in args)
                and [a.const for a in args] in ([], [0], [-1])
            ):
                which = args[0].const if args else -1
                return Value(strlists.element(self, base.code, which, var=base.code), STR)
            if (
                method == "get"
                and base.kind == ANY
                and 1 <= len(args) <= 2
                and args[0].is_const
                and isinstance(args[0].const, str)
            ):
                default = args[1] if len(args) > 1 else None
                if default is not None and default.is_const and default.const in ([], {}):
                    # Go has no literal for an empty container: a missing key gives Undefined
                    self.warn(
                        node,
                        f".get(key, {default.const!r}) of an untyped value",
                        "a missing key gives Undefined: it loops, counts and tests like the empty default, but prints as '' and is not defined",
                    )
                    return self.attr(base, args[0].const, node)
                return self.untyped_get(base, args[0].const, default, node)
            if method == "get" and args and args[0].is_const:
                value = self.attr(base, args[0].const, node)
                if value.kind == UNDEF and not value.extra.get("maybe_undefined"):
                    return args[1] if len(args) > 1 else const(None)  # dict.get of a missing key
                return value
            if method == "keys" and base.kind in {ARGS, PROPS}:
                raise self.fail(node, ".keys()")
        raise self.fail(node, "this function call")

    def strftime(self, node: nodes.Call, frame: Frame) -> Value:
        fmt = self.const_of(node.args[0], frame)
        pieces: list[str] = []
        i = 0
        date = self.temp()
        self.action(f"{date} := currentDate")
        while i < len(fmt):
            spec = fmt[i : i + 2]
            if spec in STRFTIME:
                lo, hi = STRFTIME[spec]
                pieces.append(f"(slice {date} {lo} {hi})")
                i += 2
            elif spec in {"%b", "%B"}:
                month = self.temp()
                self.action(f'{month} := ""')
                for number, name in enumerate(MONTHS, 1):
                    text = name if spec == "%B" else name[:3]
                    self.action(f'if eq (slice {date} 5 7) "{number:02d}"')
                    self.action(f'{month} = "{text}"')
                    self.action("end")
                pieces.append(month)
                i += 2
            elif fmt[i] == "%":
                raise self.fail(node, f"strftime_now({fmt!r})", f"(format {spec} is not supported)")
            else:
                pieces.append(go_string(fmt[i]))
                i += 1
        return Value(f'(printf "{"%s" * len(pieces)}" {" ".join(pieces)})', STR)

    def string_method(self, method: str, base: Value, args: list[Value], node: nodes.Node) -> Value:
        if (
            base.is_const
            and all(a.is_const for a in args)
            and method in {"startswith", "endswith", "strip", "lower", "upper"}
        ):
            return const(getattr(base.const, method)(*[a.const for a in args]))
        if method in {"strip", "lstrip", "rstrip"}:
            chars = args[0].const if args else None
            return self.trim(base.code, method, chars, final_of(base))
        if method == "title" and not args:
            if base.is_const:
                return const(base.const.title())
            self.warn(
                node, ".title()", "changes the case of ASCII letters only (any other character counts as a letter)"
            )
            text = self.temp()
            self.action(f"{text} := {base.code}")
            return Value(textops.ascii_title(self, text, textops.PYTHON_TITLE_BREAKS), STR)
        if (
            method in {"startswith", "endswith"}
            and len(args) == 1
            and args[0].kind in {STR, CONTENT}
            and not args[0].is_const
        ):
            return self.affix_test(method, base, args[0])
        if method in {"startswith", "endswith"}:
            if not args or not args[0].is_const:
                raise self.fail(node, f".{method}() with a non-constant argument")
            options = args[0].const if isinstance(args[0].const, list) else [args[0].const]
            tests = []
            for prefix in options:
                if method == "startswith":
                    tests.append(f'(eq (printf "%.*s" {len(prefix)} {base.code}) {go_string(prefix)})')
                else:
                    n = len(prefix.encode())
                    tests.append(
                        f"(and (ge (len {base.code}) {n}) (eq (slice {base.code} (len (slice {base.code} {n}))) {go_string(prefix)}))"
                    )
            return Value(tests[0] if len(tests) == 1 else "(or " + " ".join(tests) + ")", BOOL)
        if method == "split":
            if not args or not args[0].is_const or not isinstance(args[0].const, str) or not args[0].const:
                raise self.fail(node, ".split() without a constant separator")
            limit = args[1].const if len(args) > 1 and args[1].is_const and isinstance(args[1].const, int) else None
            if len(args) > 2 or (len(args) == 2 and limit is None):
                raise self.fail(node, ".split() with a non-constant maxsplit")
            extra = {"sep": args[0].const, "node": node, **final_of(base)}
            if limit is not None and limit >= 0:
                extra["limit"] = limit
            return Value(base.code, "split", extra=extra)
        if (
            method == "replace"
            and len(args) == 2
            and args[0].is_const
            and isinstance(args[0].const, str)
            and args[0].const
        ):
            new = args[1]
            if not (new.is_const and isinstance(new.const, str)) and new.kind not in {STR, CONTENT}:
                raise self.fail(node, f".replace() with a {new.kind} replacement")
            code = textops.replace(self, base.code, args[0].const, new.code)
            return Value(code, STR, extra=self.any_final([base, new]))
        raise self.fail(node, f"string method .{method}()")

    def affix_test(self, method: str, base: Value, affix: Value) -> Value:
        """`s.startswith(t)` / `s.endswith(t)` for a run-time string `t`, compared as bytes: in
        valid UTF-8 a byte prefix or suffix that is itself whole text is a character one too."""
        text, part = self.temp(), self.temp()
        self.action(f"{text} := {base.code}")
        self.action(f"{part} := {affix.code}")
        start = "0" if method == "startswith" else f"(len (slice {text} (len {part})))"
        end = f"(len {part})" if method == "startswith" else f"(len {text})"
        return Value(f"(and (ge (len {text}) (len {part})) (eq (slice {text} {start} {end}) {part}))", BOOL)

    def trim(self, text_code: str, method: str, chars: str | None, extra: dict[str, Any] | None = None) -> Value:
        return Value(textops.strip(self, text_code, method, chars), STR, extra=dict(extra or {}))

    def stringified(self, value: Value, node: nodes.Node) -> Value:
        """`str(x)`, as `|string` and `%s` give it."""
        if value.kind in {STR, CONTENT}:
            return value
        if value.is_const:
            return const(py_str(value.const))
        if value.kind == NONE and not value.extra.get("maybe_undefined"):
            return const("None")
        if value.kind == INT:
            return Value(f'(printf "%d" {value.code})', STR)
        if value.kind == ANY:
            return self.untyped_str(value, node)
        if value.kind in PYTHON_REPR or value.kind == LIST:
            return Value(self.capture(lambda: self.repr_action(value, node), "|string", node), STR)
        raise self.fail(node, f"|string of {value.kind}")

    def percent_format(self, pattern: str, args: list[Value], node: nodes.Node) -> Value:
        """`pattern | format(a, b)`: Python's `pattern % (a, b)` where the pattern (known here)
        holds only `%s` and `%%`, so each `%s` is `str()` of its argument in turn."""
        pieces: list[Value] = []
        rest, used = pattern, 0
        while rest:
            at = rest.find("%")
            if at < 0:
                pieces.append(const(rest))
                break
            pieces.append(const(rest[:at]))
            spec = rest[at + 1 : at + 2]
            if spec == "%":
                pieces.append(const("%"))
            elif spec == "s" and used < len(args):
                pieces.append(self.stringified(args[used], node))
                used += 1
            else:
                raise self.fail(node, f"|format with %{spec}")
            rest = rest[at + 2 :]
        if used != len(args):
            raise self.fail(node, "|format with more arguments than %s")
        return self.concat(pieces, node)

    def str_format(self, pattern: str, args: list[Value], kwargs: dict[str, Value], node: nodes.Node) -> Value:
        """`'...{}...'.format(a, name=b)` with the pattern known here: each plain replacement field
        (`{}`, `{0}`, `{name}`) is `format(x, '')`, which is `str(x)` for every value a template holds."""
        import string

        pieces: list[Value] = []
        auto = 0
        try:
            fields = list(string.Formatter().parse(pattern))
        except ValueError as error:
            raise self.fail(node, f".format() of a malformed pattern ({error})") from None
        for literal, field, spec, conversion in fields:
            pieces.append(const(literal))
            if field is None:
                continue
            if spec or conversion:
                raise self.fail(node, ".format() with a format spec or conversion")
            if field == "" and auto >= 0:
                key: int | str = auto
                auto += 1
            elif field.isdigit() and auto <= 0:
                key = int(field)
                auto = -1  # Python refuses automatic and manual numbering together
            elif field.isidentifier():
                key = field
            else:
                raise self.fail(node, f".format() field {{{field}}}")
            found = (
                args[key]
                if isinstance(key, int) and key < len(args)
                else kwargs.get(key)
                if isinstance(key, str)
                else None
            )
            if found is None or found.kind == UNDEF:
                raise self.fail(node, f".format() field {{{field}}} without its argument")
            pieces.append(self.stringified(found, node))
        return self.concat(pieces, node)

    def untyped_str(self, value: Value, node: nodes.Node) -> Value:
        """`str(x)` of a value of unknown type (an argument value): a string bare, anything else
        its Python repr (written inline, so it can be stored)."""
        v = self.temp()
        self.action(f"{v} := {value.code}")
        text = self.capture(lambda: self.untyped_repr(v, node), "|string", node)
        return Value(text, STR)

    def untyped_contains(self, needle: Value, hay: Value, node: nodes.Node) -> Value:
        """`text in x` of an untyped value: an element of a list, a key of a mapping, a
        substring of a string when the text is constant (else not searched, warned)."""
        if needle.kind == ANY:
            raise self.fail(node, "'in' of an untyped value on an untyped value")
        constant = needle.is_const and isinstance(needle.const, str)
        if not constant:
            self.warn(
                node, "'in' on an untyped value", "tests list elements and mapping keys; a string is never searched"
            )
        obj, hit, k, v = self.temp(), self.temp(), self.temp(), self.temp()
        text = needle.code
        self.action(f"{obj} := {hay.code}")
        self.action(f"{hit} := false")
        self.action(f'if eq (printf "%.3T" {obj}) "map"')
        self.key_scan(k, v, obj, text, f"{hit} = true")
        self.action(f'else if eq (printf "%.2T" {obj}) "[]"')
        self.action(f"range {k}, {v} := {obj}")
        self.action(f'if and (eq (printf "%T" {v}) "string") (eq (printf "%v" {v}) {text})')
        self.action(f"{hit} = true")
        self.action("end")
        self.action("end")
        if constant:
            self.action(f'else if eq (printf "%T" {obj}) "string"')
            self.action(f"{hit} = {textops.contains(self, obj, needle.const)}")
        self.action("end")
        return Value(hit, BOOL)

    def untyped_map(self, value: Value, filter_name: str, node: nodes.Node) -> Value:
        """`x | map('upper')` of an untyped list: a run-time list of strings (see strlists.py)."""
        seq, out, item = self.temp(), self.temp(), self.temp()
        self.action(f"{seq} := {value.code}")
        self.action(f'{out} := ""')
        self.action(f'if eq (printf "%.2T" {seq}) "[]"')
        self.action(f"range {item} := {seq}")
        text = self.untyped_str(Value(item, ANY), node)
        if filter_name != "string":
            text = self.change_case(text, filter_name, node)
        strlists.append(self, out, text.code)
        self.action("end")
        self.action("end")
        return Value(out, STRLIST)

    def untyped_join(self, code: str, sep: str, node: nodes.Node) -> None:
        seq, i, item, ignored = self.temp(), self.temp(), self.temp(), self.temp()
        self.action(f"{seq} := {code}")
        self.action(f'if eq (printf "%.2T" {seq}) "[]"')
        self.action(f"range {i}, {item} := {seq}")
        self.action(f"if {i}")
        self.text(sep)
        self.action("end")
        self.untyped_repr(item, node)
        self.action("end")
        self.action(f'else if eq (printf "%.3T" {seq}) "map"')
        # a mapping joins its keys (sorted, as Go ranges a map)
        self.action(f"{i} := true")
        self.action(f"range {item}, {ignored} := {seq}")
        self.action(f"if not {i}")
        self.text(sep)
        self.action("end")
        self.action(f"{i} = false")
        self.put(item)
        self.action("end")
        self.action("else")
        self.untyped_repr(seq, node)
        self.action("end")

    def untyped_repr(self, code: str, node: nodes.Node) -> None:
        self.action(f'if eq (printf "%T" {code}) "string"')
        self.put(code)
        self.action("else")
        JsonWriter(self, None, node, python=True).untyped(code, 0)
        self.action("end")

    def change_case(self, value: Value, method: str, node: nodes.Node) -> Value:
        """`|lower` / `|upper` of ASCII letters (Ollama lower-cases roles itself)."""
        is_role = value.code.endswith(".Role")
        if is_role and method == "lower" and self.tool_role == "tool":
            return value
        if not is_role:
            self.warn(node, f"|{method}", "changes the case of ASCII letters only")
        text = self.temp()
        self.action(f"{text} := {value.code}")
        if is_role and self.tool_role != "tool":
            self.action(f'if eq {text} "tool"')
            self.action(f"{text} = {go_string(self.tool_role)}")
            self.action("end")
        return Value(textops.ascii_case(self, text, method), STR)

    def split_list(self, value: Value) -> Value:
        """`s.split(sep[, n])` as a run-time list of strings: each separator becomes a marker."""
        parts = textops.replace(self, value.code, value.extra["sep"], strlists.MARK, value.extra.get("limit"))
        return Value(f'(printf "\\xff%s" {parts})', STRLIST, extra=final_of(value))

    def split_part(self, value: Value, which: int, node: nodes.Node) -> Value:
        return Value(textops.split_part(self, value.code, value.extra["sep"], which), STR, extra=final_of(value))

    def expr_Filter(self, node: nodes.Filter, frame: Frame) -> Value:
        name = node.name
        if node.node is None:
            raise self.fail(node, f"|{name} block")
        if (
            name in {"min", "max"}
            and isinstance(node.node, (nodes.List, nodes.Tuple))
            and not node.args
            and not node.kwargs
        ):
            return self.extreme_of_numbers(node.node, name, frame)
        value = self.expr(node.node, frame)
        if value.kind == "split" and name not in {"first", "last"}:
            value = self.split_list(value)
        args = [self.expr(a, frame) for a in node.args]
        if (
            name in {"dictsort", "items"}
            and value.is_const
            and isinstance(value.const, dict)
            and all(a.is_const for a in args)
        ):
            # a dict literal of constants: its pairs are known, sorted by jinja2's own filter
            options = {kw.key: self.const_of(kw.value, frame) for kw in node.kwargs}
            pairs = (
                jinja2.filters.do_dictsort(value.const, *(a.const for a in args), **options)
                if name == "dictsort"
                else list(value.const.items())
            )
            return const([list(pair) for pair in pairs])
        if (
            name == "replace"
            and len(args) == 2
            and not node.kwargs
            and value.kind in {STR, CONTENT}
            and not value.is_const
        ):
            return self.string_method("replace", value, args, node)  # the filter is str.replace
        if name == "trim":
            if value.is_const:
                return const(value.const.strip(*(a.const for a in args)))
            if value.kind in {UNDEF, NONE}:
                return const("")
            return self.trim(value.code, "strip", args[0].const if args else None, final_of(value))
        if name in {"length", "count"}:
            if value.is_const:
                return const(len(value.const))
            if value.kind == UNDEF and not value.extra.get("maybe_undefined"):
                return const(0)  # Jinja's Undefined has length 0
            if value.kind == ANY:
                self.warn(
                    node, "|length of an untyped value", "counts bytes, not characters, where it is non-ASCII text"
                )
                obj, size = self.temp(), self.temp()
                self.action(f"{obj} := {value.code}")
                self.action(f"{size} := 0")
                self.action(
                    f'if or (eq (printf "%.3T" {obj}) "map") (eq (printf "%.2T" {obj}) "[]") (eq (printf "%T" {obj}) "string")'
                )
                self.action(f"{size} = len {obj}")
                self.action("end")
                return Value(size, INT)
            if value.kind in {STR, CONTENT}:
                text = self.temp()
                self.action(f"{text} := {value.code}")
                return Value(textops.char_count(text), INT)
            if value.kind in SEQUENCES or value.kind in {ARGS, PROPS}:
                return Value(f"(len {self.plain_map(value)})", INT)
            if value.kind in {"select", "mapped"}:
                return self.count_selected(value)
            if value.kind == STRLIST:
                return Value(strlists.count(self, value.code), INT)
            if value.kind == "reversed":
                return Value(f"(len {value.code})", INT)
            raise self.fail(node, f"|length of {value.kind}")
        if name in {"selectattr", "rejectattr"}:
            if value.kind in {CONTENT, PARTS}:
                return Value(value.code, PARTS)
            if value.kind in {MSGS, CALLS, TOOLS}:
                return Value(value.code, "select", extra={"base": value, "filters": [(node, frame, None)]})
            if value.kind == "select":
                return Value(
                    value.code,
                    "select",
                    extra={"base": value.extra["base"], "filters": [*value.extra["filters"], (node, frame, None)]},
                )
            raise self.fail(node, f"|{name} on {value.kind}")
        if name == "list":
            if value.kind == "mapped":
                return Value(value.code, value.kind, extra={**value.extra, "lazy": False})
            return value
        if name in {"first", "last"}:
            if value.kind in SEQUENCES and not value.is_const:
                element = ELEMENT.get(value.kind, ANY)
                if name == "first":
                    return Value(f"(index {value.code} 0)", element)
                return Value(f"(index {value.code} (len (slice {value.code} 1)))", element)
            if value.kind == "split" and not (name == "last" and "limit" in value.extra):
                return self.split_part(value, 0 if name == "first" else -1, node)
            if value.kind == "split":
                value = self.split_list(value)
            if value.kind == STRLIST:
                return Value(
                    strlists.element(self, value.code, 0 if name == "first" else -1), STR, extra=final_of(value)
                )
            raise self.fail(node, f"|{name} of {value.kind}")
        if name == "default":
            fallback = args[0] if args else const("")
            if value.kind == UNDEF:
                return fallback
            if len(args) > 1 and args[1].is_const and args[1].const:
                result = self.temp()
                self.action(f"{result} := {self.operand(fallback, node)}")
                self.action(f"if {self.truth_of(value)}")
                self.action(f"{result} = {value.code}")
                self.action("end")
                # an empty fallback leaves a message's text (and where a prefill ends) as it was
                keep = final_of(value) if fallback.is_const and fallback.const == "" else {}
                return Value(result, value.kind, extra=keep)
            return value
        if name == "string":
            return self.stringified(value, node)
        if name == "format" and value.is_const and isinstance(value.const, str) and not node.kwargs:
            return self.percent_format(value.const, args, node)
        if name == "safe":
            return Value(value.code, value.kind, value.const, {**value.extra, "markup": True})
        if name == "tojson":
            value, indent = self.tojson_options(node, frame)
            separators, ascii_only = self.tojson_layout(node, frame)
            if value.is_const:
                import json

                return const(json.dumps(value.const, ensure_ascii=ascii_only, indent=indent, separators=separators))
            if ascii_only:
                return Value(self.ascii_json_text(value, indent, separators, node), STR, extra={"json_text": True})
            return Value(
                self.capture(lambda: self.json_action(value, indent, node, separators), "|tojson", node),
                STR,
                extra={"json_text": True},
            )
        if name == "join" and value.is_const:
            return const((args[0].const if args else "").join(value.const))
        if (
            name == "join"
            and value.kind in {ANY, LIST}
            and not value.is_const
            and all(a.is_const and isinstance(a.const, str) for a in args)
        ):
            if value.kind == ANY:
                self.warn(
                    node,
                    "|join of an untyped value",
                    "joins the elements of a list; any other value is written as str() of it",
                )
            sep = args[0].const if args else ""
            return Value(self.capture(lambda: self.untyped_join(value.code, sep, node), "|join", node), STR)
        if name == "join" and value.kind == STRLIST:
            sep = args[0] if args else const("")
            return Value(strlists.join(self, value.code, self.strlist_item(sep, node)), STR)
        if name == "int" and value.is_const and all(a.is_const for a in args):
            options = {kw.key: self.const_of(kw.value, frame) for kw in node.kwargs}
            return const(CONSTANT_FOLDER.call_filter(name, value.const, [a.const for a in args], options))
        if name == "int" and value.kind == INT and not value.extra.get("maybe_undefined"):
            return value  # already an int: |int leaves it as it is
        if name == "int" and value.kind in {STR, CONTENT} and not args and not node.kwargs:
            return self.parsed_int(value, node)
        if (
            name in CONSTANT_FILTERS
            and value.is_const
            and isinstance(value.const, str)
            and all(a.is_const for a in args)
        ):
            options = {kw.key: self.const_of(kw.value, frame) for kw in node.kwargs}
            return const(CONSTANT_FOLDER.call_filter(name, value.const, [a.const for a in args], options))
        if name == "indent" and value.extra.get("json_text") and all(a.is_const for a in args):
            return self.indent_json(
                value, [a.const for a in args], {kw.key: self.const_of(kw.value, frame) for kw in node.kwargs}, node
            )
        if (
            name in {"select", "reject"}
            and value.kind in schema.KEY_ORDER
            and not value.extra.get("items")
            and args
            and all(a.is_const for a in args)
        ):
            # keys are constants once the loop is unrolled: the test runs here, as Jinja's own
            tests = [*value.extra.get("key_tests", ()), (name, args[0].const, [a.const for a in args[1:]])]
            return Value(value.code, value.kind, extra={**value.extra, "key_tests": tests})
        if name == "items" and value.kind == UNDEF and not value.extra.get("maybe_undefined"):
            return const([])  # Jinja's |items of Undefined is empty
        if name == "items" and value.is_const and isinstance(value.const, dict):
            return const([list(pair) for pair in value.const.items()])
        if name == "items" and value.kind == RECORD:
            return Value("", RECORD, extra={**value.extra, "items": True})  # only its (absent) attributes are usable
        if name == "items" and (value.kind in {PROPS, ARGS} or value.kind in schema.KEY_ORDER):
            return Value(value.code, value.kind, extra={**value.extra, "items": True})
        if name in {"dictsort", "items"} and value.kind == ANY and not args:
            # a run-time map (an argument value, a schema's items) ranges in Go's sorted key order
            if name == "dictsort":
                self.warn(
                    node, "|dictsort of an untyped mapping", "keys are sorted by byte value (dictsort ignores case)"
                )
            else:
                self.warn(
                    node, "|items of an untyped mapping", "keys come out sorted (Ollama decodes it into a Go map)"
                )
            return Value(value.code, ANY, extra={**value.extra, "items": True})
        if name == "dictsort" and (value.kind in {PROPS, ARGS} or value.kind in schema.KEY_ORDER):
            # an ordered map (nested properties) is sorted as the Go map it converts to
            return Value(self.plain_map(value), value.kind, extra={"items": True, "sorted": True})
        if name in {"lower", "upper"} and value.is_const:
            return const(getattr(value.const, name)())
        if (
            name == "map"
            and value.kind == ANY
            and len(args) == 1
            and args[0].const in {"upper", "lower", "string"}
            and not node.kwargs
        ):
            return self.untyped_map(value, args[0].const, node)
        if (
            name == "map"
            and value.kind in {MSGS, CALLS, TOOLS, "select", "mapped"}
            and not args
            and [kw.key for kw in node.kwargs] == ["attribute"]
        ):
            return self.mapped_attribute(value, self.const_of(node.kwargs[0].value, frame), node)
        if name in {"lower", "upper"} and value.kind == UNDEF and not value.extra.get("maybe_undefined"):
            return const("")  # str() of Undefined is empty
        if name in {"lower", "upper"} and value.kind == ANY:
            return self.change_case(self.untyped_str(value, node), name, node)  # Jinja's filter takes str() first
        if name in {"lower", "upper"} and value.kind in {STR, CONTENT}:
            return self.change_case(value, name, node)
        if name == "title" and value.kind in {STR, CONTENT} and not args and not node.kwargs:
            self.warn(
                node, "|title", "changes the case of ASCII letters only, and starts words after ASCII whitespace only"
            )
            text = self.temp()
            self.action(f"{text} := {value.code}")
            return Value(textops.ascii_title(self, text), STR)
        raise self.fail(node, f"filter |{name} on {value.kind}")

    def parsed_int(self, text: Value, node: nodes.Node) -> Value:
        """`text | int`: the number a string of decimal digits (whitespace around it) spells,
        else 0, as Jinja gives for text that is no number. Go has no arithmetic: each digit
        makes the value ten times wider plus the digit (printf widths, as elsewhere)."""
        self.warn(
            node,
            "|int of a string",
            "exact for up to 6 plain digits with whitespace around them; a sign, a fraction, '_' "
            "between digits or a longer number gives 0 (or a wrong number) where Jinja reads the number",
        )
        digits, number, bad, seen, after, at, byte = (self.temp() for _ in range(7))
        self.action(f"{digits} := {text.code}")
        self.action(f"{number} := 0")
        self.action(f"{bad} := false")
        self.action(f"{seen} := false")
        self.action(f"{after} := false")
        self.action(f"range {at} := len {digits}")
        self.action(f"{byte} := index {digits} {at}")
        self.action(f"if and (ge {byte} 48) (le {byte} 57)")
        self.action(f'if or {after} (ge (len (printf "%d" {number})) 6)')
        self.action(f"{bad} = true")
        self.action("else")
        ten_times = " ".join([f'{number} ""'] * 10)
        self.action(f'{number} = len (printf "{"%*s" * 11}" {ten_times} (len (slice (printf "%*s" {byte} "") 48)) "")')
        self.action(f"{seen} = true")
        self.action("end")
        self.action(f"else if or (eq {byte} 32) (and (ge {byte} 9) (le {byte} 13))")
        self.action(f"{after} = {seen}")
        self.action("else")
        self.action(f"{bad} = true")
        self.action("end")
        self.action("end")
        self.action(f"if {bad}")
        self.action(f"{number} = 0")
        self.action("end")
        return Value(number, INT)

    def mapped_attribute(self, value: Value, attribute: Any, node: nodes.Node) -> Value:
        """`seq | map(attribute='a.b')`: a view of the (selected) elements' attribute, written
        out by `json_view`; the elements are Ollama's structs, so the attribute resolves statically."""
        if not isinstance(attribute, str):
            raise self.fail(node, "|map(attribute=...) with a non-string attribute")
        base = value.extra["base"] if value.kind in {"select", "mapped"} else value
        filters = value.extra["filters"] if value.kind in {"select", "mapped"} else []
        path = [*value.extra.get("path", ()), *attribute.split(".")]
        sample = Value("$", ELEMENT[base.kind])
        for name in path:
            sample = self.attr(sample, name, node)
        if sample.kind == UNDEF or sample.extra.get("maybe_undefined"):
            raise self.fail(node, f"|map(attribute={attribute!r}) of an attribute the elements may lack")
        return Value(base.code, "mapped", extra={"base": base, "filters": filters, "path": path, "lazy": True})

    def json_view(self, value: Value, indent: int | None, expr: nodes.Node) -> None:
        """json.dumps of a selection (`selectattr`) or of its elements' attribute (`map`):
        the passing elements written one by one, the brackets once the first one is known."""
        base: Value = value.extra["base"]
        if value.extra.get("lazy"):
            self.warn(
                expr,
                "tojson of |map(...) without |list",
                "Jinja fails there (a generator is not JSON serializable); written as the list instead",
            )
        writer = JsonWriter(self, indent, expr)
        first, idx, item = self.temp(), self.temp(), self.temp()
        self.action(f"{first} := true")
        self.action(f"range {idx}, {item} := {base.code}")
        element = Value(item, ELEMENT[base.kind])
        guard = self.selection_test(value.extra["filters"], element) if value.extra["filters"] else "true"
        for name in value.extra.get("path", ()):
            element = self.attr(element, name, expr)
        if element.kind in {TOOL, TFUNC, PARAMS, PROPS, PROP}:
            self.warn(expr, "tojson of tools", JSON_SCHEMA_EFFECT)
        if element.kind in {ARGS, CALL, FUNC}:
            self.warn(expr, "tojson of tool call arguments", "argument keys come out sorted (Ollama passes a map)")
        self.action(f"if {guard}")
        self.action(f"if {first}")
        self.action(f"{first} = false")
        self.text("[" + writer.pad(1))
        self.action("else")
        self.text(writer.sep(1))
        self.action("end")
        writer.value(element.code, element.kind, 1)
        self.action("end")
        self.action("end")
        self.action(f"if {first}")
        self.text("[]")
        self.action("else")
        self.text(writer.pad(0) + "]")
        self.action("end")

    def extreme_of_numbers(self, items_node: nodes.List | nodes.Tuple, name: str, frame: Frame) -> Value:
        """`[a, b]|min` (or max) of numbers: compared one by one, as Python's min() does."""
        items = [self.expr(item, frame) for item in items_node.items]
        if not items:
            raise self.fail(items_node, f"|{name} of an empty list")
        if all(item.is_const for item in items):
            return const((min if name == "min" else max)(item.const for item in items))
        if not all(item.kind == INT and not isinstance(item.const, bool) for item in items):
            raise self.fail(
                items_node, f"|{name} of a list holding {', '.join(sorted({i.kind for i in items}))} values"
            )
        best = self.temp()
        self.action(f"{best} := {items[0].code}")
        for item in items[1:]:
            self.action(f"if {'lt' if name == 'min' else 'gt'} {item.code} {best}")
            self.action(f"{best} = {item.code}")
            self.action("end")
        return Value(
            best, INT, extra={"maybe_negative": True} if any(i.extra.get("maybe_negative") for i in items) else {}
        )

    def indent_json(self, value: Value, args: list[Any], options: dict[str, Any], node: nodes.Node) -> Value:
        """`tojson | indent(n)`: JSON text has no blank lines, so every newline gains the indent."""
        width, first = (args + [4, False])[:2]
        first = options.get("first", first)
        if (
            not isinstance(width, int)
            or isinstance(width, bool)
            or options.get("blank")
            or set(options) - {"first", "blank"}
        ):
            raise self.fail(node, "|indent with these options")
        self.warn(node, "|indent of JSON text", "U+0085, U+2028 and U+2029 inside JSON strings do not start a new line")
        pad = " " * width
        code = textops.replace(self, value.code, "\n", go_string("\n" + pad))
        return Value(f'(printf "%s%s" {go_string(pad)} {code})' if first else code, STR)

    def selected_element(self, value: Value, which: int) -> Value:
        """`(list | selectattr(...))[0]` / `[-1]`: the first / last element passing the test
        (Python raises on an empty selection, and so does the reference)."""
        base: Value = value.extra["base"]
        found, idx, item = self.temp(), self.temp(), self.temp()
        self.action(f"{found} := 0")
        self.action(f"range {idx}, {item} := {base.code}")
        test = self.selection_test(value.extra["filters"], Value(item, ELEMENT[base.kind]))
        self.action(f"if {test}")
        self.action(f"{found} = {item}")
        if which == 0:
            self.action("break")
        self.action("end")
        self.action("end")
        return Value(found, ELEMENT[base.kind])

    def count_selected(self, value: Value) -> Value:
        base: Value = value.extra["base"]
        if not value.extra["filters"]:
            return Value(f"(len {base.code})", INT)
        count, idx, item = self.temp(), self.temp(), self.temp()
        self.action(f"{count} := 0")
        self.action(f"range {idx}, {item} := {base.code}")
        test = self.selection_test(value.extra["filters"], Value(item, ELEMENT[base.kind]))
        self.action(f"if {test}")
        self.action(f"{count} = {textops.plus_one(count)}")
        self.action("end")
        self.action("end")
        return Value(count, INT)

    def expr_Slice(self, node: nodes.Slice, frame: Frame) -> Value:
        raise self.fail(node, "a slice outside a subscript")

    def expr_Dict(self, node: nodes.Dict, frame: Frame) -> Value:
        """A dict literal: its keys must be constant, so every lookup resolves statically."""
        fields: dict[Any, Value] = {}
        for pair in node.items:
            key = self.expr(pair.key, frame)
            if not key.is_const or isinstance(key.const, (list, dict)):
                raise self.fail(node, "a dict literal with a non-constant key")
            fields[key.const] = self.expr(pair.value, frame)
        if all(v.is_const for v in fields.values()):
            return const({k: v.const for k, v in fields.items()})
        return Value("", RECORD, extra={"fields": fields})

    def dict_fields(self, value: Value) -> dict[Any, Value]:
        if value.kind == RECORD:
            return value.extra["fields"]
        return {k: const(v) for k, v in value.const.items()}

    def dict_lookup(self, base: Value, key: Value, node: nodes.Node) -> Value:
        """`d[key]` of a dict literal; a run-time key picks among the constant values."""
        fields = self.dict_fields(base)
        if key.is_const:
            return fields.get(key.const, UNDEFINED)
        if key.kind == UNDEF and not key.extra.get("maybe_undefined"):
            return UNDEFINED  # no dict has Undefined as a key
        if key.kind == ANY and all(isinstance(k, str) and k for k in fields):
            # an untyped key (a schema's `type`) matches only when it is a string
            key = Value(f'(or (and (eq (printf "%T" {key.code}) "string") (printf "%v" {key.code})) "")', STR)
        if key.kind not in {STR, CONTENT, INT} or not all(
            v.is_const and isinstance(v.const, (str, int)) and not isinstance(v.const, bool) for v in fields.values()
        ):
            raise self.fail(node, "a dict literal looked up with a run-time key")
        kinds = {type(v.const) for v in fields.values()}
        if len(kinds) > 1:
            raise self.fail(node, "a dict literal of mixed value types looked up with a run-time key")
        result, flag = self.temp(), self.temp()
        self.action(f'{result} := ""' if kinds != {int} else f"{result} := 0")
        self.action(f"{flag} := false")
        for k, v in fields.items():
            if isinstance(k, str) == (key.kind != INT):
                self.action(f"if eq {key.code} {const(k).code}")
                self.action(f"{result} = {v.code}")
                self.action(f"{flag} = true")
                self.action("end")
        kind = INT if kinds == {int} else STR
        return Value(result, kind, extra={"maybe_undefined": True, "defined_flag": flag})
