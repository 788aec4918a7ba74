"""String operations: str methods, `%` and `.format`, concatenation, case, split, str() of
untyped values, `|int` of text.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from jinja2 import nodes

from ..go import ir, search, strip, strlists, textops
from ..go.calls import GoCall, go_and, go_eq, go_len, go_not, go_or, go_printf, go_variable
from ..go.reprhelper import REPR_HELPER
from ..go.textops import escape_html, go_string, html_of
from .access import Access
from .emit import Emit
from .tojson import PYTHON_REPR, JsonWriter, ToJson
from .values import (
    ANY,
    ARGS,
    BOOL,
    CONTENT,
    INT,
    LIST,
    NO_FACTS,
    NONE,
    SPLIT,
    STR,
    STRLIST,
    UNDEF,
    Facts,
    Value,
    const,
    final_of,
    py_str,
    separator_of,
)


@dataclass(eq=False)
class Strings:
    """String operations (str() of a dict is its repr, by `to_json`)."""

    emit: Emit
    access: Access
    to_json: ToJson
    #: prints a value holding a print plan, given by the print plans that made it
    print_planned: Callable[[Value, nodes.Node], None] | None = None

    def trim(self, text_code: str, method: str, chars: str | None, facts: Facts = NO_FACTS) -> Value:
        return Value(strip.strip(self.emit, text_code, method, chars), STR, facts=facts)

    def affix_test(self, method: str, base: Value, affix: Value) -> Value:
        """`s.startswith(t)` / `s.endswith(t)` for a run-time string `t`, compared as bytes: in
        valid UTF-8 a byte prefix or suffix that is itself whole text is a character one too."""
        text, part = self.emit.temp(), self.emit.temp()
        self.emit.declare(text, base.expr)
        self.emit.declare(part, affix.expr)
        start = "0" if method == "startswith" else go_len(GoCall("slice", text, go_len(part)))
        end = go_len(part) if method == "startswith" else go_len(text)
        fits = GoCall("ge", go_len(text), go_len(part))
        return Value(go_and(fits, go_eq(GoCall("slice", text, start, end), part)), BOOL)

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
            self.emit.warn(
                node, ".title()", "changes the case of ASCII letters only (any other character counts as a letter)"
            )
            text = self.emit.temp()
            self.emit.declare(text, base.expr)
            common = textops.COMMON_ROLES if base.reads_field("Role") else ()
            return Value(textops.ascii_title(self.emit, text, textops.PYTHON_TITLE_BREAKS, common), STR)
        if (
            method in {"startswith", "endswith"}
            and len(args) == 1
            and args[0].kind in {STR, CONTENT}
            and not args[0].is_const
        ):
            return self.affix_test(method, base, args[0])
        if method in {"startswith", "endswith"}:
            if not args or not args[0].is_const:
                raise self.emit.fail(node, f".{method}() with a non-constant argument")
            options = args[0].const if isinstance(args[0].const, list) else [args[0].const]
            tests = []
            for prefix in options:
                if method == "startswith":
                    tests.append(go_eq(go_printf("%.*s", ir.Number.of(len(prefix)), base.code), go_string(prefix)))
                else:
                    n = ir.Number.of(len(prefix.encode()))
                    tail = GoCall("slice", base.code, go_len(GoCall("slice", base.code, n)))
                    tests.append(go_and(GoCall("ge", go_len(base.code), n), go_eq(tail, go_string(prefix))))
            return Value(tests[0] if len(tests) == 1 else go_or(*tests), BOOL)
        if method == "split":
            if not args or not args[0].is_const or not isinstance(args[0].const, str) or not args[0].const:
                raise self.emit.fail(node, ".split() without a constant separator")
            limit = args[1].const if len(args) > 1 and args[1].is_const and isinstance(args[1].const, int) else None
            if len(args) > 2 or (len(args) == 2 and limit is None):
                raise self.emit.fail(node, ".split() with a non-constant maxsplit")
            kept = limit if limit is not None and limit >= 0 else None
            return Value(base.code, SPLIT, facts=replace(final_of(base), sep=args[0].const, limit=kept))
        if (
            method == "replace"
            and len(args) == 2
            and args[0].is_const
            and isinstance(args[0].const, str)
            and args[0].const
        ):
            new = args[1]
            if not (new.is_const and isinstance(new.const, str)) and new.kind not in {STR, CONTENT}:
                raise self.emit.fail(node, f".replace() with a {new.kind} replacement")
            code = search.replace(self.emit, base.code, args[0].const, new.code)
            return Value(code, STR, facts=self.access.any_final([base, new]))
        raise self.emit.fail(node, f"string method .{method}()")

    def concat(self, values: list[Value], node: nodes.Node) -> Value:
        """`a + b + ...` as one `printf`: a nested concatenation's operands are spliced into it and
        constant text goes into the format (`%` doubled), so a chain costs one call, not one per `+`."""
        if all(v.is_const for v in values):
            return const("".join(py_str(v.const) for v in values))
        parts: list[str | Value] = []  # constant text, or the value of a Go operand
        for v in values:
            if v.kind in {UNDEF}:
                continue
            spliced = v.facts.concat
            if v.is_const:
                parts.append(py_str(v.const))
            elif spliced is not None and v.is_operand(spliced[0]):
                parts.extend(spliced[1])
            elif v.kind in {STR, CONTENT, INT}:
                parts.append(Value(v.code, v.kind, written=v.written))  # (not the slot: it changes)
            else:
                raise self.emit.fail(node, f"string concatenation with {v.kind}")
        fmt = "".join(part.replace("%", "%%") if isinstance(part, str) else "%v" for part in parts)
        code = GoCall("printf", ir.String.of(fmt), *(part.code for part in parts if not isinstance(part, str)))
        # text holding a message's text may hold the prefilled final one (cut inside it, see print_final_text)
        distinct = list({v.facts.final: v for v in values if v.facts.final}.values())
        # (nonempty: holds constant text, true whatever the values are)
        nonempty = any(isinstance(part, str) and part for part in parts)
        facts = replace(self.access.any_final(distinct), concat=(code.node, tuple(parts)), nonempty=nonempty)
        return Value(code, STR, facts=facts)

    def markup_add(self, left: Value, right: Value, node: nodes.Node) -> Value:
        """`'x'|safe + y`: a Markup string escapes the plain operand it is added to (either side).

        markupsafe escapes & < > ' " exactly as Go's `html` does (Go also turns NUL into U+FFFD).
        """
        sides = [side if side.facts.markup else self.html_escaped(side, node) for side in (left, right)]
        if all(side.is_const for side in sides):
            joined = const(sides[0].const + sides[1].const)
        else:
            joined = self.concat(sides, node)
        return replace(joined, facts=replace(joined.facts, markup=True))

    def html_escaped(self, value: Value, node: nodes.Node) -> Value:
        if value.is_const and isinstance(value.const, str):
            return const(escape_html(value.const))
        if value.kind in {STR, CONTENT} and not value.is_const:
            if value.facts.final:
                raise self.emit.fail(
                    node,
                    "a message's text HTML-escaped by a |safe concatenation",
                    "(an assistant prefill could not be cut inside it)",
                )
            escaped = value.node
            if escaped is None:
                return Value(html_of(value.code, parenthesised=True), STR)
            # `html $x`, or `html (code)` of any other operand (html_of writes the same)
            return Value.of(
                ir.call("html", escaped if isinstance(escaped, ir.Variable) else ir.Pipe((ir.Command((escaped,)),))),
                STR,
            )
        raise self.emit.fail(
            node,
            f"'+' of a |safe string and {value.kind if not value.is_const else type(value.const).__name__}",
            "(Python escapes it as HTML; Go cannot here)",
        )

    def arguments_json(self, arguments: Value, node: nodes.Node) -> Value:
        """Tool call arguments as the JSON string a client sends them as (json.dumps layout)."""
        return Value(
            self.emit.capture(lambda: self.to_json.json_action(arguments, None, node), "|tojson", node),
            STR,
            facts=Facts(json_text=True),
        )

    def stringified(self, value: Value, node: nodes.Node) -> Value:
        """`str(x)`, as `|string` and `%s` give it."""
        if value.kind in {STR, CONTENT}:
            return value
        if value.is_const:
            return const(py_str(value.const))
        if value.kind == NONE and not value.facts.maybe_undefined:
            return const("None")
        if value.kind == INT:
            return Value(go_printf("%d", value.code), STR)
        if value.kind == ANY:
            return self.untyped_str(value, node)
        if value.kind in PYTHON_REPR or value.kind == LIST:
            return Value(self.emit.capture(lambda: self.to_json.repr_action(value, node), "|string", node), STR)
        raise self.emit.fail(node, f"|string of {value.kind}")

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
                raise self.emit.fail(node, f"|format with %{spec}")
            rest = rest[at + 2 :]
        if used != len(args):
            raise self.emit.fail(node, "|format with more arguments than %s")
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
            raise self.emit.fail(node, f".format() of a malformed pattern ({error})") from None
        for literal, field, spec, conversion in fields:
            pieces.append(const(literal))
            if field is None:
                continue
            if spec or conversion:
                raise self.emit.fail(node, ".format() with a format spec or conversion")
            if field == "" and auto >= 0:
                key: int | str = auto
                auto += 1
            elif field.isdigit() and auto <= 0:
                key = int(field)
                auto = -1  # Python refuses automatic and manual numbering together
            elif field.isidentifier():
                key = field
            else:
                raise self.emit.fail(node, f".format() field {{{field}}}")
            found = (
                args[key]
                if isinstance(key, int) and key < len(args)
                else kwargs.get(key)
                if isinstance(key, str)
                else None
            )
            if found is None or found.kind == UNDEF:
                raise self.emit.fail(node, f".format() field {{{field}}} without its argument")
            pieces.append(self.stringified(found, node))
        return self.concat(pieces, node)

    def untyped_str(self, value: Value, node: nodes.Node) -> Value:
        """`str(x)` of a value of unknown type (an argument value): a string bare, anything else
        its Python repr (written inline, so it can be stored)."""
        v = self.emit.temp()
        self.emit.declare(v, value.expr)
        text = self.emit.capture(lambda: self.untyped_repr(v, node), "|string", node)
        return Value(text, STR)

    def untyped_map(self, value: Value, filter_name: str, node: nodes.Node) -> Value:
        """`x | map('upper')` of an untyped list: a run-time list of strings (see strlists.py)."""
        seq, out, item = self.emit.temp(), self.emit.temp(), self.emit.temp()
        self.emit.declare(seq, value.expr)
        self.emit.declare(out, '""')
        self.emit.if_(go_eq(go_printf("%.2T", seq), ir.String.of("[]")))
        self.emit.range_(ir.Variable(seq), item)
        text = self.untyped_str(Value(item, ANY), node)
        if filter_name != "string":
            text = self.change_case(text, filter_name, node)
        strlists.append(self.emit, out, text.code)
        self.emit.end()
        self.emit.end()
        return Value(out, STRLIST)

    def untyped_join(self, code: str, sep: str, node: nodes.Node) -> None:
        seq, i, item, ignored = self.emit.temp(), self.emit.temp(), self.emit.temp(), self.emit.temp()
        self.emit.declare(seq, code)
        self.emit.if_(go_eq(go_printf("%.2T", seq), ir.String.of("[]")))
        self.emit.range_(ir.Variable(seq), i, item)
        self.emit.if_(i)
        self.emit.text(sep)
        self.emit.end()
        self.untyped_repr(item, node)
        self.emit.end()
        self.emit.if_(go_eq(go_printf("%.3T", seq), ir.String.of("map")), "else if")
        # a mapping joins its keys (sorted, as Go ranges a map)
        self.emit.declare(i, "true")
        self.emit.range_(ir.Variable(seq), item, ignored)
        self.emit.if_(go_not(i))
        self.emit.text(sep)
        self.emit.end()
        self.emit.assign(i, "false")
        self.emit.put(item)
        self.emit.end()
        self.emit.else_()
        self.untyped_repr(seq, node)
        self.emit.end()

    def untyped_repr(self, code: str, node: nodes.Node) -> None:
        self.emit.if_(go_eq(go_printf("%T", code), ir.String.of("string")))
        self.emit.put(code)
        self.emit.else_()
        JsonWriter(self.emit, None, node, python=True).untyped(code, 0)
        self.emit.end()

    def change_case(self, value: Value, method: str, node: nodes.Node) -> Value:
        """`|lower` / `|upper` of ASCII letters (Ollama lower-cases roles itself)."""
        is_role = value.reads_field("Role")
        if is_role and method == "lower" and self.emit.tool_role == "tool":
            return value
        if not is_role:
            self.emit.warn(node, f"|{method}", "changes the case of ASCII letters only")
        text = self.emit.temp()
        self.emit.declare(text, value.expr)
        if is_role and self.emit.tool_role != "tool":
            self.emit.if_(go_eq(text, ir.String.of("tool")))
            self.emit.assign(text, go_string(self.emit.tool_role))
            self.emit.end()
        return Value(textops.ascii_case(self.emit, text, method), STR)

    def split_list(self, value: Value) -> Value:
        """`s.split(sep[, n])` as a run-time list of strings: each separator becomes a marker."""
        parts = search.replace(self.emit, value.code, separator_of(value), strlists.MARK, value.facts.limit)
        return Value(GoCall("printf", strlists.MARKED, parts), STRLIST, facts=final_of(value))

    def split_part(self, value: Value, which: int, node: nodes.Node) -> Value:
        return Value(search.split_part(self.emit, value.code, separator_of(value), which), STR, facts=final_of(value))

    def parsed_int(self, text: Value, node: nodes.Node) -> Value:
        """`text | int`: the number a string of decimal digits (whitespace around it) spells,
        else 0, as Jinja gives for text that is no number. Go has no arithmetic: each digit
        makes the value ten times wider plus the digit (printf widths, as elsewhere)."""
        self.emit.warn(
            node,
            "|int of a string",
            "exact for up to 6 plain digits with whitespace around them; a sign, a fraction, '_' "
            "between digits or a longer number gives 0 (or a wrong number) where Jinja reads the number",
        )
        digits, number, bad, seen, after, at, byte = (self.emit.temp() for _ in range(7))
        self.emit.declare(digits, text.expr)
        self.emit.declare(number, "0")
        self.emit.declare(bad, "false")
        self.emit.declare(seen, "false")
        self.emit.declare(after, "false")
        textops.each_byte(self.emit, digits, at, byte)
        self.emit.if_(go_and(GoCall("ge", byte, ir.Number.of(48)), GoCall("le", byte, ir.Number.of(57))))
        self.emit.if_(go_or(after, GoCall("ge", go_len(go_printf("%d", number)), ir.Number.of(6))))
        self.emit.assign(bad, "true")
        self.emit.else_()
        # number * 10 + (byte - 48), as the length of that many spaces
        digit = ir.call(
            "len",
            ir.call("slice", ir.call("printf", textops.SPACES, ir.Variable(byte), textops.EMPTY), ir.Number.of(48)),
        )
        tens: tuple[ir.Operand, ...] = (ir.Variable(number), textops.EMPTY)
        widths = (*tens * 10, digit, textops.EMPTY)
        self.emit.assign(number, ir.command("len", ir.call("printf", ir.String.of("%*s" * 11), *widths)))
        self.emit.assign(seen, "true")
        self.emit.end()
        spaces = go_or(
            go_eq(byte, ir.Number.of(32)),
            go_and(GoCall("ge", byte, ir.Number.of(9)), GoCall("le", byte, ir.Number.of(13))),
        )
        self.emit.if_(spaces, "else if")
        self.emit.assign(after, seen)
        self.emit.else_()
        self.emit.assign(bad, "true")
        self.emit.end()
        self.emit.end()
        self.emit.if_(bad)
        self.emit.assign(number, "0")
        self.emit.end()
        return Value(number, INT)

    def print_value(self, value: Value, node: nodes.Node, concatenated: bool = False) -> None:
        """Print a value as Python's str() does (a print plan by the print plans, `print_planned`); `concatenated`: a piece of a `+` (which None
        would have made Python refuse)."""
        if value.facts.plan is not None and self.print_planned is not None:
            self.print_planned(value, node)
        elif value.is_const:
            if isinstance(value.const, (list, dict)):
                raise self.emit.fail(node, "printing a list or dict literal")
            self.emit.text(py_str(value.const))
        elif value.kind == UNDEF:
            return
        elif value.kind == NONE and not value.facts.maybe_undefined:
            self.emit.text("None")  # a variable certainly holding None
        elif value.kind == BOOL:
            self.emit.if_(value.code)
            self.emit.text("True")
            self.emit.else_()
            self.emit.text("False")
            self.emit.end()
        elif value.kind == STR and value.reads_field("Role") and self.emit.tool_role != "tool":
            self.emit.if_(go_eq(value.code, ir.String.of("tool")))
            self.emit.text(self.emit.tool_role)
            self.emit.else_()
            self.emit.put(value.expr)
            self.emit.end()
        elif value.kind in {STR, CONTENT} and value.facts.final and self.emit.sink is None:
            spliced = value.facts.concat
            parts = spliced[1] if spliced is not None and value.is_operand(spliced[0]) else ()
            self.emit.print_final_text(value.code, value.facts.final, parts)
        elif value.kind in {STR, INT, CONTENT}:
            if value.facts.maybe_none and not concatenated:  # (None is held as "")
                self.emit.warn(
                    node, "printing a variable that may hold None", "None prints as an empty string, not None"
                )
            if value.facts.final and self.emit.sink is not None:
                flag = go_variable(f"{self.emit.sink}_final")
                self.emit.set_final(flag, GoCall("or", flag, value.facts.final, parenthesised=False))
            self.emit.put(value.expr)
        elif value.kind in PYTHON_REPR:
            self.to_json.repr_action(value, node)
        elif value.kind == ANY and self.emit.sink is not None:
            self.untyped_repr(value.code, node)  # captured: written inline, not by the helper
        elif value.kind == LIST and self.emit.sink is not None:
            self.to_json.repr_action(value, node)
        elif value.kind in {ARGS, LIST} or value.kind == ANY:
            self.emit.helpers.setdefault("ofc_repr", REPR_HELPER)
            self.emit.call_helper("ofc_str" if value.kind == ANY else "ofc_repr", value.code, node)
        else:
            raise self.emit.fail(node, f"printing {value.kind} (a {value.kind} object as text)")
