"""Go template code as data (convert/go/ir.py): the nodes know what they read, declare, assign
and call, render the one text Go parses, and code reads back into nodes that render it byte for
byte (every action of every corpus conversion does: tests/test_convert_tree.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ollama_fc.convert.go import ir, irread

ROLE = ir.Variable("$m", ("Role",))
DECLARE = ir.Action(ir.Pipe((ir.Command((ir.Identifier("len"), ir.Variable("$s"))),), ("$n",)))
CONDITION = ir.Open(
    "if",
    ir.call("and", ir.call("eq", ROLE, ir.String.of("user")), ir.call("not", ir.Variable("$seen"))),
)


def test_nodes_render_the_go_they_stand_for() -> None:
    assert CONDITION.code == 'if and (eq $m.Role "user") (not $seen)'
    assert ir.render(CONDITION) == '{{ if and (eq $m.Role "user") (not $seen) }}'
    assert ir.render(CONDITION, compact=True) == '{{if and (eq $m.Role "user") (not $seen)}}'
    assert ir.render(DECLARE) == "{{ $n := len $s }}"
    assign = ir.Action(ir.Pipe((ir.Command((ir.Bool(True),)),), ("$a", "$b"), is_assign=True))
    assert assign.code == "$a, $b = true"
    chain = ir.Chain(ir.call("index", ir.Field(("Messages",)), ir.Number.of(0)), ("Content",))
    assert ir.Action(ir.operand_pipe(chain)).code == "(index .Messages 0).Content"
    assert ir.Template("ofc_json", ir.operand_pipe(ir.Dot())).code == 'template "ofc_json" .'
    assert ir.Else("if", ir.operand_pipe(ir.Nil())).code == "else if nil"
    trimmed = ir.Action(ir.operand_pipe(ir.Variable("$q")), ir.Trim(left=True))
    assert (ir.render(trimmed), ir.render(trimmed, compact=True)) == ("{{- $q }}", "{{- $q}}")
    assert ir.render(ir.Comment("x")) == ir.render(ir.Comment("x"), compact=True) == "{{/*x*/}}"


def test_a_string_literal_is_the_string_it_quotes() -> None:
    literal = ir.String.of('a "b"\n\x01\\')
    assert literal.quoted == '"a \\"b\\"\\n\\x01\\\\"'
    assert literal.value == 'a "b"\n\x01\\'
    assert ir.String("`raw\\n`").value == "raw\\n"


def test_nodes_know_what_they_read_declare_assign_and_call() -> None:
    assert CONDITION.reads() == {"$m", "$seen"}
    assert CONDITION.functions() == {"and", "eq", "not"}
    assert [literal.value for literal in CONDITION.strings()] == ["user"]
    assert DECLARE.declares() == ("$n",) and DECLARE.reads() == {"$s"} and DECLARE.assigns() == ()
    loop = irread.read_code("range $i, $x := .Messages")
    assert loop.declares() == ("$i", "$x") and loop.reads() == frozenset()
    assert irread.read_code('$s = printf "%s%v" $s $x').assigns() == ("$s",)
    call = irread.read_code('template "ofc_macro_f" (dict "a" $a)')
    assert call.calls() == ("ofc_macro_f",) and call.reads() == {"$a"}
    block = ir.Block(CONDITION, (ir.Text("a"), DECLARE), ((ir.Else(), (call,)),))  # type: ignore[arg-type]
    assert block.reads() == {"$m", "$seen", "$s", "$a"} and block.calls() == ("ofc_macro_f",)
    assert block.code == '{{ if and (eq $m.Role "user") (not $seen) }}a{{ $n := len $s }}{{ else }}' + (
        '{{ template "ofc_macro_f" (dict "a" $a) }}{{ end }}'
    )


@pytest.mark.parametrize(
    "code",
    [
        'if or (ne $_95 109) (eq (printf "%.1s" (slice $ofc_final.Content $_94)) "\\x85" "\\u3000")',
        '$_3726 = len (printf "%*s." $_3726 "")',
        "range $_70 := len $_63",
        'else if eq (printf "%.2T" $_99) "[]"',
        "$x := .Messages | len",
        "(index $m.ToolCalls 0).Function.Name",
        "$_1 := -1",
        'define "ofc_repr_str"',
        '$x := `a "raw" string`',
    ],
)
def test_code_reads_back_into_the_nodes_that_write_it(code: str) -> None:
    assert irread.read_code(code).code == code


@pytest.mark.parametrize("code", ["if  $x", "$x :=", "printf (", "end $x", "template $x", "$x.1"])
def test_code_not_in_the_written_forms_is_not_read(code: str) -> None:
    with pytest.raises(irread.Unread):
        irread.read_code(code)


def test_trim_markers_and_comments_read_back() -> None:
    for raw in ("{{- if $x }}", "{{- $q }}", "{{ $a -}}", "{{ /* a note */ }}"):
        assert ir.render(irread.read_action(raw)) == raw
    for raw in ("{{-3}}", "{{/**/}}", "{{- $q}}"):
        assert ir.render(irread.read_action(raw), compact=True) == raw
    assert irread.read_action("{{-3}}") == ir.Action(ir.operand_pipe(ir.Number("-3")))


def test_rendered_nodes_parse_and_run_in_ollamas_template_package(engine: Any) -> None:
    """Each kind of node, rendered spaced and compact, is a template Ollama parses and runs."""
    first = ir.Variable("$first")
    items: tuple[ir.Item, ...] = (
        ir.Action(ir.Pipe((ir.Command((ir.Bool(True),)),), ("$first",))),
        ir.Block(
            ir.Open("range", ir.Pipe((ir.Command((ir.Field(("Messages",)),)),), ("$i", "$m"))),
            (
                ir.Block(ir.Open("if", ir.call("not", first)), (ir.Text(","),)),
                ir.Action(ir.Pipe((ir.Command((ir.Bool(False),)),), ("$first",), is_assign=True)),
                ir.Block(
                    ir.Open("if", ir.call("eq", ir.Variable("$m", ("Role",)), ir.String.of("user"))),
                    (
                        ir.Action(
                            ir.call("printf", ir.String.of("%s:%d"), ir.Variable("$m", ("Content",)), ir.Variable("$i"))
                        ),
                    ),
                    ((ir.Else("if", ir.operand_pipe(ir.Bool(False))), (ir.Break(),)), (ir.Else(), (ir.Continue(),))),
                ),
            ),
        ),
        ir.Comment(" done "),
        ir.Block(
            ir.Open(
                "with", ir.operand_pipe(ir.Chain(ir.call("index", ir.Field(("Messages",)), ir.Number.of(0)), ("Role",)))
            ),
            (ir.Text("|"), ir.Action(ir.operand_pipe(ir.Dot())), ir.Action(ir.call("print", ir.Nil()))),
        ),
        ir.Template("tail", ir.operand_pipe(ir.String.of("!"))),
        ir.Block(ir.Define("tail"), (ir.Action(ir.operand_pipe(ir.Dot())),)),
    )
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    for compact in (False, True):
        rendered = engine.render(ir.render_list(items, compact), messages)
        assert (rendered.error, rendered.prompt) == (None, "hi:0,|user<nil>!")


CONVERTER = Path(__file__).resolve().parents[1] / "ollama_fc" / "convert"
#: the actions the converter still writes as whole text (`emit.action(code)`: the escape hatch
#: while its values are text); the typed verbs (`end()`, `declare(var, code)`...) are not counted.
#: The number may only fall: lower it when a change writes fewer.
TEXT_ACTIONS_AT_MOST = 8
#: regular expressions in the converter, each reading text that is not Go the converter wrote:
#: the IR reader's one token pattern, the lexer of a template's actions (`tree.ACTION_SPAN`),
#: str() of a Jinja constant (`comparisons`), a reference render's tool tag (`api`), and the
#: Modelfile quoting of the finished template (`result`). May only fall.
REGEXES_AT_MOST = 5


def test_the_text_escape_hatch_and_the_regexes_only_fall() -> None:
    sources = [path.read_text(encoding="utf-8") for path in CONVERTER.rglob("*.py")]
    assert sum(source.count(".action(") for source in sources) <= TEXT_ACTIONS_AT_MOST
    regex_calls = ("re.compile(", "re.match(", "re.search(", "re.sub(", "re.fullmatch(", "re.findall(", "re.split(")
    assert sum(source.count(call) for source in sources for call in regex_calls) <= REGEXES_AT_MOST


def test_the_typed_verbs_write_the_actions_they_name() -> None:
    from ollama_fc.convert.go.verbs import Verbs

    class Collect(Verbs[str]):
        def action(self, code: str) -> str:
            return code

    em = Collect()
    assert [em.end(), em.else_(), em.break_(), em.continue_()] == ["end", "else", "break", "continue"]
    assert (em.declare("$x", "len $y"), em.assign("$x", '""')) == ("$x := len $y", '$x = ""')
    assert em.write(ir.Template("f", ir.operand_pipe(ir.Dot()))) == 'template "f" .'
    length = ir.command("len", ir.Variable("$y"))
    assert em.declare("$x", length) == "$x := len $y"  # a command: the whole pipeline
    assert em.assign("$x", ir.Pipe((length,))) == "$x = (len $y)"  # an operand: in parentheses
    assert em.range_(ir.Variable("$m", ("All",)), "$k", "$v") == "range $k, $v := $m.All"


def test_an_action_written_as_ir_reaches_the_tree_as_that_ir() -> None:
    """The tree's passes ask the node an action was written from; only text is read back."""
    from ollama_fc.convert.go import tree

    written = tree.Act.of(DECLARE)
    block = tree.Act.of(CONDITION)
    built = tree.build([block, written, tree.Act("end"), tree.Act("$y := len $s")])
    opened, plain = built
    assert isinstance(opened, tree.Block) and opened.written == CONDITION and opened.node.reads() == {"$m", "$seen"}
    assert isinstance(opened.body[0], tree.Action) and opened.body[0].written == DECLARE
    assert isinstance(plain, tree.Action) and plain.written is None and plain.node.declares() == ("$y",)
    assert (
        tree.render(built)
        == '{{ if and (eq $m.Role "user") (not $seen) }}{{ $n := len $s }}{{ end }}{{ $y := len $s }}'
    )


def test_a_value_holds_its_operand_as_ir() -> None:
    from ollama_fc.convert.ops.values import STR, Value, const

    role = Value.of(ROLE, STR)
    assert (role.code, role.node, role.reads_field("Role")) == ("$m.Role", ROLE, True)
    assert const("a\n").node == ir.String.of("a\n") and const(3).node == ir.Number("3")
    assert Value("(index $m 0).Content", STR).reads_field("Content")  # (text read once, when asked)
    assert not Value("$m", STR).reads_field("Role")


#: the seed templates (tools, JSON, repr, loops, macros, a prefilled reply): what a conversion
#: of each still reads back of the Go text it wrote
READ_BACK_SEEDS = (
    "gemma3-tools.jinja",
    "minimax-text-01.jinja",
    "phi4-mini-functools.jinja",
    "qwen2.5-hermes.jinja",
    "typhoon2-llama3.1-function-list.jinja",
)
#: Go text read back into IR while converting `READ_BACK_SEEDS` and every corpus template from
#: cold caches: the converter builds its actions and operands as IR, and its generated helpers
#: (the JSON and repr writers) too, so none is read. May only fall: it is none.
READ_BACKS_AT_MOST = 0


def test_a_conversion_reads_none_of_the_go_it_composed_back(monkeypatch: pytest.MonkeyPatch) -> None:
    from ollama_fc.convert import convert
    from ollama_fc.convert.go import gohelpers, tree
    from ollama_fc.convert.ops import conditions
    from ollama_fc.convert.sources import TemplateSource, load_source
    from ollama_fc.errors import ConversionError

    from .shared_data import SHARED, seed_template

    read: list[str] = []
    reader = irread.read_code

    def counted(code: str, trim: ir.Trim = ir.NO_TRIM) -> ir.ActionNode:
        read.append(code)
        return reader(code, trim)

    monkeypatch.setattr(irread, "read_code", counted)
    for cache in (tree.node_of, tree.operand, conditions._condition, gohelpers.json_writers):
        cache.cache_clear()  # (what an earlier conversion in this process read is read again)
    for name in READ_BACK_SEEDS:
        convert(TemplateSource(seed_template(name), {}, name))
    for path in sorted((SHARED / "corpus" / "templates").glob("*.jinja")):  # (none where it is absent)
        try:
            convert(load_source(path))
        except ConversionError:
            pass  # (refused: what it wrote before is still counted)
    assert len(read) <= READ_BACKS_AT_MOST, f"{len(read)} pieces of Go text read back: {read[:5]}"


def test_an_html_escape_takes_a_variable_bare_and_any_other_value_in_parentheses() -> None:
    """What `html` is given is asked of its IR (a variable, a call, a command), not its text."""
    from ollama_fc.convert.go.calls import GoCall, go_variable
    from ollama_fc.convert.go.textops import html_of

    assert html_of("$k") == "html $k" and html_of(go_variable("$m")) == "html $m"
    assert html_of("$m.Content") == "html $m.Content"
    assert html_of("json .") == "html (json .)"
    call = GoCall("printf", "$k", "$v")
    assert html_of(call) == "html ((printf $k $v))" and html_of(call.bare()) == "html (printf $k $v)"
    escaped = html_of("$k", parenthesised=True)
    assert escaped == "(html $k)" and escaped.node == ir.call("html", ir.Variable("$k"))


#: where Go text is read or printed as text: the reader (irread), the tree's lexer and printer
#: (tree)
GO_TEXT_MODULES = {"go/irread.py", "go/tree.py"}
#: (module, function) allowed to test Go text elsewhere: a variable's name given as text is
#: known to be that variable (the helpers' emitter names its temporaries as text)
GO_TEXT_READERS = {("go/calls.py", "expression_of")}
#: modules using regular expressions on text that is not Go: Python values (comparisons),
#: the rendered Jinja output (api), the Modelfile's quoting (result)
REGEX_MODULES = {"go/irread.py", "go/tree.py", "ops/comparisons.py", "api.py", "result.py"}
STRING_TESTS = {
    "startswith", "endswith", "split", "rsplit", "partition", "rpartition", "find", "rfind",
    "index", "count", "strip", "lstrip", "rstrip", "removeprefix", "removesuffix",
}  # fmt: skip


def _go_text(node: object) -> bool:
    """Is `node` an expression holding Go code as text, by its name (`code`, `raw`, `x.code`,
    `list_code`...)?"""
    import ast

    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else None
    if isinstance(node, ast.BoolOp):
        return any(_go_text(value) for value in node.values)
    return name is not None and (name in {"code", "raw"} or name.endswith("_code"))


def _text_tests(tree: object) -> list[tuple[str, int, str]]:
    """(function, line, source) of each test over Go text in a module's syntax tree: an
    action's `.raw` read, a string method on Go code, a slice of it, a comparison of it with a
    string or with other Go code, a substring test in it."""
    import ast

    found: list[tuple[str, int, str]] = []

    def visit(node: ast.AST, function: str) -> None:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            function = node.name
        hit = (
            (isinstance(node, ast.Attribute) and node.attr == "raw")
            or (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in STRING_TESTS
                and _go_text(node.func.value)
            )
            or (isinstance(node, ast.Subscript) and _go_text(node.value))
            or (
                isinstance(node, ast.Compare)
                and any(_go_text(side) for side in (node.left, *node.comparators))
                and any(
                    (isinstance(side, ast.Constant) and isinstance(side.value, str))
                    or (_go_text(side) and isinstance(op, (ast.Eq, ast.NotEq)))
                    or isinstance(op, (ast.In, ast.NotIn))
                    for op, side in zip(
                        node.ops, (node.left, *node.comparators)[1:] if _go_text(node.left) else node.comparators
                    )
                )
            )
        )
        if hit:
            found.append((function, getattr(node, "lineno", 0), ast.unparse(node)))
        for child in ast.iter_child_nodes(node):
            visit(child, function)

    visit(tree, "")  # type: ignore[arg-type]
    return found


def test_no_pass_tests_the_go_it_wrote_as_text() -> None:
    """The converter asks the IR node an action or operand was written from: outside the
    modules that read and print Go text, no `.raw`, no `startswith`/slice/comparison of Go code
    as text, no regular expression over it."""
    import ast

    package = Path(__file__).resolve().parent.parent / "ollama_fc" / "convert"
    tests, regexes = [], []
    for path in sorted(package.rglob("*.py")):
        name = path.relative_to(package).as_posix()
        module = ast.parse(path.read_text(encoding="utf-8"))
        imports = {alias.name for node in ast.walk(module) if isinstance(node, ast.Import) for alias in node.names}
        if "re" in imports and name not in REGEX_MODULES:
            regexes.append(name)
        if name in GO_TEXT_MODULES:
            continue
        tests += [(name, *hit) for hit in _text_tests(module) if (name, hit[0]) not in GO_TEXT_READERS]
    assert tests == [] and regexes == []
