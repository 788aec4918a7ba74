"""`for` loops: over Ollama's lists, schema dicts, characters, run-time string lists, ranges,
and literal lists unrolled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from jinja2 import nodes

from ..go import ir, strlists, textops
from ..go.calls import GoCall, go_and, go_eq, go_len, go_not, go_printf, operand_of
from ..go.tree import Act
from ..ops import toolschema
from ..ops.access import MESSAGES
from ..ops.values import (
    ANY,
    ANYOF,
    ARGS,
    CALLS,
    CONTENT,
    DICT,
    ELEMENT,
    INT,
    LIST,
    MSGS,
    NO_FACTS,
    NONE,
    PART,
    PARTS,
    PROPS,
    RECORD,
    REVERSED,
    SELECT,
    SPLIT,
    STR,
    STRLIST,
    TOOLS,
    UNDEF,
    Facts,
    Loop,
    SelectionFilter,
    Value,
    const,
    final_of,
    view_of,
)
from .ranges import LoopHead, LoopRequest, Ranges
from .scope import Frame


class Loops(Ranges):
    """`{% for %}`, reached through `Core.visit`."""

    def stmt_For(self, node: nodes.For, frame: Frame) -> None:
        self.loop_ranges.append(None)  # (until the loop is a Go `range` of its own)
        try:
            self.for_loop(node, frame)
        finally:
            self.loop_ranges.pop()

    def for_loop(self, node: nodes.For, frame: Frame) -> None:
        if node.recursive:
            raise self.emit.fail(node, "recursive for loop")
        self.emit.close_guard()
        #: where a filtered loop's `else` flag is declared (before anything the loop emits)
        flag_at = len(self.emit.out)
        seq, filters, filtered_by_test = self.loop_sequence(node, frame)
        uses_loop = any(n.name == "loop" for n in self.index.in_body(node.body, nodes.Name))
        if self.loop_of_its_own(node, seq, frame, uses_loop, filtered_by_test):
            return
        counted = (node.test is not None or bool(filters)) and uses_loop
        if counted and (seq.kind not in {MSGS, CALLS, TOOLS, LIST} or seq.facts.reversed):
            raise self.emit.fail(node, "loop.* in a filtered for loop")
        body = Frame(names={}, parent=frame)
        head = self.range_head(LoopRequest(node, seq, body, filters, frame, uses_loop, counted))
        if head is not None:
            self.filtered_steps(node, frame, body, filters, head, flag_at)

    def loop_sequence(self, node: nodes.For, frame: Frame) -> tuple[Value, list[SelectionFilter], bool]:
        """What a loop ranges over, with the `selectattr`/`rejectattr` filters its elements pass
        (of a filter on the loop's own iterable, or of a filtered list it holds), and whether the
        iterable was filtered in the loop header."""
        seq_node = node.iter
        predicate = None
        if isinstance(seq_node, nodes.Filter) and seq_node.name in {"selectattr", "rejectattr"}:
            predicate = seq_node
            assert seq_node.node is not None
            seq_node = seq_node.node
        seq = (
            self.range_of(cast(nodes.Call, seq_node), frame)
            if self.is_range(seq_node, frame)
            else self.expr(seq_node, frame)
        )
        if seq.kind == REVERSED:
            assert seq.facts.base is not None  # (a reversed list is one of its list)
            seq = Value(seq.code, seq.facts.base.kind, facts=Facts(reversed=True))
        if seq.kind == SPLIT:
            seq = self.strings.split_list(seq)
        filters: list[SelectionFilter] = (
            [] if predicate is None else [SelectionFilter(predicate, self.value_of(frame), None)]
        )
        if seq.kind == SELECT:
            base, selected = view_of(seq)
            filters, seq = [*selected, *filters], base
        return seq, filters, predicate is not None

    def loop_of_its_own(
        self, node: nodes.For, seq: Value, frame: Frame, uses_loop: bool, filtered_by_test: bool
    ) -> bool:
        """A loop whose sequence is known statically or needs a translation of its own (a
        literal list unrolled, an undefined one, a schema dict, an untyped value): written, True.
        False where it is a Go `range` of the common shape, having written nothing."""
        if seq.is_const and isinstance(seq.const, (list, tuple)):
            self.unrolled_for(node, seq.const, frame)
        elif seq.kind in {UNDEF, NONE} and not seq.facts:
            # Jinja's Undefined iterates as empty (None would raise, and the reference with it)
            self.visit_body(node.else_, frame)
        elif seq.kind in toolschema.KEY_ORDER:
            self.schema_for(node, seq, frame, uses_loop)
        elif seq.kind == ANY and seq.facts.list_or_text and not filtered_by_test and not seq.facts.items:
            self.list_or_text_for(node, seq, frame)
        elif seq.kind == ANY and not seq.facts.items:
            self.untyped_for(node, seq, frame, uses_loop)
        else:
            return False
        return True

    def range_head(self, request: LoopRequest) -> LoopHead | None:
        """The loop's Go `range` by the kind of its sequence, its names bound in `body`; None
        where the kind's own translation wrote the whole loop (characters, content parts, a
        run-time list of strings)."""
        node, seq, body, frame, uses_loop = request.node, request.seq, request.body, request.frame, request.uses_loop
        target = node.target
        if seq.kind == CONTENT and self.elements_used_whole(node) and not node.else_ and node.test is None:
            if seq.facts.final:
                self.emit.warn(
                    node,
                    "a loop over the characters of a message's text",
                    "an assistant prefill ending in this text is not cut there",
                )
            self.chars_for(node, Value(seq.code, STR), frame, uses_loop)
            return None
        if seq.kind in {CONTENT, PARTS}:
            self.single_part_for(node, seq, body)
            return None
        if seq.kind in {DICT, RECORD}:
            raise self.emit.fail(node, "iterating a dict literal")
        if seq.kind in {PROPS, ARGS} or seq.facts.items:
            self.mapping_range(node, seq, body, uses_loop)
            return LoopHead()
        if seq.kind == STRLIST:
            self.strlist_for(node, seq, body, frame, uses_loop)
            return None
        if seq.kind == STR and not seq.facts.final:
            self.chars_for(node, seq, frame, uses_loop)
            return None
        if seq.kind in {MSGS, CALLS, TOOLS, LIST, ANYOF} or seq.kind == INT:
            if not isinstance(target, nodes.Name):
                raise self.emit.fail(node, "tuple unpacking in for")
            seqvar, idx, item = self.emit.temp(), self.emit.temp(), self.emit.temp()
            self.emit.declare(seqvar, seq.code)
            kind = ELEMENT.get(seq.kind, ANY) if seq.kind != INT else INT
            body.names[target.name] = Value(item, kind)
            if seq.kind == INT:
                self.count_range(seq, body, seqvar, idx, item, uses_loop)
                return LoopHead()
            return self.list_range(request, (seqvar, idx, item, kind))
        raise self.emit.fail(node, f"for over {seq.kind}")

    def single_part_for(self, node: nodes.For, seq: Value, body: Frame) -> None:
        """A loop over a message's content parts: Ollama's message has one, its text, so the body
        is written once, for it."""
        if not isinstance(node.target, nodes.Name):
            raise self.emit.fail(node, "unpacking content parts")
        text = operand_of(seq.expr)  # (the content: one operand)
        body.names[node.target.name] = Value.of(MESSAGES, PART, facts=Facts(content=text, final=seq.facts.final))
        body.loop = Loop(index="0", seq="", last="", fixed=(0, 1))
        self.emit.if_(ir.Bool(True))
        self.declare_scope(body, node.body)
        self.visit_body(node.body, body)
        self.emit.end()

    def filtered_steps(
        self,
        node: nodes.For,
        frame: Frame,
        body: Frame,
        filters: list[SelectionFilter],
        head: LoopHead,
        flag_at: int,
    ) -> None:
        """Each step's body under the loop's test and filters, what the steps read set up around
        the `range`, and Jinja's `else` (run when no element passed, told by a Go flag)."""
        guard = 0
        if node.test is not None:
            self.emit.if_(self.truth(node.test, body))
            guard += 1
        if filters:
            self.emit.if_(self.logic.selection_test(filters, body.names[node.target.name]))  # type: ignore[attr-defined]
            guard += 1
        iterated = None
        if node.else_ and guard:
            # Jinja's `else` runs when no element passed the filter: a Go flag set by each that does
            iterated = self.emit.temp()
            self.emit.out.insert(flag_at, Act.of(ir.Action(ir.pipe_of(ir.Bool(False), (iterated,)))))
            self.emit.assign(iterated, "true")
        if head.passing is not None:
            total, seen = head.passing
            body.loop = self.counted_step(self.emit.temp(), seen, self.emit.temp(), total)
        self.declare_scope(body, node.body)
        self.loop_ranges[-1] = id(node)  # (a `break` in its body ends this `range`)
        self.visit_body(node.body, body)
        self.set_up_steps(flag_at, body.loop, head.hoisted, head.carried_item, head.ranged)
        for _ in range(guard):
            self.emit.end()
        if node.else_ and iterated is not None:
            self.emit.end()
            self.emit.if_(go_not(iterated))
            with self.conditional():
                self.visit_body(node.else_, frame)
        elif node.else_:
            self.emit.else_()
            with self.conditional():
                self.visit_body(node.else_, frame)
        self.emit.end()

    def elements_used_whole(self, node: nodes.For) -> bool:
        """Does a loop over a message's text use its elements only whole (printed, filtered),
        never as content parts (no attribute, item or test of them, not passed to a call)? Then
        they are what Python's loop over Ollama's string gives: its characters."""
        if not isinstance(node.target, nodes.Name):
            return False
        name = node.target.name
        index = self.index

        def is_target(expr: nodes.Node | None) -> bool:
            return isinstance(expr, nodes.Name) and expr.name == name

        for sub in index.in_body(node.body, (nodes.Getattr, nodes.Getitem, nodes.Test)):
            if is_target(cast("nodes.Getattr | nodes.Getitem | nodes.Test", sub).node):
                return False
        for call in index.in_body(node.body, nodes.Call):
            if any(is_target(arg) for arg in (*call.args, *(kw.value for kw in call.kwargs))):
                return False
        for assign in index.in_body(node.body, nodes.Assign):
            if any(is_target(n) for n in (assign.node, *index.find_all(assign.node, nodes.Name))):
                return False  # kept under another name, which may be used as a part
        return True

    def list_or_text_for(self, node: nodes.For, seq: Value, frame: Frame) -> None:
        """A loop over a variable holding a list on some paths and text on others (see
        `list_or_text`): the same loop twice, each under a test of the Go value's type."""
        assert seq.facts.list_or_text is not None  # (only such a variable comes here)
        list_kind, text_kind = seq.facts.list_or_text
        self.emit.if_(go_eq(go_printf("%T", seq.code), ir.String.of("string")))
        with self.conditional():
            for kind in (text_kind, list_kind):
                if kind == list_kind:
                    self.emit.else_()
                alias = Frame(
                    names={
                        "__alternative__": Value(seq.code, kind, facts=final_of(seq) if kind == text_kind else NO_FACTS)
                    },
                    parent=frame,
                )
                alias.depth = frame.depth
                loop = nodes.For(
                    node.target,
                    nodes.Name("__alternative__", "load"),
                    node.body,
                    node.else_,
                    node.test,
                    node.recursive,
                    lineno=node.lineno,
                )
                self.stmt_For(loop, alias)
        self.emit.end()

    def schema_for(self, node: nodes.For, seq: Value, frame: Frame, uses_loop: bool) -> None:
        """A loop over a tool schema dict: one step per key its Ollama struct has set."""
        target = node.target
        pairs = bool(seq.facts.items)
        names = [n.name for n in target.items] if isinstance(target, nodes.Tuple) else [target.name]  # type: ignore[attr-defined]
        if len(names) != (2 if pairs else 1) or node.else_:
            raise self.emit.fail(node, f"this loop over a {seq.kind} schema dict")
        if self.index.in_body(node.body, (nodes.Break, nodes.Continue)):
            raise self.emit.fail(node, "break/continue in a loop over a schema dict")
        keys = toolschema.KEY_ORDER[seq.kind]
        if seq.facts.sorted:
            keys = tuple(sorted(keys, key=str.lower))
        self.emit.warn(node, f"iterating a {seq.kind} schema dict", toolschema.ORDER_EFFECT)
        obj = Value(self.emit.temp(), seq.kind)
        self.emit.declare(obj.code, seq.code)
        steps = []
        for key in keys:
            if not toolschema.passes(key, seq.facts.key_tests or ()):
                continue
            step = Frame(names={names[0]: const(key)}, parent=frame)
            if pairs:
                step.names[names[1]] = self.access.attr(obj, key, node)
            test = self.expr(node.test, step) if node.test is not None else const(True)
            if test.is_const and not test.const:
                continue
            guard = toolschema.present(obj.code, seq.kind, key)
            if not test.is_const:
                guard = go_and(guard, self.logic.truth_of(test)) if guard != "true" else self.logic.truth_of(test)
            steps.append((step, guard))
        if uses_loop:
            # which keys are set is known only at run time: count them first, then each step
            total, seen = self.emit.temp(), self.emit.temp()
            self.emit.declare(total, "0")
            self.emit.declare(seen, "0")
            for _, guard in steps:
                self.emit.if_(guard)
                self.emit.assign(total, textops.one_more(ir.Variable(total)))
                self.emit.end()
        for step, guard in steps:
            self.emit.if_(guard)
            if uses_loop:
                step.loop = self.counted_step(self.emit.temp(), seen, self.emit.temp(), total)
            self.declare_scope(step, node.body)
            self.visit_body(node.body, step)
            self.emit.end()

    def untyped_for(self, node: nodes.For, seq: Value, frame: Frame, uses_loop: bool) -> None:
        """A loop over an untyped value: a list's elements, a mapping's keys (in Go's sorted
        order); a string's characters are not stepped through (warned)."""
        if not isinstance(node.target, nodes.Name) or node.else_ or node.test is not None:
            raise self.emit.fail(node, "this loop over an untyped value")
        self.emit.warn(
            node, "a loop over an untyped value", "a mapping's keys come out sorted; a string is not iterated"
        )
        obj = self.emit.temp()
        self.emit.declare(obj, seq.code)
        for is_list in (True, False):
            is_kind = (
                go_eq(go_printf("%.2T", obj), ir.String.of("[]"))
                if is_list
                else go_eq(go_printf("%.3T", obj), ir.String.of("map"))
            )
            self.emit.if_(is_kind, "if" if is_list else "else if")
            idx, item, last = self.emit.temp(), self.emit.temp(), self.emit.temp()
            if is_list:
                self.emit.range_(ir.Variable(obj), idx, item)
                self.emit.declare(last, ir.command("len", ir.call("slice", ir.Variable(obj), textops.ONE)))
                loop = self.indexed(Loop(index=idx, seq=obj, last=last))
            else:
                seen, ignored = self.emit.temp(), self.emit.temp()
                self.emit.declare(seen, "0")
                self.emit.range_(ir.Variable(obj), item, ignored)
                loop = self.counted_step(idx, seen, last, go_len(obj))
            body = Frame(names={node.target.name: Value(item, STR if not is_list else ANY)}, parent=frame, loop=loop)
            self.declare_scope(body, node.body)
            self.visit_body(node.body, body)
            self.emit.end()
        self.emit.end()

    def chars_for(self, node: nodes.For, seq: Value, frame: Frame, uses_loop: bool) -> None:
        """A loop over a string: one step per character. A schema `type` (a list in Ollama) is
        a string when it names one type, and a list of the names when it has several."""
        if not isinstance(node.target, nodes.Name) or node.else_ or node.test is not None:
            raise self.emit.fail(node, "this loop over a string")
        types = seq.facts.types
        if types:
            self.emit.if_(go_eq(go_len(types), "1"))
        text, at, count, idx, last, char = (self.emit.temp() for _ in range(6))
        self.emit.declare(text, seq.code)
        total = None
        if uses_loop:
            total = self.emit.temp()
            self.emit.declare(total, "0")
            self.emit.range_(ir.command("len", ir.Variable(text)), at)
            self.emit.if_(go_not(continuation_byte(text, at)))
            self.emit.assign(total, textops.one_more(ir.Variable(total)))
            self.emit.end()
            self.emit.end()
        self.emit.declare(count, "0")
        self.emit.range_(ir.command("len", ir.Variable(text)), at)
        # a character starts at every byte that is not a UTF-8 continuation byte
        self.emit.if_(go_not(continuation_byte(text, at)))
        self.emit.declare(char, ir.command("printf", ir.String.of("%.1s"), textops.run_of(text, at)))
        self.emit.declare(idx, count)
        self.emit.assign(count, textops.one_more(ir.Variable(count)))
        self.emit.declare(last, "-1")
        self.emit.if_(go_eq(go_len(GoCall("slice", text, at)), go_len(char)))
        self.emit.assign(last, idx)
        self.emit.end()
        body = Frame(
            names={node.target.name: Value(char, STR)},
            parent=frame,
            loop=self.indexed(Loop(index=idx, seq="", last=last, length=total)),
        )
        self.declare_scope(body, node.body)
        self.visit_body(node.body, body)
        self.emit.end()
        self.emit.end()
        if types:
            self.emit.else_()
            listed, i, item, final = self.emit.temp(), self.emit.temp(), self.emit.temp(), self.emit.temp()
            self.emit.declare(listed, types)
            self.emit.range_(ir.Variable(listed), i, item)
            self.emit.declare(final, ir.command("len", ir.call("slice", ir.Variable(listed), textops.ONE)))
            body = Frame(
                names={node.target.name: Value(item, STR)},
                parent=frame,
                loop=self.indexed(Loop(index=i, seq=listed, last=final)),
            )
            self.declare_scope(body, node.body)
            self.visit_body(node.body, body)
            self.emit.end()
            self.emit.end()

    def strlist_for(self, node: nodes.For, seq: Value, body: Frame, frame: Frame, uses_loop: bool) -> None:
        """A loop over a list of strings built at run time: a scan for its element markers."""
        if not isinstance(node.target, nodes.Name):
            raise self.emit.fail(node, "tuple unpacking in for")
        if node.else_:
            self.emit.if_(seq.code)
        item, idx, total = strlists.each(self.emit, seq.code)
        body.names[node.target.name] = Value(item, STR, facts=final_of(seq))
        last = self.emit.temp()
        if uses_loop:
            self.emit.declare(last, textops.less(ir.Variable(total), textops.ONE))
        body.loop = self.indexed(Loop(index=idx, seq="", last=last, length=total))
        if node.test is not None:
            self.emit.if_(self.truth(node.test, body))
        self.declare_scope(body, node.body)
        self.visit_body(node.body, body)
        if node.test is not None:
            self.emit.end()
        self.emit.end()
        self.emit.end()
        if node.else_:
            self.emit.else_()
            with self.conditional():
                self.visit_body(node.else_, frame)
            self.emit.end()

    def unrolled_for(self, node: nodes.For, items: Sequence[Any], frame: Frame) -> None:
        """A loop over a literal list: the body once per element, with the element as a constant."""
        if not items:
            self.visit_body(node.else_, frame)
            return
        if self.index.in_body(node.body, (nodes.Break, nodes.Continue)):
            raise self.emit.fail(node, "break/continue in a loop over a literal list")
        target = node.target
        unpacks = isinstance(target, nodes.Tuple) and all(isinstance(n, nodes.Name) for n in target.items)
        if not (isinstance(target, nodes.Name) or unpacks) or node.test is not None:
            raise self.emit.fail(node, "a filtered or unpacking loop over a literal list")
        for i, element in enumerate(items):
            if unpacks:
                names = [n.name for n in target.items]  # type: ignore[attr-defined]
                if not isinstance(element, (list, tuple)) or len(element) != len(names):
                    raise self.emit.fail(node, "unpacking a literal list element of another length")
                bound = {name: const(part) for name, part in zip(names, element)}
            else:
                bound = {target.name: const(element)}  # type: ignore[attr-defined]
            body = Frame(names=bound, parent=frame, loop=Loop("", "", "", fixed=(i, len(items))))
            self.emit.if_(ir.Bool(True))
            self.declare_scope(body, node.body)
            self.visit_body(node.body, body)
            self.emit.end()


def continuation_byte(text: str, at: str) -> GoCall:
    """Is the byte at `at` of the string `text` a UTF-8 continuation byte (inside a character)?"""
    byte = GoCall("index", text, at)
    return go_and(GoCall("ge", byte, ir.Number.of(128)), GoCall("lt", byte, ir.Number.of(192)))
