"""Go code read back into IR nodes (`ir.py`): for text the converter does not build as nodes
(the generated helpers' fixed text, a template read back). Only the forms the converter writes
are read (one space between tokens), and a node is returned only where it renders the very text
read: anything else is `Unread`.
"""

from __future__ import annotations

import re

from .ir import (
    NO_TRIM,
    Action,
    ActionNode,
    Bool,
    Break,
    Chain,
    Command,
    Comment,
    Continue,
    Define,
    Dot,
    Else,
    End,
    Field,
    Identifier,
    Nil,
    Number,
    Open,
    Operand,
    Pipe,
    String,
    Template,
    Trim,
    Variable,
    go_string,
    render,
)


class Unread(ValueError):
    """Code `read_code` does not read into nodes that render it back byte for byte."""


def read_action(raw: str) -> ActionNode:
    """The action `raw` (`{{ ... }}`, trim markers included) as a node."""
    inner = raw[2:-2]
    left = inner.startswith("- ")
    right = inner.endswith(" -")
    code = inner[2 if left else 0 : len(inner) - 2 if right else len(inner)]
    spaced = code.startswith(" /*")
    if code.lstrip(" ").startswith("/*"):
        text = code.strip(" ")[2:-2]
        comment = Comment(text, Trim(left, right), spaced)
        if render(comment) != raw:
            raise Unread(raw)
        return comment
    code = code.strip(" ")
    node = read_code(code, Trim(left, right))  # (which says `code` again, or raises)
    opening, closing = "{{- " if left else "{{", " -}}" if right else "}}"
    if raw != opening + code + closing and raw != ("{{- " if left else "{{ ") + code + (" -}}" if right else " }}"):
        raise Unread(raw)
    return node


def read_code(code: str, trim: Trim = NO_TRIM) -> ActionNode:
    """What one action says (`if eq $x 1`, `$y := len $x`...) as a node; `Unread` if it is not
    in the forms the converter writes (one space between tokens)."""
    tokens = _Tokens(code)
    word = tokens.peek()
    node: ActionNode
    if word in ("if", "range", "with"):
        tokens.next()
        node = Open(word, tokens.pipe(), trim)
    elif word == "else":
        tokens.next()
        if tokens.done():
            node = Else(trim=trim)
        else:
            sub = tokens.next()
            if sub not in ("if", "with"):
                raise Unread(code)
            node = Else(sub, tokens.pipe(), trim)
    elif word == "end":
        tokens.next()
        node = End(trim)
    elif word == "break":
        tokens.next()
        node = Break(trim)
    elif word == "continue":
        tokens.next()
        node = Continue(trim)
    elif word in ("define", "template"):
        tokens.next()
        name = tokens.next()
        if not name.startswith('"'):
            raise Unread(code)
        value = String(name).value
        if go_string(value) != name:
            raise Unread(code)  # (a name written with other escapes than the IR writes)
        if word == "define":
            node = Define(value, trim)
        else:
            node = Template(value, None if tokens.done() else tokens.pipe(), trim)
    else:
        node = Action(tokens.pipe(), trim)
    if not tokens.done():
        raise Unread(code)
    return node


#: a token of an action's code: spaces (1), a string, `:=`, `(`, `)`, `|`, `,`, `=` or a word (2),
#: anything else (3)
_TOKEN = re.compile(r'( +)|("(?:[^"\\]|\\.)*"|`[^`]*`|:=|[()|,=]|[^ ()|,="`:]+)|(.)', re.S)


def _lex(code: str) -> list[str]:
    """The tokens of `code`, spaces dropped: strings, `(`, `)`, `|`, `:=`, `=`, `,`, and words
    (`$x.Role`, `.Name`, `printf`, `-1`); a `.Field` right after `)` is its own token. `code`
    must be spaced as the IR writes it (`_spaced`): the nodes read then render it again."""
    tokens: list[str] = []
    for _space, token, other in _TOKEN.findall(code):
        if other:
            raise Unread(code)
        if token:
            tokens.append(token)
    if _spaced(tokens) != code:
        raise Unread(code)
    return tokens


def _spaced(tokens: list[str]) -> str:
    """The tokens spaced as the nodes render them: one space between two, none after `(`,
    before `)` or `,`, nor between `)` and the field chain after it."""
    out: list[str] = []
    previous = "("
    for token in tokens:
        if not (previous == "(" or token == ")" or token == "," or (previous == ")" and token[0] == ".")):
            out.append(" ")
        out.append(token)
        previous = token
    return "".join(out)


class _Tokens:
    def __init__(self, code: str) -> None:
        try:
            self.tokens = _lex(code)
        except ValueError as error:
            raise Unread(code) from error
        self.at = 0
        self.code = code

    def peek(self, ahead: int = 0) -> str:
        at = self.at + ahead
        return self.tokens[at] if at < len(self.tokens) else ""

    def next(self) -> str:
        token = self.peek()
        if not token:
            raise Unread(self.code)
        self.at += 1
        return token

    def done(self) -> bool:
        return self.at >= len(self.tokens)

    def pipe(self) -> Pipe:
        decl: list[str] = []
        ahead = 0
        while self.peek(ahead).startswith("$") and self.peek(ahead + 1) in (",", ":=", "="):
            decl.append(self.peek(ahead))
            if self.peek(ahead + 1) != ",":
                break
            ahead += 2
        is_assign = False
        if decl and self.peek(ahead + 1) in (":=", "="):
            is_assign = self.peek(ahead + 1) == "="
            self.at += ahead + 2
        else:
            decl = []
        cmds = [self.command()]
        while self.peek() == "|":
            self.next()
            cmds.append(self.command())
        return Pipe(tuple(cmds), tuple(decl), is_assign)

    def command(self) -> Command:
        args: list[Operand] = []
        while self.peek() not in ("", "|", ")"):
            args.append(self.operand())
        if not args:
            raise Unread(self.code)
        return Command(tuple(args))

    def operand(self) -> Operand:
        token = self.next()
        if token == "(":
            pipe = self.pipe()
            if self.next() != ")":
                raise Unread(self.code)
            if self.peek().startswith("."):
                return Chain(pipe, _fields(self.next()[1:]))
            return pipe
        if token.startswith("$"):
            name, _, rest = token.partition(".")
            if name != "$" and not name[1:].isidentifier():
                raise Unread(self.code)
            return Variable(name, _fields(rest) if rest else ())
        if token == ".":
            return Dot()
        if token.startswith("."):
            return Field(_fields(token[1:]))
        if token[0] in '"`':
            return String(token)
        if token in ("true", "false"):
            return Bool(token == "true")
        if token == "nil":
            return Nil()
        if token[0].isdigit() or token[0] in "-+":
            return Number(token)
        if token.isidentifier():
            return Identifier(token)
        raise Unread(self.code)


def _fields(text: str) -> tuple[str, ...]:
    names = tuple(text.split("."))
    if not all(name.isidentifier() for name in names):
        raise Unread(text)
    return names
