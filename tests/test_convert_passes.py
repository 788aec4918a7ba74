"""The passes over the written template (convert/passes.py), each alone and in their order: what
each leaves of a small tree, and that the order keeps every variable where it is visible."""

from __future__ import annotations

from ollama_fc.convert.actions import GUARD
from ollama_fc.convert.go import tree
from ollama_fc.convert.go.sharing import SHARED_CONSTANT_CHARS
from ollama_fc.convert.passes import (
    PASSES,
    Written,
    constants_shared,
    constants_shared_in_defines,
    defines_merged,
    defines_placed,
    guards_coalesced,
    negated_ifs_inverted,
    prologue_placed,
    run_passes,
)

TABLE = '"' + "x" * SHARED_CONSTANT_CHARS + '"'
TWICE = f"{{{{ $a := index {TABLE} 1 }}}}{{{{ $b := index {TABLE} 2 }}}}"


def written(body: str, helpers: dict[str, str] | None = None, prologue: str = "", guarded: bool = False) -> Written:
    return Written(
        tree.parse(body),
        {name: tree.parse(text) for name, text in (helpers or {}).items()},
        tree.parse(prologue) if prologue else [],
        guarded,
    )


def test_constants_shared_declares_a_repeated_long_constant_once() -> None:
    shared = written(TWICE + f'{{{{ $c := {TABLE[:-10]}" }}}}')
    constants_shared(shared)
    text = tree.render(shared.body)
    assert text.startswith(f"{{{{ $ofc_k1 := {TABLE} }}}}"), text
    assert text.count(TABLE) == 1 and "index $ofc_k1 1" in text and "index $ofc_k1 2" in text
    once = written(f"{{{{ $a := index {TABLE} 1 }}}}")
    constants_shared(once)
    assert tree.render(once.body) == f"{{{{ $a := index {TABLE} 1 }}}}"  # used once: left in place


def test_constants_shared_in_defines_declares_them_inside_each_define() -> None:
    helper = written("", {"ofc_f": f'{{{{ define "ofc_f" }}}}{TWICE}{{{{ end }}}}'})
    constants_shared_in_defines(helper)
    text = tree.render(helper.helpers["ofc_f"])
    assert text.startswith(f'{{{{ define "ofc_f" }}}}{{{{ $ofc_k1 := {TABLE} }}}}'), text


def test_guards_coalesce_only_when_output_is_guarded() -> None:
    body = f"{{{{ if $a }}}}{GUARD}x{{{{ end }}}}{GUARD}y{{{{ end }}}}{{{{ end }}}}"
    unguarded = written(body)
    guards_coalesced(unguarded)
    assert tree.render(unguarded.body) == body
    guarded = written(body, guarded=True)
    guards_coalesced(guarded)
    assert tree.render(guarded.body) == f"{GUARD}{{{{ if $a }}}}xy{{{{ end }}}}{{{{ end }}}}"


def test_prologue_and_defines_are_placed_before_the_body() -> None:
    placed = written("body", {"ofc_f": '{{ define "ofc_f" }}f{{ end }}'}, prologue="{{ $ofc_go := true }}")
    prologue_placed(placed)
    defines_placed(placed)
    assert tree.render(placed.body) == '{{ define "ofc_f" }}f{{ end }}{{ $ofc_go := true }}body'
    assert placed.helpers == {}


def test_defines_written_alike_are_merged_and_their_callers_follow() -> None:
    alike = {
        "ofc_macro_f_1": '{{ define "ofc_macro_f_1" }}{{ $_1 := .Name }}{{ $_1 }}{{ end }}',
        "ofc_macro_f_2": '{{ define "ofc_macro_f_2" }}{{ $_7 := .Name }}{{ $_7 }}{{ end }}',
    }
    merged = written('{{ template "ofc_macro_f_1" . }}{{ template "ofc_macro_f_2" . }}', alike)
    defines_merged(merged)
    assert list(merged.helpers) == ["ofc_macro_f_1"]
    assert tree.render(merged.body) == '{{ template "ofc_macro_f_1" . }}{{ template "ofc_macro_f_1" . }}'


def test_negated_ifs_are_inverted() -> None:
    negated = written("{{ if not $x }}a{{ end }}")
    negated_ifs_inverted(negated)
    assert tree.render(negated.body) == "{{ if $x }}{{ else }}a{{ end }}"


def test_in_order_a_define_never_reads_a_variable_of_the_main_template() -> None:
    """Constants are shared in the body before the defines join it: a define cannot see the
    template's variables, so each keeps (or declares) its own."""
    assert PASSES.index(constants_shared) < PASSES.index(defines_placed)
    both = written(TWICE, {"ofc_f": f'{{{{ define "ofc_f" }}}}{{{{ $x := index {TABLE} 3 }}}}{{{{ end }}}}'})
    text = tree.render(run_passes(both))
    define, _, body = text.partition("{{ end }}")
    assert f"index {TABLE} 3" in define and "$ofc_k" not in define, text
    assert body.startswith(f"{{{{ $ofc_k1 := {TABLE} }}}}"), text
