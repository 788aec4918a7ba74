"""What a Go `range` keeps from step to step, set up once the loop's body is written.

Reading `loop.last`, `loop.first` or a neighbouring element in every step costs calls (index
arithmetic, `not`, `index`); a loop that keeps them in variables reads them for free. The body
is translated first, then the variables it actually reads are declared before the `range` and
taken over at the top of each step.
"""

from __future__ import annotations

from ..go import ir, textops
from ..go.calls import operand_of
from ..go.tree import Act
from ..ops.values import Loop
from .core import Core


def _set_when_filled(var: str, initial: ir.Operand, seq: ir.Operand, value: ir.Expression) -> list[str]:
    """Declare `var` as `initial`, set to `value` where the list `seq` has elements (before a
    loop over it: what the steps read of the list, computed once)."""
    return [
        _declared(var, initial),
        Act.of(ir.Open("if", ir.operand_pipe(seq))),
        _assigned(var, value),
        Act.of(ir.End()),
    ]


def _declared(var: str, value: ir.Expression) -> Act:
    """`var := value`, as an action to insert."""
    return Act.of(ir.Action(ir.pipe_of(value, (var,))))


def _assigned(var: str, value: ir.Expression) -> Act:
    """`var = value`, as an action to insert."""
    return Act.of(ir.Action(ir.pipe_of(value, (var,), is_assign=True)))


def _rest(seq: ir.Operand) -> ir.Pipe:
    """`(slice seq 1)`: the list from its second element."""
    return ir.call("slice", seq, textops.ONE)


class LoopSteps(Core):
    """Numbering and per-step state of the loops `Loops` writes."""

    def set_up_steps(
        self,
        start: int,
        loop: Loop | None,
        hoisted: tuple[str, str, str] | None,
        item: str,
        ranged: Act | None,
    ) -> None:
        """Once a loop's body is written from `out[start]` on: what its steps read of the loop,
        declared or dropped. `hoisted`: (step index, `loop.last` variable, list) of a list loop
        whose last index may be computed once; `item`: the step's element; `ranged`: the `range`
        action of a list loop (what its steps keep is set up around it)."""
        if loop is not None and loop.last_declared is not None and loop.last not in loop.asked:
            self.drop_written(start, loop.last_declared)  # `loop.last` of a step, never asked
        if loop is not None and hoisted is not None and ranged is not None and hoisted[1] in loop.asked:
            self.hoist_last(start, ranged, *hoisted[1:])
        if loop is not None and (loop.before or loop.after) and ranged is not None:
            self.keep_neighbours(start, ranged, loop, item)
        if loop is not None and loop.first_flag and ranged is not None:
            self.keep_first_flag(start, ranged, loop)

    def hoist_last(self, start: int, ranged: Act, last: str, seqvar: str) -> None:
        """Compute a list loop's last index once before its `range`, where the body reads it
        (`len (slice xs 1)` in every step is two function calls each); only for a non-empty
        list, where the step would have computed it."""
        at = self.range_at(start, ranged)
        seq = operand_of(seqvar)
        self.emit.out[at:at] = _set_when_filled(last, ir.Number.of(0), seq, ir.command("len", _rest(seq)))

    def keep_neighbours(self, start: int, ranged: Act, loop: Loop, item: str) -> None:
        """Set up the neighbours `kept_neighbour` reads: before the `range`, the element carried
        into the first step (the last one) and the list from its second element; at the top of
        each step, before any test of it, the previous element taken over from the carried one
        and the step's own element carried on."""
        at = self.range_at(start, ranged)
        seq = operand_of(loop.seq)
        if loop.before is not None and loop.carried is not None:
            carried = ir.Variable(loop.carried)
            self.emit.out[at + 1 : at + 1] = [
                _declared(loop.before, carried),
                _assigned(loop.carried, operand_of(item)),
            ]
            last = ir.command("index", seq, ir.call("len", _rest(seq)))
            self.emit.out[at:at] = _set_when_filled(loop.carried, ir.Bool(False), seq, last)
        if loop.after is not None:
            self.emit.out[at:at] = _set_when_filled(loop.after, seq, seq, ir.command("slice", seq, textops.ONE))

    def keep_first_flag(self, start: int, ranged: Act, loop: Loop) -> None:
        """Set up `loop.first_flag` where the body reads it: true before the `range`, taken
        over at the top of each step and turned false for the next, two assignments and no
        call (`not $i` is a call)."""
        flag = loop.first_flag
        assert flag is not None
        if flag not in loop.asked:
            return
        at, pending = self.range_at(start, ranged), self.emit.temp()
        self.emit.out[at + 1 : at + 1] = [_declared(flag, ir.Variable(pending)), _assigned(pending, ir.Bool(False))]
        self.emit.out.insert(at, _declared(pending, ir.Bool(True)))

    def range_at(self, start: int, ranged: Act) -> int:
        """Where in the output, from `start` on, the loop's `range` action is."""
        at = self.emit.written_at(start, ranged)
        assert at is not None  # (written by the loop being set up, from `start` on)
        return at

    def drop_written(self, start: int, piece: str) -> None:
        """Remove `piece`, written from `out[start]` on (one declaration each, and the function
        calls computing it, fewer per iteration)."""
        at = self.emit.written_at(start, piece)
        if at is not None:
            del self.emit.out[at]

    def indexed(self, loop: Loop) -> Loop:
        """`loop`, its index variable noted as a Go `int` (a `range` index or a count), so a
        condition `loop.first` / `loop.index0 == 0` tests it without a call."""
        self.emit.int_vars.add(loop.index)
        return loop

    def counted_step(self, idx: str, seen: str, last: str, total: str) -> Loop:
        """Number a step of a loop whose Go `range` gives no usable index (a map, a filtered or a
        schema loop): `idx` := the steps `seen` so far (then one more), `last` := `total` - 1."""
        self.emit.declare(idx, seen)
        self.emit.assign(seen, textops.one_more(ir.Variable(seen)))
        declared = self.emit.declare(last, textops.less(operand_of(total), textops.ONE))
        return self.indexed(Loop(index=idx, seq="", last=last, length=total, last_declared=declared))
