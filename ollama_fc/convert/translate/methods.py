"""Method calls of values (`x.method(..)`) by what the value is: a string, nothing (undefined
or None), a mapping, or a list of strings built at run time; `Expressions.expr_Call` tries
each in turn."""

from __future__ import annotations

from dataclasses import replace

from jinja2 import nodes

from ..go import strlists
from ..ops import toolschema
from ..ops.values import (
    ANY,
    ARGS,
    CONTENT,
    NONE,
    PROPS,
    STR,
    STRLIST,
    UNDEF,
    UNDEFINED,
    Value,
    const,
)
from .macros import Macros
from .scope import Frame


class Methods(Macros):
    """`<value>.<method>(..)`: one method per kind of value, None where the kind has no such method."""

    def string_method_call(
        self, node: nodes.Call, base: Value, method: str, args: list[Value], frame: Frame
    ) -> Value | None:
        """A string method (`'..'.format(..)`, `text.strip()`), also of an untyped value where
        only strings have the method (Jinja fails on any other); None where `base` is no string."""
        if (
            method == "format"
            and base.is_const
            and isinstance(base.const, str)
            and not node.dyn_args
            and not node.dyn_kwargs
        ):
            return self.strings.str_format(
                base.const, args, {kw.key: self.expr(kw.value, frame) for kw in node.kwargs}, node
            )
        stringish = base.kind in {STR, CONTENT} or (base.is_const and isinstance(base.const, str))
        if (node.kwargs or node.dyn_args or node.dyn_kwargs) and (
            stringish or (base.kind == ANY and hasattr(str, method))
        ):
            raise self.emit.fail(node, f".{method}() with keyword or unpacked arguments")
        if stringish:
            return self.strings.string_method(method, base, args, node)
        if base.kind == ANY and hasattr(str, method) and not hasattr(dict, method) and not hasattr(list, method):
            # a method only strings have: Jinja fails on any other value
            self.emit.warn(
                node,
                f".{method}() of an untyped value",
                "Jinja fails where it is not a string; here it applies to str() of the value",
            )
            return self.strings.string_method(method, self.strings.untyped_str(base, node), args, node)
        return None

    def method_of_nothing(self, node: nodes.Call, base: Value, method: str) -> Value | None:
        """A method of a value surely undefined or None: Jinja fails there, so no path that
        renders reaches it; rendered as an empty value, with a warning. None for any other value."""
        if base.kind == UNDEF and not base.facts.maybe_undefined:
            self.emit.warn(
                node,
                f"calling .{method}() of an undefined value",
                "Jinja fails there; rendered as an empty value instead",
            )
            return UNDEFINED
        if base.kind == NONE and not hasattr(None, method):
            # a variable only ever None (or unset): no path reaches here without Jinja failing
            self.emit.warn(
                node, f"calling .{method}() of None", "Jinja fails there; rendered as an empty value instead"
            )
            return UNDEFINED
        return None

    def mapping_method_call(self, node: nodes.Call, base: Value, method: str, args: list[Value]) -> Value | None:
        """`.items()`, `.keys()` and `.get(key[, default])` of a mapping: a view looped over or
        the value at a constant key; None for any other method."""
        if method == "items" and (base.kind in {PROPS, ARGS} or base.kind in toolschema.KEY_ORDER) and not args:
            return Value(base.code, base.kind, facts=replace(base.facts, items=True))
        if method == "items" and base.kind == ANY and not args:
            self.emit.warn(
                node, ".items() of an untyped mapping", "keys come out sorted (Ollama decodes it into a Go map)"
            )
            return Value(base.code, ANY, facts=replace(base.facts, items=True))
        if method == "keys" and base.kind in toolschema.KEY_ORDER and not args:
            return base  # a dict iterates as its keys
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
                self.emit.warn(
                    node,
                    f".get(key, {default.const!r}) of an untyped value",
                    "a missing key gives Undefined: it loops, counts and tests like the empty default, but prints as '' and is not defined",
                )
                return self.access.attr(base, args[0].const, node)
            return self.access.untyped_get(base, args[0].const, default, node)
        if method == "get" and args and args[0].is_const:
            value = self.access.attr(base, args[0].const, node)
            if value.kind == UNDEF and not value.facts.maybe_undefined:
                return args[1] if len(args) > 1 else const(None)  # dict.get of a missing key
            return value
        if method == "keys" and base.kind in {ARGS, PROPS}:
            raise self.emit.fail(node, ".keys()")
        return None

    def strlist_method_call(self, node: nodes.Call, base: Value, method: str, args: list[Value]) -> Value | None:
        """`.append(x)` and `.pop()` of a list of strings built at run time; None otherwise."""
        if base.kind == STRLIST and method == "append" and len(args) == 1:
            strlists.append(self.emit, base.code, self.access.strlist_item(args[0], node))
            return const(None)
        if (
            base.kind == STRLIST
            and method == "pop"
            and all(a.is_const for a in args)
            and [a.const for a in args] in ([], [0], [-1])
        ):
            which = args[0].const if args else -1
            return Value(strlists.element(self.emit, base.code, which, var=base.code), STR)
        return None
