"""Expressions: names, literals, attribute and item access, operators, calls and filters."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, cast

from jinja2 import nodes

from ..analysis import is_loop_attr, revindex0_spelled_out
from ..go import ir, strlists, textops
from ..go.calls import GoCall, go_and, go_eq, go_len, go_not, go_or, go_printf, operand_of
from ..go.textops import EMPTY, ONE, go_string
from ..ops.access import MESSAGES
from ..ops.values import (
    ANY,
    ARGS,
    BOOL,
    BOUND_METHOD,
    CALLS,
    CONTENT,
    DICT,
    DICT_KINDS,
    DICT_METHODS,
    ELEMENT,
    INT,
    LOOP,
    MAPPINGS,
    MONTHS,
    MSGS,
    NONE,
    NS,
    PART,
    RECORD,
    REVERSED,
    SELECT,
    SEQUENCES,
    SPLIT,
    STR,
    STRFTIME,
    STRLIST,
    TOOLS,
    UNDEF,
    UNDEFINED,
    Facts,
    Value,
    const,
    final_of,
)
from .methods import Methods
from .scope import Frame

ZERO = ir.Number.of(0)


def _spaces(count: str) -> GoCall:
    """`(printf "%*s" count "")`: `count` spaces, a string as long as the int `count`."""
    return go_printf("%*s", count, EMPTY)


class Expressions(Methods):
    """Expressions: `expr_<Node>` for each jinja2 expression node, reached through `Core.expr`."""

    def expr_Const(self, node: nodes.Const, frame: Frame) -> Value:
        return const(node.value)

    def expr_TemplateData(self, node: nodes.TemplateData, frame: Frame) -> Value:
        return const(node.data)

    def expr_List(self, node: nodes.List, frame: Frame) -> Value:
        items = [self.expr(item, frame) for item in node.items]
        if all(item.is_const for item in items):
            return const([item.const for item in items])
        codes = [self.access.strlist_item(item, node, may_be_final=True) for item in items]
        return Value(strlists.of_items(codes), STRLIST, facts=self.access.any_final(items))

    expr_Tuple = expr_List

    def expr_Name(self, node: nodes.Name, frame: Frame) -> Value:
        if node.name == "loop" and frame.lookup("loop") is None:
            return Value("", LOOP)
        found = frame.lookup(node.name)
        known = found.facts.known if found is not None else None
        if known is not None and known[0] == self.emit.flow_epoch:
            return const(known[1])  # set to a constant with no branch point since
        if found is not None and found.facts.literal:
            if id(node) not in self.literal_uses:
                raise self.emit.fail(
                    node, f"{node.name} (a dict literal on some paths) used other than tested or handed to a macro"
                )
            return self.access.literal_or(found)
        if found is not None:
            return found
        return self.access.global_name(node.name, node)

    def expr_Getattr(self, node: nodes.Getattr, frame: Frame) -> Value:
        base = self.expr(node.node, frame)
        if base.kind == LOOP:
            return self.loop_attr(node, frame)
        if base.kind in DICT_KINDS and node.attr in DICT_METHODS:
            return Value("", BOUND_METHOD)  # Jinja's getattr finds dict methods before keys
        return self.access.attr(base, node.attr, node)

    def expr_Getitem(self, node: nodes.Getitem, frame: Frame) -> Value:
        base = self.expr(node.node, frame)
        if isinstance(node.arg, nodes.Slice):
            return self.slice(base, node.arg, frame, node)
        if base.kind in SEQUENCES and (neighbour := self.loop_neighbour(node, base, frame)) is not None:
            return neighbour
        key = self.expr(node.arg, frame)
        if key.is_const and isinstance(key.const, str):
            if base.kind == LOOP:
                return self.loop_attr(nodes.Getattr(node.node, key.const, "load", lineno=node.lineno), frame)
            value = self.access.attr(base, key.const, node)
            if base.kind in DICT_KINDS and key.const in DICT_METHODS:
                # Jinja's subscript falls back to the attribute: a missing key is the dict's method
                if value.kind == UNDEF:
                    return Value("", BOUND_METHOD)
                if value.facts.optional:
                    return replace(value, facts=replace(value.facts, optional=False, or_method=True))
            return value
        if base.kind == SPLIT:
            if key.is_const and (key.const == 0 or (key.const == -1 and base.facts.limit is None)):
                return self.strings.split_part(base, key.const, node)
            base = self.strings.split_list(base)
        if base.kind in {DICT, RECORD}:
            return self.access.dict_lookup(base, key, node)
        if base.kind == SELECT and key.is_const and key.const in (0, -1):
            return self.views.selected_element(base, key.const)
        if base.kind == STRLIST and key.is_const and key.const in (0, -1):
            return Value(strlists.element(self.emit, base.code, key.const), STR, facts=final_of(base))
        if base.kind == STRLIST and key.kind == INT and not (key.is_const and key.const < 0):
            element, found = strlists.nth(self.emit, base.code, key.code)
            facts = Facts(maybe_undefined=True, defined_flag=ir.Variable(found), final=base.facts.final)
            return Value(element, STR, facts=facts)
        if base.kind in {CONTENT}:
            if key.is_const and key.const in (0, -1):
                part = Facts(content=operand_of(base.expr), final=base.facts.final)
                return Value.of(MESSAGES, PART, facts=part)
            raise self.emit.fail(node, "indexing message content")
        if base.kind in SEQUENCES and key.kind == INT:
            element = ELEMENT.get(base.kind, ANY)
            if key.is_const and key.const < 0:
                return Value(
                    GoCall("index", base.code, go_len(GoCall("slice", base.code, ir.Number.of(-key.const)))), element
                )
            return Value(GoCall("index", base.code, key.code), element)
        if base.kind == ANY and key.is_const and isinstance(key.const, int) and not isinstance(key.const, bool):
            return self.access.untyped_element(base, key.const)
        if base.kind == ANY and key.is_const and isinstance(key.const, str):
            return self.access.untyped_field(base, key.const)
        if base.kind in {STR} and key.kind == INT:
            raise self.emit.fail(node, "indexing a string")
        if base.kind == ARGS and key.kind == STR:
            return self.access.argument_named(base, key)
        raise self.emit.fail(node, f"subscript of {base.kind}")

    def expr_Neg(self, node: nodes.Neg, frame: Frame) -> Value:
        inner = self.expr(node.node, frame)
        if inner.is_const and isinstance(inner.const, int):
            return const(-inner.const)
        raise self.emit.fail(node, "negation of a non-constant")

    def expr_Not(self, node: nodes.Not, frame: Frame) -> Value:
        if is_loop_attr(node.node, "first") and (loop := self.loop_of(frame)).first_flag:
            # not its flag (`not` is a call) but the index compared with 0, which an `if` tests
            # as the index's truth
            return Value(go_not(go_eq(loop.index, "0")), BOOL)
        inner = self.expr(node.node, frame)
        if inner.is_const:
            return const(not inner.const)
        return Value(go_not(self.logic.truth_of(inner)), BOOL)

    def expr_And(self, node: nodes.And, frame: Frame) -> Value:
        return self.and_or(node, frame, "and")

    def expr_Or(self, node: nodes.Or, frame: Frame) -> Value:
        return self.and_or(node, frame, "or")

    def expr_CondExpr(self, node: nodes.CondExpr, frame: Frame) -> Value:
        truth = self.test_truth(node.test, frame)  # (known from the data model: an absent schema key...)
        if truth in {"true", "false"}:
            # only the branch taken is evaluated, as in Python
            if truth == "true":
                return self.expr(node.expr1, frame)
            return self.expr(node.expr2, frame) if node.expr2 is not None else UNDEFINED
        return self.chosen_value(truth, node, frame)

    def expr_Compare(self, node: nodes.Compare, frame: Frame) -> Value:
        def value_of(operand: nodes.Expr) -> Value:
            return self.expr(operand, frame)

        compare = self.comparisons
        special = compare.string_only_comparison(node, value_of) or compare.length_comparison(node, value_of)
        if special is not None:
            return special
        left = self.expr(node.expr, frame)
        parts = []
        for op in node.ops:
            right = self.expr(op.expr, frame)
            parts.append(self.logic.compare(op.op, left, right, node))
            left = right
        if len(parts) == 1:
            return parts[0]
        if all(p.is_const for p in parts):
            return const(all(p.const for p in parts))
        return Value(go_and(*(self.logic.truth_of(p) for p in parts)), BOOL)

    def expr_Test(self, node: nodes.Test, frame: Frame) -> Value:
        value = self.expr(node.node, frame)
        result = self.logic.is_test(node.name, value, node, [self.expr(a, frame) for a in node.args])
        return const(result == "true") if result in {"true", "false"} else Value(result, BOOL)

    def expr_Concat(self, node: nodes.Concat, frame: Frame) -> Value:
        values = [self.expr(n, frame) for n in node.nodes]
        # `~` takes str() of each operand: an untyped value (an enum entry, an argument) too
        values = [self.strings.untyped_str(v, node) if v.kind == ANY and not v.is_const else v for v in values]
        return self.strings.concat(values, node)

    def expr_Add(self, node: nodes.Add, frame: Frame) -> Value:
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if left.facts.markup or right.facts.markup:
            return self.strings.markup_add(left, right, node)
        if left.is_const and right.is_const:
            return const(left.const + right.const)
        if STRLIST in {left.kind, right.kind}:
            return Value(
                strlists.concat(self.access.strlist_code(left, node), self.access.strlist_code(right, node)),
                STRLIST,
                facts=self.access.any_final([left, right]),
            )
        if left.kind == INT and right.kind == INT:
            if right.facts.maybe_negative and left.is_const:
                left, right = right, left
            if left.facts.maybe_negative and right.is_const and right.const >= 0:
                # a negative left (a `namespace(x=-1)` marker) plus n: n - |x| (a printf width of -k pads to k)
                below = go_printf(".%s", GoCall("slice", _spaces(right.code), go_len(_spaces(left.code))))
                above = go_printf(".%*s%*s", left.code, EMPTY, right.code, EMPTY)
                negative = go_and(GoCall("lt", left.code, ZERO), below)
                return Value(go_len(GoCall("slice", go_or(negative, above), ONE)), INT)
            if left.facts.maybe_negative or right.facts.maybe_negative:
                raise self.emit.fail(node, "'+' of a possibly negative number and a non-constant")
            return Value(go_len(go_printf("%*s%*s", left.code, EMPTY, right.code, EMPTY)), INT)
        if {left.kind, right.kind} <= {STR, CONTENT} or (
            (left.kind in {STR, CONTENT} or right.kind in {STR, CONTENT}) and (left.is_const or right.is_const)
        ):
            return self.strings.concat([left, right], node)
        if ARGS in {left.kind, right.kind} and ({left.kind, right.kind} - {ARGS}) <= {STR, CONTENT}:
            # Python refuses `str + dict`: the arguments are the JSON string the template was written for
            left, right = (self.strings.arguments_json(v, node) if v.kind == ARGS else v for v in (left, right))
            return self.strings.concat([left, right], node)
        if ANY in {left.kind, right.kind} and ({left.kind, right.kind} - {ANY}) <= {STR, CONTENT}:
            # Python's `str + x` works only for a string x, which prints bare, as str() of it does
            self.emit.warn(
                node,
                "'+' of text and an untyped value",
                "Jinja fails where the value is not a string; here it is written as str() of it",
            )
            texts = [self.strings.untyped_str(v, node) if v.kind == ANY else v for v in (left, right)]
            return self.strings.concat(texts, node)
        raise self.emit.fail(node, f"'+' of {left.kind} and {right.kind}")

    def expr_Sub(self, node: nodes.Sub, frame: Frame) -> Value:
        listed = revindex0_spelled_out(node)
        if listed is not None and frame.lookup("loop") is None:
            # in a loop over the list reversed: the position the step took its element from
            loop = self.loop_of(frame)  # (the list is Ollama's data: nothing in the loop sets it again)
            data = loop.list_node
            if (
                loop.revindex0
                and isinstance(data, ir.Variable)
                and data.name == "$"
                and data.fields
                and self.expr(listed, frame).node == data
            ):
                return Value(loop.revindex0, INT)
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if left.is_const and right.is_const:
            return const(left.const - right.const)
        if left.kind == INT and right.kind == INT:
            return Value(go_len(GoCall("slice", _spaces(left.code), right.code)), INT)
        raise self.emit.fail(node, f"'-' of {left.kind} and {right.kind}")

    def expr_Mul(self, node: nodes.Mul, frame: Frame) -> Value:
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if left.is_const and right.is_const:
            copied = [v.const for v in (left, right) if isinstance(v.const, (str, list, tuple))]
            times = [v.const for v in (left, right) if isinstance(v.const, int)]
            if copied and times and len(copied[0]) * times[0] > self.emit.budget.limits.max_output:
                raise self.emit.fail(node, "'*' of a constant", self.emit.budget.too_large())
            return const(left.const * right.const)
        if right.is_const and isinstance(right.const, str):
            left, right = right, left
        if left.is_const and isinstance(left.const, str) and right.kind == INT:
            # a string repeated n times (none when n <= 0, as Go's range over an int)
            repeated = self.emit.temp()
            self.emit.declare(repeated, '""')
            self.emit.range_(right.expr)
            self.emit.assign(repeated, textops.appended(repeated, operand_of(left.code)))
            self.emit.end()
            return Value(repeated, STR)
        raise self.emit.fail(node, f"'*' of {left.kind} and {right.kind}")

    def expr_Mod(self, node: nodes.Mod, frame: Frame) -> Value:
        left, right = self.expr(node.left, frame), self.expr(node.right, frame)
        if left.is_const and right.is_const:
            return const(left.const % right.const)
        if left.kind == INT and right.is_const and right.const == 2:
            # parity: the last digit of a non-negative number
            digits = go_printf("%d", left.code)
            last_digit = go_printf("%.1s", GoCall("slice", digits, go_len(GoCall("slice", digits, ONE))))
            odd = go_eq(last_digit, *(ir.String.of(digit) for digit in "13579"))
            return Value(go_or(go_and(odd, ONE), ZERO), INT)
        raise self.emit.fail(node, "'%' operator")

    def expr_Call(self, node: nodes.Call, frame: Frame) -> Value:
        callee = node.node
        if isinstance(callee, nodes.Name):
            return self.function_call(node, callee.name, frame)
        if isinstance(callee, nodes.Getattr):
            base = self.expr(callee.node, frame)
            method = callee.attr
            args = [self.expr(a, frame) for a in node.args]
            value = (
                self.string_method_call(node, base, method, args, frame)
                or self.method_of_nothing(node, base, method)
                or self.mapping_method_call(node, base, method, args)
                or self.strlist_method_call(node, base, method, args)
            )
            if value is not None:
                return value
        raise self.emit.fail(node, "this function call")

    def function_call(self, node: nodes.Call, name: str, frame: Frame) -> Value:
        """A call of a name: Jinja's globals transformers provides (`namespace`, `raise_exception`,
        `strftime_now`, `dict`, `range`), or a macro or `caller()` whose output is the value."""
        if name == "namespace":
            attrs = {kw.key: self.expr(kw.value, frame) for kw in node.kwargs}
            return Value("", NS, facts=Facts(attrs=attrs))
        if name == "raise_exception":
            dropped = "dropped: Ollama renders instead of refusing this conversation"
            self.emit.warn(node, "raise_exception()", dropped)
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
            raise self.emit.fail(node, "range() with more than one argument")
        if name in self.macros and frame.lookup(name) is None:
            captured = self.emit.capture(
                lambda: self.inline_macro(node, frame), f"macro {name}() used as a value", node
            )
            return self.emit.captured(captured)
        if name == "caller" and frame.lookup(name) is None:
            held = self.emit.capture(lambda: self.run_caller(node), "caller() used as a value", node)
            return self.emit.captured(held)
        raise self.emit.fail(node, f"function {name}()")

    def expr_Filter(self, node: nodes.Filter, frame: Frame) -> Value:
        return self.lowering.apply_filter(node, self.value_of(frame))  # see ops/filters.py: FILTERS

    def expr_Slice(self, node: nodes.Slice, frame: Frame) -> Value:
        raise self.emit.fail(node, "a slice outside a subscript")

    def expr_Dict(self, node: nodes.Dict, frame: Frame) -> Value:
        """A dict literal: its keys must be constant, so every lookup resolves statically."""
        fields: dict[Any, Value] = {}
        for pair in node.items:
            key = self.expr(pair.key, frame)
            if not key.is_const or isinstance(key.const, (list, dict)):
                raise self.emit.fail(node, "a dict literal with a non-constant key")
            fields[key.const] = self.expr(pair.value, frame)
        if all(v.is_const for v in fields.values()):
            return const({k: v.const for k, v in fields.items()})
        return Value("", RECORD, facts=Facts(fields=fields))

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
                return Value(base.code, REVERSED, facts=Facts(base=base))
            raise self.emit.fail(node, "slice with a step other than [::-1] of a list")
        start = self.expr(sl.start, frame) if sl.start is not None else None
        stop = self.expr(sl.stop, frame) if sl.stop is not None else None
        if base.kind == UNDEF and not base.facts.maybe_undefined:
            self.emit.warn(node, "slicing an undefined value", "Jinja fails there; rendered as an empty value instead")
            return UNDEFINED
        if base.kind in {STR, CONTENT}:
            if start is None and stop is not None and stop.is_const and stop.const >= 0:
                return Value(go_printf("%.*s", stop.code, base.code), STR)
            if self.access.runtime_count(start) or self.access.runtime_count(stop):
                return self.access.slice_by_count(base, start, stop, node)
            bounds = [
                b.const
                if b is not None and b.is_const and isinstance(b.const, int) and not isinstance(b.const, bool)
                else b
                for b in (start, stop)
            ]
            if any(isinstance(b, Value) for b in bounds):
                raise self.emit.fail(node, "string slicing with a bound known only at run time")
            start_at, stop_at = cast("list[int | None]", bounds)  # no run-time bound is left
            return Value(textops.slice_text(self.emit, base.code, start_at, stop_at), STR)
        if base.kind == SPLIT:
            base = self.strings.split_list(base)
        if (
            base.kind == STRLIST
            and stop is None
            and start is not None
            and start.kind == INT
            and not (start.is_const and start.const < 0)
        ):
            return Value(strlists.tail(self.emit, base.code, start.code), STRLIST, facts=final_of(base))
        if base.kind not in {MSGS, CALLS, TOOLS}:
            raise self.emit.fail(node, f"slicing {base.kind}")

        def bound(value: Value) -> str | ir.Operand:
            if value.is_const and isinstance(value.const, int) and value.const < 0:
                return go_len(GoCall("slice", base.code, ir.Number.of(-value.const)))
            if value.kind != INT:
                raise self.emit.fail(node, "a non-integer slice bound")
            return value.code

        lo = bound(start) if start is not None else ZERO
        if stop is None:
            return Value(GoCall("slice", base.code, lo), base.kind)
        return Value(GoCall("slice", base.code, lo, bound(stop)), base.kind)

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
            raise self.emit.fail(node, f"loop.{node.attr}")
        if node.attr == "index0":
            return Value(loop.index, INT)
        if node.attr == "index":
            return Value(GoCall("len", go_printf("%*s.", loop.index, EMPTY)), INT)
        if node.attr == "first":
            return Value(loop.ask(loop.first_flag) if loop.first_flag else go_eq(loop.index, "0"), BOOL)
        if node.attr == "last":
            return Value(go_eq(loop.index, loop.ask(loop.last)), BOOL)
        if node.attr == "length":
            return Value(loop.length or go_len(loop.seq), INT)
        if node.attr == "revindex0" and loop.revindex0:
            return Value(loop.revindex0, INT)
        if node.attr in {"previtem", "nextitem"} and loop.item_kind is not None:
            return self.access.neighbour_item(loop, node.attr == "previtem")
        raise self.emit.fail(node, f"loop.{node.attr}")

    def and_or(self, node: nodes.BinExpr, frame: Frame, op: str) -> Value:
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
                return Value(go_and(self.logic.truth_of(left), "false"), BOOL)
            if op == "or" and right.const:
                return Value(go_or(self.logic.truth_of(left), "true"), BOOL)
        kind = left.kind if left.kind == right.kind else ANY
        if {left.kind, right.kind} <= {BOOL}:
            kind = BOOL
        code = GoCall(op, self.logic.truth_operand(left), self.logic.truth_operand(right))
        if all(v.kind in {STR, CONTENT} or (v.is_const and isinstance(v.const, str)) for v in (left, right)):
            # Go's and/or return an operand, as Python's do: text either way (`content or ''`)
            return Value(code, STR, facts=self.access.any_final([left, right]))
        return Value(code, kind)

    def strftime(self, node: nodes.Call, frame: Frame) -> Value:
        fmt = self.const_of(node.args[0], frame)
        pieces: list[str] = []
        i = 0
        date = self.emit.temp()
        self.emit.declare(date, ir.command("currentDate"))
        while i < len(fmt):
            spec = fmt[i : i + 2]
            if spec in STRFTIME:
                lo, hi = STRFTIME[spec]
                pieces.append(GoCall("slice", date, ir.Number.of(lo), ir.Number.of(hi)))
                i += 2
            elif spec in {"%b", "%B"}:
                month = self.emit.temp()
                self.emit.declare(month, '""')
                for number, name in enumerate(MONTHS, 1):
                    text = name if spec == "%B" else name[:3]
                    self.emit.if_(
                        go_eq(GoCall("slice", date, ir.Number.of(5), ir.Number.of(7)), ir.String.of(f"{number:02d}"))
                    )
                    self.emit.assign(month, ir.String.of(text))
                    self.emit.end()
                pieces.append(month)
                i += 2
            elif fmt[i] == "%":
                raise self.emit.fail(node, f"strftime_now({fmt!r})", f"(format {spec} is not supported)")
            else:
                pieces.append(go_string(fmt[i]))
                i += 1
        if not pieces:
            return Value('(printf "" )', STR)  # (an empty format, written as it always was)
        return Value(go_printf("%s" * len(pieces), *pieces), STR)
