"""Where the Go template text goes: the output buffer, fresh variables, captures into a
variable, the prefill guard, and one-line errors and warnings naming the construct.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from jinja2 import nodes

from ...errors import ConversionError
from ..actions import CUT_NODE, GUARD_NODE
from ..go import ir, irtools, tree
from ..go.calls import GoCall, expression_of, go_eq, go_len, go_variable, operand_of, read_operand, starts_with
from ..go.helperbody import literal
from ..go.verbs import Verbs
from ..limits import Budget, Limits
from ..result import ConversionWarning
from .conditions import simplified_condition
from .values import (
    BOUND_METHOD,
    LIST,
    LITERAL_OR,
    LOOP,
    MAPPED,
    METHOD,
    NO_FACTS,
    NONE,
    SELECT,
    SPLIT,
    STR,
    UNDEF,
    Facts,
    Value,
)

#: `if true`: an inlined macro's block, no branch at run time
IF_TRUE = ir.Open("if", ir.operand_pipe(ir.Bool(True)))
#: `var = value`: a variable and the expression it is given
Assignment = tuple[str, ir.Expression]
#: the prefill's flags: an assistant message is continued (`$ofc_open`), its text not yet cut
#: (`$ofc_go`); the final message (`$ofc_final`)
OFC_OPEN, OFC_GO, FINAL_MESSAGE = ir.Variable("$ofc_open"), ir.Variable("$ofc_go"), ir.Variable("$ofc_final")
ZERO, EMPTY_STRING = ir.Number.of(0), ir.String.of("")
#: the format that appends a value to a captured text: `printf "%s%v" $text value`
APPENDED = ir.String.of("%s%v")


@dataclass(frozen=True)
class Checkpoint:
    """What writing output adds besides the output itself, at one moment (`Emit.checkpoint`)."""

    helpers: dict[str, tree.Helper]
    warnings: int
    spent: int
    counter: int
    flow_epoch: int


class Emit(Verbs[tree.Act]):
    """The output buffer and what writes to it, shared by every operation the Jinja lowers to.

    Each operation is a service given this Emit (and the services it needs): Access, Logic,
    ToJson, Strings, Views, Lowering (the filters) and Comparisons; the translator
    (`translate/`) composes them.
    """

    def __init__(self, special_tokens: dict[str, str], tool_role: str, limits: Limits | None = None) -> None:
        #: the tokenizer's special tokens (`bos_token`...), constants of the template
        self.tokens = special_tokens
        #: the role name this template gives tool results, when it is not Ollama's `tool`
        self.tool_role = tool_role
        self.out: list[tree.Piece] = []
        #: what is left of the output size and time this conversion may take
        self.budget = Budget(limits or Limits())
        #: the statements being translated, outermost first (an exceeded limit names one)
        self.visiting: list[nodes.Node] = []
        self.warnings: list[ConversionWarning] = []
        self.helpers: dict[str, tree.Helper] = {}
        self.counter = 0
        #: Go variables certain to hold an `int` (loop indexes): `eq $i 0` in a condition is `not $i`
        self.int_vars: set[str] = set()
        #: advances at every run-time branch point (`if`, `else`, `range`, `end`...): a namespace
        #: attribute set to a constant is known until the epoch moves on
        self.flow_epoch = 0
        self.open_blocks: list[bool] = []
        #: the Go variable output goes to while a `{% set x %}` body or a macro used as a value runs
        self.sink: str | None = None
        self.sink_construct = ""
        #: assistant prefill: once the final message's text may have been printed, output is
        #: guarded by `$ofc_go` (open while `guard_open`); see `print_final_text`
        self.prefill_armed = False
        self.guard_open = False
        #: captured text variables that may hold the final message's text (see `capture`)
        self.capture_finals: set[str] = set()
        #: the final-text flags some `set_final` assigned (not only declared): a capture whose
        #: flag is among them may hold the final message's text
        self.finals_set: set[str] = set()
        #: whether some flag's condition reads the prologue's variables (`$ofc_...`), which the
        #: template then declares even where no final text is printed (`prefill_armed`)
        self.final_tracked = False
        #: the BOS text to leave out when the template prints it before anything else (see
        #: `text`): the model's runner adds BOS itself, a literal one would make two
        self.leading_bos = ""
        #: whether output may have been written on the path being translated (a leading BOS is
        #: only the first output), and for each open block: its keyword, whether output was
        #: written before it, and whether some branch of it wrote any
        self.printed = False
        self.printed_blocks: list[tuple[str, bool, bool]] = []
        #: the statement being translated (text has no node of its own to name in a warning)
        self.statement: nodes.Node | None = None

    def fail(self, node: nodes.Node, construct: str, why: str = "has no Go template equivalent") -> ConversionError:
        return ConversionError(f"line {getattr(node, 'lineno', '?')}: {construct} {why}")

    def warn(self, node: nodes.Node | None, construct: str, effect: str) -> None:
        line = getattr(node, "lineno", None)
        if not any(w.construct == construct and w.line == line for w in self.warnings):
            self.warnings.append(ConversionWarning(construct=construct, line=line, effect=effect))

    def charge(self, code: str) -> None:
        """Count output against the limits (see `limits.py`); stop once one is exceeded."""
        self.charge_size(len(code))

    def charge_size(self, size: int) -> None:
        """`charge` of code `size` characters long."""
        why = self.budget.spend(size)
        if why is not None:
            raise self.over_limit(why)

    def over_limit(self, why: str) -> ConversionError:
        """The one-line error of an exceeded limit, naming the innermost loop being unrolled
        (what multiplies the output), else the statement being translated."""
        loops = [node for node in self.visiting if isinstance(node, nodes.For)]
        if loops:
            return self.fail(loops[-1], "the {% for %} loop", why)
        if self.visiting:
            node = self.visiting[-1]
            name = "output" if isinstance(node, nodes.Output) else f"{{% {type(node).__name__.lower()} %}}"
            return self.fail(node, f"the {name}", why)
        return ConversionError(f"the template {why}")

    def constant(self, node: nodes.Expr, value: Value) -> Any:
        """The constant an argument must be (`tojson(indent=2)`, `selectattr('name')`)."""
        if not value.is_const:
            raise self.fail(node, "a non-constant argument where a constant is needed")
        return value.const

    def temp(self) -> str:
        """A fresh Go variable's name (`$_3`), carrying its node (see `GoOperand`)."""
        self.counter += 1
        return go_variable(f"$_{self.counter}")

    def action(self, code: str) -> tree.Act:
        """Write the action `code` (an assignment the typed verbs could not write as IR; a
        block's opening goes through `opening`, a condition through `if_`); the piece written
        (see `tree.Act`)."""
        self.close_guard()
        return self.write_action(code)

    def opening(self, word: str, code: str) -> tree.Act:
        """Write the action `code` opening a `word` block (a `range` not written as IR)."""
        self.close_guard()
        self.track_word(word)
        return self.write_action(code)

    def write(self, node: ir.ActionNode) -> tree.Act:
        """Write the action `node` (an `if`'s or `else if`'s condition with fewer calls)."""
        if isinstance(node, (ir.Open, ir.Else)) and node.word == "if" and node.pipe is not None:
            return self.if_(node.pipe, "if" if isinstance(node, ir.Open) else "else if")
        self.close_guard()
        self.track_word(node.keyword)  # (an `if true` is written by `if_`)
        return self.write_node(node)

    def if_(self, condition: str | ir.Operand, keyword: str = "if") -> tree.Act:
        """Write `{{ if condition }}` (or `else if`, the `keyword`); only the condition's truth
        counts, so it is written with fewer calls (`simplified_condition`), read from the calls a
        composed condition (`GoCall`) carries."""
        self.close_guard()
        constant_true = condition in ("true", ir.Bool(True), IF_TRUE.pipe)
        self.track_word("if" if keyword == "if" else "else", not (keyword == "if" and constant_true))
        folded = simplified_condition(condition, self.int_vars)
        if folded is None:
            return self.write_action(f"{keyword} {condition}")
        return self.write_node(ir.Open("if", folded) if keyword == "if" else ir.Else("if", folded))

    def write_action(self, code: str) -> tree.Act:
        """Append the action `code` (its flow already tracked)."""
        self.charge(code)
        written = tree.Act(code)
        self.out.append(written)
        return written

    def write_node(self, node: ir.ActionNode) -> tree.Act:
        """Append the action `node` (its flow already tracked)."""
        written = tree.Act.of(node)
        self.charge_size(len(written.code))
        self.out.append(written)
        return written

    def track_word(self, word: str, runtime: bool = True) -> None:
        """Count the run-time branch points (see `flow_epoch`) at an action starting with `word`:
        a value set since the last one is certainly what a read sees; `if true` (an inlined
        macro's block, not `runtime`) is no branch."""
        if word in {"if", "range", "with"}:
            self.open_blocks.append(runtime)
            self.flow_epoch += runtime
            self.printed_blocks.append((word, self.printed, self.printed))
        elif word == "end" and self.open_blocks:
            self.flow_epoch += self.open_blocks.pop()
            some_branch = self.printed_blocks.pop()[2]
            self.printed = self.printed or some_branch
        elif word in {"else", "break", "continue"}:
            self.flow_epoch += 1
            if word == "else" and self.printed_blocks:
                opened, before, some_branch = self.printed_blocks[-1]
                self.printed_blocks[-1] = (opened, before, some_branch or self.printed)
                self.printed = before  # the next branch starts where the `if` did

    def show(self, code: tree.Piece) -> None:
        """Template output (text or a printing action; a replayed snippet's plan marks among
        them); silent once an assistant prefill has ended."""
        if self.prefill_armed and not self.guard_open:
            self.out.append(tree.Act.of(GUARD_NODE))  # (true until the prefill is cut)
            self.guard_open = True
        self.charge(tree.printed(code))
        self.printed = True
        self.out.append(code)

    def close_guard(self) -> None:
        if self.guard_open:
            self.guard_open = False
            self.out.append(tree.Act.of(ir.End()))

    def set_final(self, flag: str, condition: str | ir.Operand, declare: bool = False) -> None:
        """Set the Go flag `flag`: does a value hold the prefilled final message's text?

        The flags are read only where `$ofc_open` holds (see `print_final_text`), so a condition
        that costs a function call is evaluated only then. The `if` is bookkeeping, not a branch
        of the template: it is written past `track_word` so what is known about values stays known.
        """
        node = read_operand(condition)
        simple = isinstance(node, (ir.Variable, ir.Bool))
        self.final_tracked |= not simple or (isinstance(node, ir.Variable) and node.name.startswith("$ofc_"))
        if declare:
            self.declare(flag, condition if simple else "false")
        elif simple:
            self.assign(flag, condition)
        if simple:
            if not declare:
                self.finals_set.add(flag)
            return
        self.finals_set.add(flag)
        self.close_guard()
        known = expression_of(condition) if isinstance(condition, str) else condition
        assigned = (
            tree.Act(f"{flag} = {condition}")
            if known is None
            else tree.Act.of(ir.Action(ir.pipe_of(known, (flag,), is_assign=True)))
        )
        written = [tree.Act.of(ir.Open("if", ir.operand_pipe(OFC_OPEN))), assigned, tree.Act.of(ir.End())]
        self.charge(tree.printed_all(written))
        self.out += written

    def written_at(self, start: int, piece: tree.Piece) -> int | None:
        """Where in the output, from `start` on, the piece `piece` is (itself, not an equal one)."""
        return next((i for i in range(start, len(self.out)) if self.out[i] is piece), None)

    def put(self, code: str | ir.Operand) -> None:
        """Print a Go string or number (or append it to the variable being captured)."""
        if self.sink is None:
            known = expression_of(code) if isinstance(code, str) else code
            self.show(tree.Act.of(ir.Action(ir.pipe_of(known))) if known is not None else tree.Act(str(code)))
        elif isinstance(code, str) and expression_of(code) is None:
            self.action(f'{self.sink} = printf "%s%v" {self.sink} {code}')
        else:
            appended = operand_of(code) if isinstance(code, str) else code
            self.assign(self.sink, ir.command("printf", APPENDED, ir.Variable(self.sink), appended))

    def call_helper(self, name: str, code: str, node: nodes.Node) -> None:
        """Print through a `define` helper; Go cannot capture a helper's output in a variable."""
        if self.sink is not None:
            raise self.fail(node, self.sink_construct, "(its text needs a helper whose output Go cannot capture)")
        argument = expression_of(code)
        if argument is None:
            self.show(tree.Act(f'template "{name}" {code}'))
        else:
            self.show(tree.Act.of(ir.Template(name, ir.pipe_of(argument))))

    def text(self, data: str) -> None:
        """Literal output: `{{` cannot appear as text, and a trailing `{` would join the next action."""
        if not data:
            return
        if self.sink is not None:
            self.put(ir.String.of(data))
            return
        bos = self.leading_bos
        in_loop = any(opened == "range" for opened, _, _ in self.printed_blocks)
        if bos and not self.printed and not in_loop and data.startswith(bos):
            data = data[len(bos) :]  # the first output on this path, printed once
            self.warn(
                self.statement,
                f"leading {bos} (bos_token)",
                "left out: Ollama's runner adds BOS itself (the model's add_bos_token), the model sees one",
            )
            if not data:
                return
        for piece in literal(data):
            self.show(tree.Text(piece) if isinstance(piece, str) else tree.Act.of(piece))

    def checkpoint(self) -> Checkpoint:
        """What writing output adds besides the output itself, as it is now (see `roll_back`)."""
        return Checkpoint(dict(self.helpers), len(self.warnings), self.budget.spent, self.counter, self.flow_epoch)

    def roll_back(self, to: Checkpoint) -> None:
        """Forget what was written since `to` besides the output: helpers, warnings, the size
        charged, the temporaries counted, the branch points passed."""
        self.helpers, self.counter, self.flow_epoch = dict(to.helpers), to.counter, to.flow_epoch
        self.budget.spent = to.spent
        del self.warnings[to.warnings :]

    @contextmanager
    def writing_to(self, out: list[tree.Piece], *, fresh: bool = False, own_blocks: bool = False) -> Iterator[None]:
        """Output goes to `out` inside the `with`, and back where it went after: the one place
        that knows which of the emitter's fields belong to where output is written.

        `fresh`: `out` starts as a template's output does (no prefill armed, no guard open) but
        after something printed (a leading BOS in it stays), and that state comes back after;
        `own_blocks`: it is not inside the blocks open around it either (a define's body).
        Without them, what the code inside changes of that state stays changed.
        """
        saved_out = self.out
        saved_state = (self.prefill_armed, self.guard_open, self.printed)
        saved_blocks = (self.printed_blocks, self.open_blocks)
        self.out = out
        if fresh:
            self.prefill_armed, self.guard_open, self.printed = False, False, True
        if own_blocks:
            self.printed_blocks, self.open_blocks = [], []
        try:
            yield
        finally:
            self.out = saved_out
            if fresh:
                self.prefill_armed, self.guard_open, self.printed = saved_state
            if own_blocks:
                self.printed_blocks, self.open_blocks = saved_blocks

    def capture(self, produce: Callable[[], None], construct: str, node: nodes.Node) -> str:
        """Run `produce` with its output appended to a fresh Go string variable; that variable."""
        var = self.temp()
        self.declare(var, '""')
        # whether a prefilled final message's text went into it (declared only when some may)
        self.declare(f"{var}_final", ir.Bool(False))
        flag_at = len(self.out) - 1
        outer, outer_construct = self.sink, self.sink_construct
        self.sink, self.sink_construct = var, construct
        try:
            produce()
        finally:
            self.sink, self.sink_construct = outer, outer_construct
        if f"{var}_final" in self.finals_set:
            self.capture_finals.add(var)
        else:
            del self.out[flag_at]
        return var

    def captured(self, var: str) -> Value:
        """The text a `capture` collected, marked when it may hold the final message's text."""
        return Value(
            var, STR, facts=Facts(final=ir.Variable(f"{var}_final")) if var in self.capture_finals else NO_FACTS
        )

    def operand(self, value: Value, node: nodes.Node) -> ir.Operand | str:
        """What a Go variable holds of `value` (as IR where it is one operand): "" for None."""
        if value.kind in {SPLIT, SELECT, MAPPED, LOOP, BOUND_METHOD, LITERAL_OR, METHOD}:
            raise self.fail(node, f"a {value.kind} value stored in a variable")
        if value.is_const and value.kind == LIST:
            raise self.fail(node, "a list literal as a value")
        if value.kind in {UNDEF, NONE}:
            return EMPTY_STRING
        return value.expr

    def key_scan(self, k: str, v: str, mapping: str, key: str, *statements: Assignment) -> None:
        """Make the assignments `statements` where the Go map `mapping` (ranged as `k`, `v`) has
        the key `key`: a scan, as Go's `index` of a missing key gives the same as a key holding
        null."""
        self.keys_scan(k, v, mapping, {key: statements})

    def keys_scan(self, k: str, v: str, mapping: str, cases: dict[str, Sequence[Assignment]]) -> None:
        """`key_scan` for several keys in one scan: each key's assignments where it is found."""
        self.range_(read_operand(mapping) or mapping, k, v)
        for i, (key, statements) in enumerate(cases.items()):
            self.if_(go_eq(k, key), "else if" if i else "if")
            for var, value in statements:
                self.assign(var, value)
        self.end()
        self.end()

    def print_final_text(self, code: str, final: ir.Operand, parts: Sequence[str | Value] = ()) -> None:
        """Print message text; when it is the prefilled final message's, end the output after it.

        `final` is a Go condition true when the text comes from the final message. The cut falls
        after the last occurrence of `$ofc_cut` in this text, followed by `$ofc_tail` where the
        text goes on with it, else by `$ofc_cut` (see `prefill_prologue`). Nothing is printed
        once `$ofc_go` is false, which happens only where `$ofc_open` holds. `parts`: the
        pieces of a concatenation `code` is (constant text or Go operand), printed one by one
        where nothing is cut (no `printf` for `content + '</s>'`).
        """
        self.prefill_armed = True
        self.close_guard()
        # one `if` on a variable for every render that continues no assistant message (the
        # common case): the cut's machinery and its function calls run only when one is
        self.if_(OFC_OPEN)
        self.if_(OFC_GO)
        self.if_(final)
        message = irtools.field_of(read_operand(code), "Content")
        if message is not None and read_operand(final) == ir.call("eq", message, FINAL_MESSAGE):
            # the final message's own text: where it is cut is known (`prefill_cut`)
            self.printed_action(ir.Variable("$ofc_head"))
            self.printed_action(ir.Variable("$ofc_end"))
            self.cut()
        else:
            self.cut_search(code)
        self.else_()
        self.print_parts(code, parts)
        self.end()
        self.end()
        self.else_()  # no prefill: nothing was cut
        self.print_parts(code, parts)
        self.end()

    def print_parts(self, code: str, parts: Sequence[str | Value]) -> None:
        """Print `code`, or the pieces of the concatenation it is one by one (see `concat`)."""
        for part in parts or [Value(code, STR)]:
            if isinstance(part, str):
                if part:
                    self.printed_action(ir.String.of(part))
            elif part.code:
                self.printed_action(part.node or part.code)

    def cut_search(self, code: str) -> None:
        """Print the text `code` of the final message up to the cut, if it is found in it."""
        text = self.temp()
        self.declare(text, code)
        k, rest = self.last_cut(ir.Variable(text), "-1")
        self.if_(GoCall("ge", k, "0"))
        self.printed_action(ir.command("slice", ir.Variable(text), ZERO, ir.Variable(k)))
        self.declare(rest, ir.command("slice", ir.Variable(text), ir.Variable(k)))
        self.if_(starts_with(rest, "$ofc_tail", go_len("$ofc_tail")))
        self.printed_action(ir.Variable("$ofc_tail"))
        self.else_()
        self.printed_action(ir.Variable("$ofc_cut"))
        self.end()
        self.cut()
        self.else_()
        self.printed_action(ir.Variable(text))
        self.end()

    def cut(self) -> None:
        """`$ofc_go = false`: the prefill is cut, nothing is printed from here on."""
        self.write(CUT_NODE)

    def prefill_cut(self) -> None:
        """Where the final message's own text is cut, computed once in the prologue where
        `$ofc_open` holds: `$ofc_head` up to the last occurrence of `$ofc_cut` in it, then
        `$ofc_end`, `$ofc_tail` where the text goes on with it, else `$ofc_cut`."""
        self.if_(OFC_OPEN)
        final_text = ir.Variable("$ofc_final", ("Content",))
        k, rest = self.last_cut(final_text, "0")
        self.assign("$ofc_head", ir.command("slice", final_text, ZERO, ir.Variable(k)))
        self.declare(rest, ir.command("slice", final_text, ir.Variable(k)))
        self.assign("$ofc_end", ir.Variable("$ofc_cut"))
        self.if_(starts_with(rest, "$ofc_tail", go_len("$ofc_tail")))
        self.assign("$ofc_end", ir.Variable("$ofc_tail"))
        self.end()
        self.end()

    def last_cut(self, text: ir.Variable, none: str) -> tuple[str, str]:
        """Where `$ofc_cut` last starts in the string `text` (`none` where it does not): that
        position's variable, and a name free for the text from there."""
        k, i, rest = (self.temp() for _ in range(3))
        self.declare(k, none)
        self.range_(ir.command("len", text), i)
        self.declare(rest, ir.command("slice", text, ir.Variable(i)))
        self.if_(starts_with(rest, "$ofc_cut", "$ofc_n"))
        self.assign(k, i)
        self.end()
        self.end()
        return k, rest

    def printed_action(self, code: str | ir.Expression) -> None:
        """Print `code` where `$ofc_go` is known to hold (no guard)."""
        known = expression_of(code) if isinstance(code, str) else code
        written = tree.Act.of(ir.Action(ir.pipe_of(known))) if known is not None else tree.Act(str(code))
        self.charge(written.code)
        self.printed = True
        self.out.append(written)
