"""The written Go template read as a tree of its blocks (convert/go/tree.py), and the passes
over it: what a pass relies on is that the tree pairs every `else` and `end` with its block
and gives back the very text it read."""

from __future__ import annotations

from pathlib import Path

import pytest

from ollama_fc.convert import convert
from ollama_fc.convert.actions import CUT_NODE, GUARD, coalesce_guards
from ollama_fc.convert.go import ir
from ollama_fc.convert.go.tree import (
    Act,
    Action,
    Block,
    Generated,
    Mark,
    Text,
    blocks,
    build,
    heads,
    parse,
    printed,
    printed_all,
    render,
)
from ollama_fc.errors import ConversionError
from tests.shared_data import SHARED, missing

CORPUS = sorted((SHARED / "corpus" / "templates").glob("*.jinja"))

NESTED = (
    '{{ $x := 1 }}a{{ if $y }}b{{ range $i, $m := .Messages }}{{ "}}" }}{{ end }}'
    "{{ else if $z }}c{{ else }}d{{ end }}e"
    '{{ define "f" }}{{ with .Name }}{{ . }}{{ end }}{{ end }}'
)


def test_blocks_hold_their_branches_and_the_text_comes_back() -> None:
    tree = parse(NESTED)
    assert render(tree) == NESTED
    assert [type(node).__name__ for node in tree] == ["Action", "str", "Block", "str", "Block"]
    outer = tree[2]
    assert isinstance(outer, Block) and outer.code == "if $y"
    assert [branch.raw for branch in outer.branches] == ["{{ else if $z }}", "{{ else }}"]
    assert [block.keyword for block in blocks(tree)] == ["range", "if", "with", "define"]  # innermost first


def test_no_piece_of_the_translators_output_is_text_to_python() -> None:
    """A piece is asked what it prints (`printed`), never joined or measured as a `str`: none
    is one, so mypy tells an action, literal text and a plan's mark apart."""
    assert not any(issubclass(kind, str) for kind in (Act, Text, Mark))
    assert [printed(piece) for piece in (Act("end"), Text("a"), Mark("used", 1))] == ["{{ end }}", "a", ""]


def test_typed_pieces_build_the_tree_their_text_parses_to() -> None:
    """The translator's pieces are read as they are typed (an Act is one action, a Text is
    text, a Mark a node that prints nothing); text split across pieces is one node."""
    pieces = [Act("$x := 1"), Text("a"), Act("if $y"), Text("b"), Mark("used", 1), Text("c"), Act('"}}"')]
    pieces += [Act("else"), Text("d"), Act("end"), Text("e")]
    text = printed_all(pieces)
    assert text == '{{ $x := 1 }}a{{ if $y }}bc{{ "}}" }}{{ else }}d{{ end }}e'
    built = build(pieces)
    assert render(built) == text
    block = built[2]
    assert isinstance(block, Block) and block.body[:3] == ["b", Mark("used", 1), "c"]  # a node of its own
    assert build([piece for piece in pieces if not isinstance(piece, Mark)]) == parse(text)


GENERATED = Generated(
    (
        ir.Define("f"),
        ir.Open("if", ir.pipe_of(ir.Variable("$y"))),
        "b",
        ir.Else(),
        ir.Template("g", ir.pipe_of(ir.Dot())),
        ir.End(),
        ir.End(),
    )
)


def test_a_generated_helper_is_the_tree_its_text_parses_to() -> None:
    """A helper built as IR gives the tree its text would lex to, each action carrying its node."""
    built = GENERATED.tree()
    assert built == parse(GENERATED.text)
    assert GENERATED.text == '{{ define "f" }}{{ if $y }}b{{ else }}{{ template "g" . }}{{ end }}{{ end }}'
    assert [head.written for head in heads(built)] == [
        item for item in GENERATED.items[:5] if not isinstance(item, str)
    ]
    assert list(GENERATED.calls()) == ["g"]


def test_a_generated_helper_is_a_fresh_tree_each_time() -> None:
    first = GENERATED.tree()
    block = first[0]
    assert isinstance(block, Block)
    block.raw, block.body[:] = '{{ define "h" }}', []
    assert render(GENERATED.tree()) == GENERATED.text


def test_a_stray_end_stays_an_action() -> None:
    assert parse("a{{ end }}") == ["a", Action("{{ end }}")]
    assert render(parse("{{ if $x }}open")) == "{{ if $x }}open"


def coalesced(template: str) -> str:
    top = parse(template)
    coalesce_guards(top)
    return render(top)


def test_guards_coalesce_around_the_outermost_block_without_a_cut() -> None:
    two = f"{{{{ if $a }}}}{GUARD.text}x{{{{ end }}}}{GUARD.text}y{{{{ end }}}}{{{{ end }}}}"
    assert coalesced(two) == f"{GUARD.text}{{{{ if $a }}}}xy{{{{ end }}}}{{{{ end }}}}"
    nested = f"{{{{ range $m := .Messages }}}}{two}{{{{ end }}}}"
    assert (
        coalesced(nested)
        == f"{GUARD.text}{{{{ range $m := .Messages }}}}{{{{ if $a }}}}xy{{{{ end }}}}{{{{ end }}}}{{{{ end }}}}"
    )
    cut = ir.render(CUT_NODE)  # (a cut read from text is a cut as much as one written from its node)
    with_cut = f"{{{{ if $a }}}}{GUARD.text}x{{{{ end }}}}{cut}{GUARD.text}y{{{{ end }}}}{{{{ end }}}}"
    assert coalesced(with_cut) == with_cut  # a block that may cut the prefill keeps its guards
    one = f"{{{{ if $a }}}}{GUARD.text}x{{{{ end }}}}{{{{ end }}}}"
    assert coalesced(one) == one


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.stem)
def test_every_corpus_conversion_reads_as_a_tree(path: Path) -> None:
    """Every `else` and `end` the converter writes closes a block the tree saw open."""
    if not CORPUS:
        missing("reference data shared/corpus not found next to the repository")
    try:
        template = convert(path).template
    except ConversionError:
        return  # refused: nothing written
    tree = parse(template)
    assert render(tree) == template
    stray = [node.raw for node in _actions(tree) if node.code.split(" ", 1)[0] in {"else", "end"}]
    assert stray == []
    # every action reads into IR nodes (convert/go/ir.py) that write it again, byte for byte
    assert [ir.render(head.node, compact=True) for head in heads(tree)] == [head.raw for head in heads(tree)]


def _actions(tree: list[object]) -> list[Action]:
    found: list[Action] = []
    for node in tree:
        if isinstance(node, Action):
            found.append(node)
        elif isinstance(node, Block):
            for body in (node.body, *(branch.body for branch in node.branches)):
                found += _actions(list(body))
    return found
