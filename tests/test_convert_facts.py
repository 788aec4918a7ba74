"""What the translator knows of a value (convert/ops/values.py): `Facts` cannot be changed by
anything holding them, two paths' facts join into what holds on either, and a Value changes in
place only where a variable's slot takes a new value (`Value.take`)."""

from __future__ import annotations

import ast
import re
from dataclasses import fields
from pathlib import Path

import pytest

from ollama_fc.convert.go import ir
from ollama_fc.convert.ops.values import NS, STR, Facts, Value, const

CONVERTER = Path(__file__).resolve().parent.parent / "ollama_fc" / "convert"


def test_facts_hold_no_container_a_holder_can_change() -> None:
    given = {"x": const("a")}
    facts = Facts(attrs=given, fields={"k": const(1)}, text_attrs=("x",))
    given["y"] = const("b")  # the caller's dict is copied, not shared
    assert set(facts.attrs or {}) == {"x"}
    with pytest.raises(TypeError):
        facts.attrs["z"] = const("c")  # type: ignore[index]
    with pytest.raises(TypeError):
        facts.fields["k"] = const(2)  # type: ignore[index]


def test_a_join_may_be_what_either_path_may_be_and_keeps_what_this_side_knows() -> None:
    this = Facts(maybe_none=True, final=ir.Variable("$f"), defined_flag=ir.Variable("$x_defined"))
    other = Facts(maybe_undefined=True, maybe_negative=True, final=ir.Variable("$g"))
    joined = this.join(other)
    assert (joined.maybe_undefined, joined.maybe_none, joined.maybe_negative) == (True, True, True)
    assert (joined.final, joined.defined_flag) == (ir.Variable("$f"), ir.Variable("$x_defined"))
    assert Facts().join(Facts()) == Facts()


#: the facts that hold text, each Jinja's (names of attributes, keys, filters and methods, a
#: constant separator, a concatenation's constant text), never Go code
JINJA_TEXT_FACTS = {"attrs", "concat", "key_tests", "method", "path", "sep", "text_attrs"}


def test_facts_hold_go_code_as_ir_not_as_text() -> None:
    """A fact that is Go code (a flag, a condition, an operand) holds its node (an `ir.Variable`,
    an `ir.Operand`, a Value): no reader reads it back, and mypy tells it from text."""
    textual = {f.name for f in fields(Facts) if re.search(r"\bstr\b", str(f.type))}
    assert textual == JINJA_TEXT_FACTS


def test_a_slot_takes_a_whole_new_value() -> None:
    slot = Value("$x", STR, facts=Facts(maybe_none=True))
    slot.take(Value("$x", NS, facts=Facts(attrs={})))
    assert (slot.code, slot.kind, slot.facts.maybe_none, dict(slot.facts.attrs or {})) == ("$x", NS, False, {})


def test_no_value_is_changed_field_by_field_in_the_converter() -> None:
    """Only `Value.take` writes a Value's fields: an assignment to `x.facts`, `x.kind`,
    `x.const` or `x.code` of anything but `self` is a value changed in place behind its holders."""
    written = []
    for path in sorted(CONVERTER.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        constructors = [
            f for f in ast.walk(tree) if isinstance(f, ast.FunctionDef) and f.name in ("__new__", "__init__")
        ]
        building = {id(node) for f in constructors for node in ast.walk(f)}  # a new object's own fields
        for node in ast.walk(tree):
            if id(node) in building:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else []
            if isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            for target in targets:
                for part in target.elts if isinstance(target, ast.Tuple) else [target]:
                    if (
                        isinstance(part, ast.Attribute)
                        and part.attr in {"facts", "kind", "const", "code"}
                        and not (isinstance(part.value, ast.Name) and part.value.id == "self")
                    ):
                        written.append(f"{path.relative_to(CONVERTER)}:{node.lineno}")
    assert written == []
