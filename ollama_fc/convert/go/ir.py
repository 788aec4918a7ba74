"""Go template code as data: frozen nodes mirroring Go's `text/template/parse`, what Ollama runs.

The node kinds are Go's own. Operands: `Variable` (`$x.Role`), `Field` (`.Messages`), `Dot`,
`Chain` (a field of a parenthesised pipeline, `(index $m 0).Role`), `Identifier` (a function's
name), `String`, `Number`, `Bool`, `Nil`. A `Command` is operands separated by spaces; a `Pipe`
is commands joined by `|`, with the variables it declares (`$x :=`) or assigns (`$x =`). The
actions are one `{{ ... }}` each: `Action` (print, declare or assign a pipeline), `Template`
(call a define), `Break`, `Continue`, `Comment`, and the delimiters of a block, `Open` (`if`,
`range`, `with`), `Else` (`else`, `else if ...`) and `End`, with `Define` opening a define. The
blocks that hold them: a `Block` (an opening, its body, its `else` branches, its `end`) and
`Text`, in a tuple that is Go's list.

Each node says what it reads (`reads`: the variables), declares (`declares`), assigns
(`assigns`), which defines it calls (`calls`), which functions it calls (`functions`) and which
string literals it holds (`strings`), so no pass reads Go text back to learn them. `render` is
the one maker of Go text: `{{ code }}`, or `{{code}}` compact (the same parse tree, fewer bytes);
`irread` reads text the converter did not build as nodes.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Union

#: the characters a Go string literal escapes short, and how
_SHORT_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


@functools.lru_cache(maxsize=8192)
def go_string(text: str) -> str:
    """A Go interpreted string literal for `text`."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in _SHORT_ESCAPES:
            out.append(_SHORT_ESCAPES[char])
        elif code < 0x20 or code == 0x7F:
            out.append(f"\\x{code:02x}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


@dataclass(frozen=True, slots=True)
class Uses:
    """What a node reads, declares, assigns and calls, and the string literals it holds, in the
    order they are written (see `Node.uses`)."""

    reads: frozenset[str]
    declares: tuple[str, ...]
    assigns: tuple[str, ...]
    calls: tuple[str, ...]
    functions: frozenset[str]
    strings: tuple[String, ...]


class Node:
    """A node of Go template code: what it reads, declares and calls, and its text."""

    __slots__ = ()

    def children(self) -> Iterator[Node]:
        return iter(())

    def walk(self) -> Iterator[Node]:
        """This node and every node inside it, outermost first, in the order they are written."""
        stack: list[Node] = [self]
        while stack:
            node = stack.pop()
            yield node
            inside = list(node.children())
            inside.reverse()
            stack += inside

    @property
    def code(self) -> str:
        """The Go text of this node (inside an action's delimiters for an action)."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.code

    def uses(self) -> Uses:
        """What this node reads, declares, assigns and calls, in one walk."""
        found = _Found()
        _collect(self, found)
        return Uses(
            frozenset(found.reads),
            tuple(found.declares),
            tuple(found.assigns),
            tuple(found.calls),
            frozenset(found.functions),
            tuple(found.strings),
        )

    def reads(self) -> frozenset[str]:
        """The variables this node reads (`$x` of `$x.Role`), `$` for the root data."""
        return self.uses().reads

    def declares(self) -> tuple[str, ...]:
        """The variables this node declares (`:=`), in order."""
        return self.uses().declares

    def assigns(self) -> tuple[str, ...]:
        """The variables this node assigns (`=`), in order."""
        return self.uses().assigns

    def calls(self) -> tuple[str, ...]:
        """The defines this node calls (`template "name"`), in order."""
        return self.uses().calls

    def functions(self) -> frozenset[str]:
        """The functions this node calls (`printf`, `len`, `eq`...)."""
        return self.uses().functions

    def strings(self) -> tuple[String, ...]:
        """The string literals this node holds, in order."""
        return self.uses().strings


class _Found:
    """What `_collect` gathers, as it walks."""

    __slots__ = ("assigns", "calls", "declares", "functions", "reads", "strings")

    def __init__(self) -> None:
        self.reads: set[str] = set()
        self.declares: list[str] = []
        self.assigns: list[str] = []
        self.calls: list[str] = []
        self.functions: set[str] = set()
        self.strings: list[String] = []


def _collect(node: Node, found: _Found) -> None:
    """`found` with what `node` uses, in the order it is written (the walk of `Node.walk`,
    by kind: the converter's hottest question)."""
    kind = type(node)
    if kind is Variable:
        found.reads.add(node.name)  # type: ignore[attr-defined]
    elif kind is Command:
        for arg in node.args:  # type: ignore[attr-defined]
            _collect(arg, found)
    elif kind is Pipe:
        (found.assigns if node.is_assign else found.declares).extend(node.decl)  # type: ignore[attr-defined]
        for command in node.cmds:  # type: ignore[attr-defined]
            _collect(command, found)
    elif kind is Identifier:
        found.functions.add(node.name)  # type: ignore[attr-defined]
    elif kind is String:
        found.strings.append(node)  # type: ignore[arg-type]
    elif kind is Template:
        found.calls.append(node.name)  # type: ignore[attr-defined]
        if node.pipe is not None:  # type: ignore[attr-defined]
            _collect(node.pipe, found)  # type: ignore[attr-defined]
    elif kind in (Action, Open, Chain):
        _collect(node.pipe if kind is not Chain else node.node, found)  # type: ignore[attr-defined]
    else:
        for child in node.children():
            _collect(child, found)


# ---------------------------------------------------------------- operands


@dataclass(frozen=True, slots=True)
class Variable(Node):
    """`$x`, `$x.Role.Name`; `$` is the template's data."""

    name: str
    fields: tuple[str, ...] = ()

    @property
    def code(self) -> str:
        return self.name + "." + ".".join(self.fields) if self.fields else self.name


@dataclass(frozen=True, slots=True)
class Field(Node):
    """`.Messages`, `.Function.Name`: fields of dot."""

    fields: tuple[str, ...]

    @property
    def code(self) -> str:
        return "." + ".".join(self.fields)


@dataclass(frozen=True, slots=True)
class Dot(Node):
    """`.`: the value in scope."""

    @property
    def code(self) -> str:
        return "."


@dataclass(frozen=True, slots=True)
class Identifier(Node):
    """A function's name: `printf`, `len`, `eq`."""

    name: str

    @property
    def code(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class String(Node):
    """A string literal as written: `"a\\n"` or a raw `` `a` ``; `value` is the string it is."""

    quoted: str

    @classmethod
    def of(cls, value: str) -> String:
        return cls(go_string(value))

    @property
    def backquoted(self) -> bool:
        """A raw string literal (`` `a` ``): no escapes, and cannot hold a backquote."""
        return self.quoted[:1] == "`"

    @property
    def value(self) -> str:
        """The string (the escapes of Go the converter writes are Python's)."""
        return self.quoted[1:-1] if self.backquoted else str(ast.literal_eval(self.quoted))

    @property
    def code(self) -> str:
        return self.quoted


@dataclass(frozen=True, slots=True)
class Number(Node):
    """A number literal as written: `0`, `-1`, `1.5`, `0x1F`."""

    text: str

    @classmethod
    def of(cls, value: int) -> Number:
        return cls(str(value))

    @property
    def code(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Bool(Node):
    value: bool

    @property
    def code(self) -> str:
        return "true" if self.value else "false"


@dataclass(frozen=True, slots=True)
class Nil(Node):
    @property
    def code(self) -> str:
        return "nil"


@dataclass(frozen=True, slots=True)
class Chain(Node):
    """A field of a parenthesised pipeline's value: `(index $m 0).Role`."""

    node: Pipe
    fields: tuple[str, ...]

    def children(self) -> Iterator[Node]:
        yield self.node

    @property
    def code(self) -> str:
        return f"({self.node.code})" + "".join("." + name for name in self.fields)


#: what a command's argument is: an operand, or a pipeline in parentheses
Operand = Union[Variable, Field, Dot, Identifier, String, Number, Bool, Nil, Chain, "Pipe"]


@dataclass(frozen=True, slots=True)
class Command(Node):
    """Operands separated by spaces: `printf "%s" $x`, or one operand alone."""

    args: tuple[Operand, ...]

    def children(self) -> Iterator[Node]:
        return iter(self.args)

    @property
    def code(self) -> str:
        return " ".join([f"({arg.code})" if type(arg) is Pipe else arg.code for arg in self.args])


@dataclass(frozen=True, slots=True)
class Pipe(Node):
    """Commands joined by `|`, declaring (`$x :=`) or assigning (`$x =`) the variables `decl`."""

    cmds: tuple[Command, ...]
    decl: tuple[str, ...] = ()
    is_assign: bool = False
    cached_code: str | None = field(default=None, init=False, compare=False, repr=False)

    def children(self) -> Iterator[Node]:
        return iter(self.cmds)

    def declaring(self, *names: str) -> Pipe:
        """This pipeline declaring `names` (`$x := ...`)."""
        return Pipe(self.cmds, names)

    @property
    def code(self) -> str:
        text = self.cached_code
        if text is None:
            cmds = self.cmds
            text = cmds[0].code if len(cmds) == 1 else " | ".join([command.code for command in cmds])
            if self.decl:
                text = f"{', '.join(self.decl)} {'=' if self.is_assign else ':='} {text}"
            object.__setattr__(self, "cached_code", text)
        return text


def call(function: str, *args: Operand) -> Pipe:
    """`function arg...` as a pipeline of one command (written in parentheses as an operand)."""
    return Pipe((Command((Identifier(function), *args)),))


def operand_pipe(operand: Operand) -> Pipe:
    """The pipeline of one operand (`$x`), a pipeline as it is."""
    return operand if isinstance(operand, Pipe) else Pipe((Command((operand,)),))


def command(function: str, *args: Operand) -> Command:
    """`function arg...`: a command, the whole of a pipeline (not in parentheses)."""
    return Command((Identifier(function), *args))


#: what an action's verb is given: an operand (a pipeline written in parentheses, as an
#: operand is) or a command (written bare, as the whole pipeline)
Expression = Union[Operand, Command]


def pipe_of(expression: Expression, decl: tuple[str, ...] = (), is_assign: bool = False) -> Pipe:
    """The pipeline that is `expression`: a command as it is, an operand as a command of its own
    (a pipeline in parentheses); declaring (or assigning) `decl`."""
    command = expression if type(expression) is Command else Command((expression,))  # type: ignore[arg-type]
    return Pipe((command,), decl, is_assign)


def operand_code(operand: Operand) -> str:
    """The text of `operand` as an argument: a pipeline in parentheses."""
    return f"({operand.code})" if isinstance(operand, Pipe) else operand.code


# ---------------------------------------------------------------- actions


@dataclass(frozen=True, slots=True)
class Trim:
    """The trim markers of an action's delimiters: `{{- ` (left) and ` -}}` (right)."""

    left: bool = False
    right: bool = False


NO_TRIM = Trim()


class ActionNode(Node):
    """One `{{ ... }}`; what it uses is found once (`cached_uses`)."""

    __slots__ = ()
    trim: Trim
    cached_uses: Uses | None

    def uses(self) -> Uses:
        found = self.cached_uses
        if found is None:
            found = Node.uses(self)
            object.__setattr__(self, "cached_uses", found)
        return found

    #: the word that opens a block (`if`, `range`, `with`, `define`), `else`, `end`, or ""
    keyword = ""


@dataclass(frozen=True, slots=True)
class Action(ActionNode):
    """A pipeline printed, or declaring or assigning variables: `{{ $x := len $y }}`."""

    pipe: Pipe
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)

    def children(self) -> Iterator[Node]:
        yield self.pipe

    @property
    def code(self) -> str:
        return self.pipe.code

    @property
    def prints(self) -> bool:
        return not self.pipe.decl


@dataclass(frozen=True, slots=True)
class Template(ActionNode):
    """`{{ template "name" pipe }}`: a define called."""

    name: str
    pipe: Pipe | None = None
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)

    def children(self) -> Iterator[Node]:
        if self.pipe is not None:
            yield self.pipe

    @property
    def code(self) -> str:
        head = f"template {go_string(self.name)}"
        return head if self.pipe is None else f"{head} {self.pipe.code}"


@dataclass(frozen=True, slots=True)
class Open(ActionNode):
    """`{{ if pipe }}`, `{{ range pipe }}` or `{{ with pipe }}`: a block's opening."""

    word: str
    pipe: Pipe
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def keyword(self) -> str:  # type: ignore[override]
        return self.word

    def children(self) -> Iterator[Node]:
        yield self.pipe

    @property
    def code(self) -> str:
        return f"{self.word} {self.pipe.code}"


@dataclass(frozen=True, slots=True)
class Define(ActionNode):
    """`{{ define "name" }}`: a define's opening."""

    name: str
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)
    keyword = "define"

    @property
    def code(self) -> str:
        return f"define {go_string(self.name)}"


@dataclass(frozen=True, slots=True)
class Else(ActionNode):
    """`{{ else }}`, or `{{ else if pipe }}` (`word` "if") / `{{ else with pipe }}`."""

    word: str = ""
    pipe: Pipe | None = None
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)
    keyword = "else"

    def children(self) -> Iterator[Node]:
        if self.pipe is not None:
            yield self.pipe

    @property
    def code(self) -> str:
        return "else" if self.pipe is None else f"else {self.word} {self.pipe.code}"


@dataclass(frozen=True, slots=True)
class End(ActionNode):
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)
    keyword = "end"

    @property
    def code(self) -> str:
        return "end"


@dataclass(frozen=True, slots=True)
class Break(ActionNode):
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def code(self) -> str:
        return "break"


@dataclass(frozen=True, slots=True)
class Continue(ActionNode):
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)

    @property
    def code(self) -> str:
        return "continue"


@dataclass(frozen=True, slots=True)
class Comment(ActionNode):
    """`{{/* text */}}` (`{{ /* text */ }}` where `spaced`: a marker that never reaches Go):
    printed as written, compact or not."""

    text: str
    trim: Trim = NO_TRIM
    cached_uses: Uses | None = field(default=None, init=False, compare=False, repr=False)
    spaced: bool = False

    @property
    def code(self) -> str:
        return f"/*{self.text}*/"


def render(action: ActionNode, compact: bool = False) -> str:
    """The action's text: `{{ code }}`, or `{{code}}` compact; trim markers and comments are
    written as they are either way (`{{-3}}` is the number -3 to Go, not a trim marker)."""
    code = action.code
    trim = action.trim
    if isinstance(action, Comment):
        compact = not action.spaced
    if compact:
        return ("{{- " if trim.left else "{{") + code + (" -}}" if trim.right else "}}")
    return ("{{- " if trim.left else "{{ ") + code + (" -}}" if trim.right else " }}")


@dataclass(frozen=True, slots=True)
class Text(Node):
    """Literal template text."""

    text: str

    @property
    def code(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class Block(Node):
    """A block to its `end`: an `if`, `range`, `with` (`Open`) or `define` (`Define`), its body,
    its `else` branches each with its body."""

    open: Open | Define
    body: tuple[Item, ...] = ()
    branches: tuple[tuple[Else, tuple[Item, ...]], ...] = ()
    end: End = End()

    def children(self) -> Iterator[Node]:
        yield self.open
        yield from self.body
        for head, body in self.branches:
            yield head
            yield from body
        yield self.end

    @property
    def code(self) -> str:
        return render_list((self,))


#: what a list holds: text, an action, a block
Item = Union[Text, Action, Template, Break, Continue, Comment, Block]


def render_list(items: tuple[Item, ...], compact: bool = False) -> str:
    """The text of a list of items (a template, a block's body)."""
    out: list[str] = []
    for item in items:
        if isinstance(item, Text):
            out.append(item.text)
        elif isinstance(item, Block):
            out.append(render(item.open, compact))
            out.append(render_list(item.body, compact))
            for head, body in item.branches:
                out.append(render(head, compact))
                out.append(render_list(body, compact))
            out.append(render(item.end, compact))
        else:
            out.append(render(item, compact))
    return "".join(out)
