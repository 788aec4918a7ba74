"""A loop's Go `range` by what it ranges over: a mapping, a `range(..)` counted at run time, a
Go list (forward or backward, its passing elements counted first where a filtered loop reads
`loop.*`); and what the `range` leaves for its steps to set up once the body is written."""

from __future__ import annotations

from dataclasses import dataclass

from jinja2 import nodes

from ..analysis import first_read_in_expressions
from ..go import ir, textops
from ..go.calls import GoCall, go_and, go_field, go_len, operand_of
from ..go.tree import Act
from ..limits import SANDBOX_MAX_RANGE
from ..ops.values import (
    ANY,
    ARGS,
    INT,
    PROP,
    PROPS,
    STR,
    Facts,
    Kind,
    Loop,
    SelectionFilter,
    Value,
    const,
)
from .plans import free_variables
from .scope import Frame
from .steps import LoopSteps


@dataclass(frozen=True)
class LoopRequest:
    """A `for` as its `range` is asked for: the loop, what it ranges over, the frame its names
    are bound in, the selection filters its elements pass, the frame around it, whether the body
    reads `loop.*`, and whether `loop.*` counts only the passing elements."""

    node: nodes.For
    seq: Value
    body: Frame
    filters: list[SelectionFilter]
    frame: Frame
    uses_loop: bool
    counted: bool


@dataclass(frozen=True)
class LoopHead:
    """What a loop's `range` leaves for its steps to set up once the body is written (see
    `LoopSteps.set_up_steps`): a list's (step index, `loop.last` variable, list) where `loop.last`
    may be computed once, the `range` action, the step's element, and a filtered loop's (count
    of passing elements, step counter)."""

    hoisted: tuple[str, str, str] | None = None
    ranged: Act | None = None
    carried_item: str = ""
    passing: tuple[str, str] | None = None


class Ranges(LoopSteps):
    """The `range` actions of `Loops.range_head`, one per kind of sequence."""

    def mapping_range(self, node: nodes.For, seq: Value, body: Frame, uses_loop: bool) -> None:
        """The `range` of a mapping (a schema's properties, a call's arguments, `.items()`): keys,
        or (key, value) pairs, counted where the body reads `loop.*` (a map has no index)."""
        target = node.target
        key, val = (self.emit.temp(), self.emit.temp())
        if isinstance(target, nodes.Name) and not seq.facts.items:
            body.names[target.name] = Value(key, STR)  # a mapping iterates as its keys
        elif isinstance(target, nodes.Tuple) and len(target.items) == 2:
            body.names[target.items[0].name] = Value(key, STR)  # type: ignore[attr-defined]
            body.names[target.items[1].name] = Value(val, PROP if seq.kind == PROPS else ANY)  # type: ignore[attr-defined]
        else:
            raise self.emit.fail(node, "iterating a mapping without (key, value)")
        if seq.kind == ARGS:
            self.emit.warn(node, "iterating tool call arguments", "keys come out sorted (Ollama passes a map)")
        # a nested property map is Ollama's ordered map: ranged (in the order sent) through .All
        ordered = bool(seq.facts.ordered)
        if uses_loop:
            # a map has no index: count the steps (the body sees loop.*, not the outer loop's)
            mapvar, seen, idx, last = self.emit.temp(), self.emit.temp(), self.emit.temp(), self.emit.temp()
            self.emit.declare(mapvar, seq.code)
            size = go_field(mapvar, ".Len") if ordered else go_len(mapvar)
            self.emit.declare(seen, "0")
            self.emit.range_(ir.Variable(mapvar, ("All",) if ordered else ()), key, val)
            body.loop = self.counted_step(idx, seen, last, size)
        elif ordered:
            self.emit.range_(go_field(seq.code, ".All"), key, val)
        else:
            self.emit.range_(seq.expr, key, val)

    def count_range(self, seq: Value, body: Frame, seqvar: str, idx: str, item: str, uses_loop: bool) -> None:
        """The `range` of a `range(..)` counted at run time: Go ranges over an integer with one
        variable, the step count, and the value follows from it (start + step count)."""
        self.emit.range_(ir.Variable(seqvar), idx)
        start, step, last = (
            seq.facts.start if seq.facts.start is not None else ir.Number("0"),
            seq.facts.step if seq.facts.step is not None else 1,
            self.emit.temp(),
        )
        if step == 1:
            widths = (start, textops.EMPTY, ir.Variable(idx), textops.EMPTY)
            self.emit.declare(item, ir.command("len", ir.call("printf", ir.String.of("%*s%*s"), *widths)))
        else:
            self.emit.declare(item, textops.less(start, ir.Variable(idx)))
        declared = self.emit.declare(last, textops.less(ir.Variable(seqvar), textops.ONE)) if uses_loop else None
        body.loop = self.indexed(Loop(index=idx, seq="", last=last, length=seqvar, last_declared=declared))

    def list_range(self, request: LoopRequest, names: tuple[str, str, str, Kind]) -> LoopHead:
        """The `range` of a Go list (forward, or backward through its positions), with what its
        steps may keep of it: `loop.last` computed once, the neighbours, the first-step flag,
        and, for a filtered loop reading `loop.*`, the elements that pass counted first."""
        node, seq, body, filters, frame = request.node, request.seq, request.body, request.filters, request.frame
        uses_loop, counted = request.uses_loop, request.counted
        seqvar, idx, item, kind = names
        passing = None
        if counted:
            # loop.* counts the elements that pass the filter: count them all first
            passing = self.count_passing(node, filters, seqvar, kind, frame)
        position = None
        if seq.facts.reversed:
            # the i-th step takes element len-1-i, which is len(seq[i+1:]): loop.revindex0
            position = self.emit.temp()
            listed = ir.Variable(seqvar)
            ranged = self.emit.range_(ir.command("len", listed), idx)
            after = ir.Pipe((textops.one_more(ir.Variable(idx)),))
            self.emit.declare(position, ir.command("len", ir.call("slice", listed, after)))
            self.emit.declare(item, ir.command("index", listed, ir.Variable(position)))
            self.emit.int_vars.add(position)
        else:
            ranged = self.emit.range_(ir.Variable(seqvar), idx, item)
        last = self.emit.temp()
        neighbours = kind if not seq.facts.reversed else None
        loop = body.loop = self.indexed(Loop(index=idx, seq=seqvar, last=last, item_kind=neighbours))
        if uses_loop and not counted and first_read_in_expressions(node.body):
            loop.first_flag = self.emit.temp()
        if neighbours and node.test is None and not filters and not free_variables(seq.code):
            loop.source = seq.node
        if position and not counted:
            loop.revindex0, loop.list_node = position, seq.node
        return LoopHead((idx, last, seqvar) if uses_loop else None, ranged, item, passing)

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
            steps = range(*(a.const for a in args))
            if len(steps) > SANDBOX_MAX_RANGE:
                raise self.emit.fail(
                    call,
                    f"range() of {len(steps):,} steps",
                    f"is refused by transformers' sandbox too (at most {SANDBOX_MAX_RANGE:,})",
                )
            return const(list(steps))
        if len(args) == 1:
            return self.expr(call, frame)
        step = args[2] if len(args) == 3 else const(1)
        if not (step.is_const and step.const in (1, -1)) or len(args) > 3:
            raise self.emit.fail(call, "range() with a step other than 1 or -1")
        start, stop = args[0], args[1]
        for bound in (start, stop):
            if bound.kind != INT:
                raise self.emit.fail(call, f"range() of a {bound.kind}")
        if start.is_const and start.const < 0:
            raise self.emit.fail(call, "range() from a negative number")
        count = self.emit.temp()
        if step.const == -1 and stop.is_const and stop.const == -1:
            self.emit.declare(count, textops.plus_one(start.code))  # start, start-1, ..., 0
        elif stop.is_const and stop.const < 0:
            raise self.emit.fail(call, "range() down to a negative number other than -1")
        else:
            low, high = (start, stop) if step.const == 1 else (stop, start)
            self.emit.declare(count, "0")
            self.emit.if_(GoCall("lt", low.code, high.code))
            self.emit.assign(count, textops.less(operand_of(high.code), operand_of(low.code)))
            self.emit.end()
        return Value(count, INT, facts=Facts(start=operand_of(start.expr), step=step.const))

    def count_passing(
        self,
        node: nodes.For,
        filters: list[SelectionFilter],
        seqvar: str,
        kind: Kind,
        frame: Frame,
    ) -> tuple[str, str]:
        """Go variables: how many elements pass a filtered loop's filters, and a step counter at 0."""
        assert isinstance(node.target, nodes.Name)
        total, seen, idx, item = self.emit.temp(), self.emit.temp(), self.emit.temp(), self.emit.temp()
        scope = Frame(names={node.target.name: Value(item, kind)}, parent=frame)
        self.emit.declare(total, "0")
        self.emit.range_(ir.Variable(seqvar), idx, item)
        tests = [self.logic.selection_test(filters, scope.names[node.target.name])] if filters else []
        if node.test is not None:
            tests.append(self.truth(node.test, scope))
        self.emit.if_(tests[0] if len(tests) == 1 else go_and(*tests))
        self.emit.assign(total, textops.one_more(ir.Variable(total)))
        self.emit.end()
        self.emit.end()
        self.emit.declare(seen, "0")
        return total, seen
