"""The passes over the written template, in the order they run: the one list (`PASSES`) from
the translator's tree to the tree that is printed.

Each pass is a function of the `Written` template, reading and changing its trees in place;
none reads Go text (they ask the IR nodes the actions were written from). The order matters:
guards coalesce before the prologue is placed (the prologue holds none), constants are shared
in the main template once the prologue is in it, defines are merged before their constants
are shared, and a negated `if` is inverted last, over the defines and the body together.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from .actions import coalesce_guards
from .go import tree
from .go.sharing import merge_identical_defines, share_constants, share_constants_in_defines
from .ops.conditions import invert_negated_ifs


@dataclass
class Written:
    """A translation as the passes see it: the main template's tree, each helper `define`'s tree
    by its name, the prefill prologue (empty when no message is continued) and whether output
    is guarded for a prefill (`actions.GUARD`)."""

    body: list[tree.Node]
    helpers: dict[str, list[tree.Node]]
    prologue: list[tree.Node]
    prefill_guarded: bool


def guards_coalesced(written: Written) -> None:
    """One prefill guard around a block that holds several (`actions.coalesce_guards`)."""
    if written.prefill_guarded:
        coalesce_guards(written.body)


def prologue_placed(written: Written) -> None:
    """The prefill's variables declared before the body that reads them."""
    written.body[:0] = written.prologue


def constants_shared(written: Written) -> None:
    """Long constants of the main template read from one variable (`sharing.share_constants`);
    defines cannot see the template's variables, so only the body."""
    share_constants(written.body)


def defines_merged(written: Written) -> None:
    """Macro defines written alike kept once, their callers calling the one kept."""
    written.helpers = merge_identical_defines(written.helpers, written.body)


def constants_shared_in_defines(written: Written) -> None:
    """Long constants of each define read from a variable declared at its top."""
    for helper in written.helpers.values():
        share_constants_in_defines(helper)


def defines_placed(written: Written) -> None:
    """The defines written before the body, as the template is printed."""
    written.body[:0] = [node for helper in written.helpers.values() for node in helper]
    written.helpers = {}


def negated_ifs_inverted(written: Written) -> None:
    """`{{if not X}}A{{end}}` as `{{if X}}{{else}}A{{end}}` (`conditions.invert_negated_ifs`)."""
    invert_negated_ifs(written.body)


Pass = Callable[[Written], None]

#: every pass, in the order it runs
PASSES: tuple[Pass, ...] = (
    guards_coalesced,
    prologue_placed,
    constants_shared,
    defines_merged,
    constants_shared_in_defines,
    defines_placed,
    negated_ifs_inverted,
)


def run_passes(written: Written) -> list[tree.Node]:
    """The tree printed for `written`, after every pass."""
    for step in PASSES:
        step(written)
    return written.body
