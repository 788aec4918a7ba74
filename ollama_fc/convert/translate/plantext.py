"""A print plan (printplan.py) printed through a string method that the plan's own text makes
needless or printable piece by piece: `strip()` of a `{% set %}` block that starts and ends with
constant text, `text.replace(needle, plan)` (MiniCPM 5 puts its tools block in the system
message so), and `plan[:-n]` where the plan surely ends with n constant characters (Mistral's
and Cogito's `out[:-1]` of a tool call's JSON, which ends with `}`). Without these, such a use
writes the plan's placeholder and the string is captured.
"""

from __future__ import annotations

from dataclasses import replace

from jinja2 import nodes

from ..go import search
from ..ops.values import CONTENT, STR
from .planfallback import PlanFallback
from .plans import Piece, Plan, trailing_text, without_trailing
from .scope import Frame

#: the ends of the text each strip method takes whitespace from
STRIPS = {"strip": (0, -1), "lstrip": (0,), "rstrip": (-1,), "trim": (0, -1)}


class PlannedText(PlanFallback):
    """Plans printed through `strip` and as `replace`'s replacement (see the module's docstring)."""

    def print_planned(self, expr: nodes.Expr, frame: Frame) -> bool:
        """Print `expr` if it is one of those uses of a plan; False, having printed nothing, if not."""
        if isinstance(expr, nodes.Getitem) and isinstance(expr.arg, nodes.Slice):
            cut = expr.arg.stop
            if expr.arg.start is not None or expr.arg.step is not None or not isinstance(cut, nodes.Neg):
                return False
            plan = self.held_plan(expr.node, frame)
            count = cut.node.value if isinstance(cut.node, nodes.Const) else None
            shorter = self.without_last(plan, count) if plan is not None and isinstance(count, int) else None
            if shorter is None:
                return False
            self.print_plan(shorter, expr)
            return True
        if (
            isinstance(expr, nodes.Filter)
            and expr.node is not None
            and not (expr.kwargs or expr.dyn_args or expr.dyn_kwargs)
        ):
            name, base, args = expr.name, expr.node, list(expr.args)
        elif (
            isinstance(expr, nodes.Call)
            and isinstance(expr.node, nodes.Getattr)
            and not (expr.kwargs or expr.dyn_args or expr.dyn_kwargs)
        ):
            name, base, args = expr.node.attr, expr.node.node, list(expr.args)
        else:
            return False
        if name in STRIPS and not args and (name != "trim" or isinstance(expr, nodes.Filter)):
            plan = self.held_plan(base, frame)
            if plan is None or not all(self.unpadded_at(plan, end) for end in STRIPS[name]):
                return False
            self.print_plan(plan, expr)
            return True
        if name == "replace" and len(args) == 2:
            old, new = args
            plan = self.held_plan(new, frame)
            if plan is None or not (isinstance(old, nodes.Const) and isinstance(old.value, str) and old.value):
                return False
            text = self.expr(base, frame)
            if text.kind not in {STR, CONTENT} or text.is_const or text.facts.markup:
                return False
            final = text.facts.final

            def print_run(code: str) -> None:
                # a prefilled final text is cut in the run that holds its end (the runs hold no
                # needle, so none but the last can hold the whole text the cut looks for)
                if final:
                    self.emit.print_final_text(code, final)
                else:
                    self.emit.put(code)

            search.print_replaced(self.emit, text.code, old.value, print_run, lambda: self.print_plan(plan, expr))
            return True
        return False

    @staticmethod
    def without_last(plan: Plan, count: int) -> Plan | None:
        """The plan printing its text but the last `count` characters, where it surely ends
        with that much constant text (its last part's text after its last action); None where
        it may not."""
        last = plan[-1] if plan else None
        if count < 1 or not isinstance(last, Piece) or not last.printable or not last.snippet:
            return None
        if len(trailing_text(last.snippet).lstrip()) < count:  # (a `-}}` before it trims its leading space)
            return None
        return (*plan[:-1], replace(last, snippet=without_trailing(last.snippet, count)))

    def unpadded_at(self, plan: Plan, end: int) -> bool:
        """Does the plan, a `{% set %}` block's body, print constant text that is not whitespace
        first (`end` 0) or last (-1), whatever else it prints?"""
        if len(plan) != 1 or not isinstance(plan[0], Piece) or plan[0].source < 0:
            return False
        block = self.plan_node(plan[0].source)
        if not isinstance(block, nodes.AssignBlock) or not block.body:
            return False
        edge = block.body[end]
        if not isinstance(edge, nodes.Output) or not edge.nodes:
            return False
        data = edge.nodes[end]
        text = data.data if isinstance(data, nodes.TemplateData) else getattr(data, "value", None)
        return (
            isinstance(data, (nodes.TemplateData, nodes.Const))
            and isinstance(text, str)
            and text != ""
            and not text[end].isspace()
        )
