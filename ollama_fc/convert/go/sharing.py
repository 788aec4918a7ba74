"""What the written template shares, as passes over its tree (go/tree.py): long string
constants repeated by its actions read from one variable, and macro defines written alike
merged into one.
"""

from __future__ import annotations

from dataclasses import replace

from . import ir, irtools, tree

#: string constants at least this long (the lookup tables of strips, case changes and escapers)
#: are declared once when an action repeats them
SHARED_CONSTANT_CHARS = 64
#: the defines written for macros are named so (`ofc_macro_f_2`)
MACRO_DEFINE = "ofc_macro_"


def share_constants(body: list[tree.Node]) -> None:
    """Each long string constant the actions of `body` repeat read from one variable, declared
    before everything else in `body`.

    The main template's variables declared at its top are visible in every block below, so a
    table written at every strip or case change (256 bytes, about 1 KB as a literal) is lexed
    and unquoted once per parse instead of once per use. A variable holds the same string as
    the constant, so every function given it sees the same value. `define` bodies cannot see
    the template's variables: the main template and each define's body are passed separately.
    """
    long = [(node, literals) for node in tree.heads(body) if (literals := _long_literals(node.node))]
    counts: dict[str, int] = {}
    for _, literals in long:
        for quoted in literals:
            counts[quoted] = counts.get(quoted, 0) + 1
    names = {literal: f"$ofc_k{n}" for n, literal in enumerate(sorted(c for c in counts if counts[c] > 1), 1)}
    if not names:
        return

    def shared(node: ir.Node) -> ir.Node | None:
        if isinstance(node, ir.String) and node.quoted in names:
            return ir.Variable(names[node.quoted])
        return None

    for node, literals in long:
        if any(quoted in names for quoted in literals):
            tree.rewrite(node, irtools.transform(node.node, shared))
    declared = (ir.Action(ir.operand_pipe(ir.String(literal)).declaring(name)) for literal, name in names.items())
    body[:0] = [tree.Action.of(node) for node in declared]


def _long_literals(action: ir.ActionNode) -> list[str]:
    """The long interpreted string literals `action` holds, as written (a raw one is left)."""
    return [s.quoted for s in action.strings() if len(s.quoted) >= SHARED_CONSTANT_CHARS and not s.backquoted]


def share_constants_in_defines(helper: list[tree.Node]) -> None:
    """`share_constants` applied to the body of each `define` in `helper`: a variable declared
    at the top of a define is visible in all of that define."""
    for block in helper:
        if isinstance(block, tree.Block) and block.keyword == "define":
            share_constants(block.body)


Helpers = dict[str, list[tree.Node]]


def merge_identical_defines(helpers: Helpers, body: list[tree.Node]) -> Helpers:
    """One `define` for the macro defines written alike but for the numbers of their temporary
    variables and the names of the alike defines they call: copies made for arguments known
    differently (a value that may be unset, one that may not) that came out the same are parsed
    once. Defines calling each other are told apart as a partition refined until stable: first
    by their code with the numbers of temporaries and callees left out, then by the classes of
    the defines they call, in order. `body` and the helpers kept (each by its name, as a tree)
    call the one kept of each class, in place; the helpers kept are returned."""
    names = [name for name in helpers if name.startswith("ofc_macro_")]
    if len(names) < 2:
        return helpers  # (nothing to merge)
    calls = {
        name: [
            call for node in tree.heads(helpers[name]) for call in node.node.calls() if call.startswith(MACRO_DEFINE)
        ]
        for name in names
    }
    shapes: dict[tuple[str | tree.Mark, ...], int] = {}
    classes = {name: shapes.setdefault(_define_shape(helpers[name]), len(shapes)) for name in names}
    while True:
        keys: dict[tuple[int, tuple[int, ...]], int] = {}
        refined = {
            name: keys.setdefault((classes[name], tuple(classes[c] for c in calls[name] if c in classes)), len(keys))
            for name in names
        }
        if len(keys) == len(set(classes.values())):
            break
        classes = refined
    first: dict[int, str] = {}
    renamed = {name: first.setdefault(classes[name], name) for name in names}
    renamed = {name: kept for name, kept in renamed.items() if kept != name}
    if not renamed:
        return helpers
    kept = {name: helper for name, helper in helpers.items() if name not in renamed}

    def rename(node: ir.Node) -> ir.Node | None:
        if isinstance(node, ir.Template) and node.name in renamed:
            return replace(node, name=renamed[node.name])
        return None

    for node in (*tree.heads(body), *(node for helper in kept.values() for node in tree.heads(helper))):
        if any(call in renamed for call in node.node.calls()):
            tree.rewrite(node, irtools.transform(node.node, rename))
    return kept


def _define_shape(helper: list[tree.Node]) -> tuple[str | tree.Mark, ...]:
    """A define as written, without its name and the numbers of its temporaries (in order of
    appearance) and of the macro defines it calls; its marks as they are (two defines marked
    differently are not shared)."""
    numbers: dict[str, str] = {}

    def renumbered(name: str) -> str:
        return numbers.setdefault(name, f"$_t{len(numbers)}") if irtools.is_temporary(name) else name

    def callee(node: ir.Node) -> ir.Node | None:
        if isinstance(node, ir.Template) and node.name.startswith(MACRO_DEFINE):
            return replace(node, name=node.name.rsplit("_", 1)[0])
        return None

    def shaped(head: tree.Action | tree.Block | tree.Branch) -> str:
        node, uses = head.node, head.node.uses()  # (found once per action: rewrite only what changes)
        if any(name.startswith(MACRO_DEFINE) for name in uses.calls):
            node = irtools.transform(node, callee)
        if any(irtools.is_temporary(name) for names in (uses.reads, uses.declares, uses.assigns) for name in names):
            node = irtools.rename_variables(node, renumbered)
        return ir.render(node)

    out: list[str | tree.Mark] = []

    def walk(body: list[tree.Node], top: bool) -> None:
        for node in body:
            if isinstance(node, (str, tree.Mark)):
                out.append(node)
            elif isinstance(node, tree.Action):
                out.append(shaped(node))
            else:
                if not (top and node.keyword == "define"):  # (the define's name left out)
                    out.append(shaped(node))
                walk(node.body, False)
                for branch in node.branches:
                    out.append(shaped(branch))
                    walk(branch.body, False)
                out.append(node.end)

    walk(helper, True)
    return tuple(out)
