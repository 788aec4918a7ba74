"""Bad input gives one clear error naming the problem; sources are found wherever HF keeps them."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from ollama_fc import oracle
from ollama_fc.cli import main
from ollama_fc.convert import TemplateSource, convert, load_source
from ollama_fc.errors import ConversionError, SourceError


def test_broken_jinja_names_the_line() -> None:
    with pytest.raises(ConversionError, match="line 2"):
        convert(TemplateSource("ok\n{% if x %}", {}, "t"))


def test_the_garbage_collector_is_as_the_caller_left_it_after_a_conversion_or_a_refusal() -> None:
    """convert() holds Python's collector off while it runs (see api.py); whatever happens,
    the caller's setting is back afterwards."""
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            convert(TemplateSource("{{ messages[0].content }}", {}, "t"))
            assert gc.isenabled() is enabled
            with pytest.raises(ConversionError):
                convert(TemplateSource("ok\n{% if x %}", {}, "t"))
            assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_unsupported_construct_names_construct_and_line() -> None:
    with pytest.raises(ConversionError, match=r"line 1: .*dict literal"):
        convert(TemplateSource("{{ {'a': 1} }}", {}, "t"))


@pytest.mark.parametrize(
    ("template", "construct"),
    [
        ("{{ '{:>4}'.format(messages[0].role) }}", "format spec"),
        ("{{ '{} {0}'.format(messages[0].role) }}", r"field \{0\}"),
        ("{{ '{} {}'.format(messages[0].role) }}", "without its argument"),
        ("{{ messages[0].content | tojson(separators=',') }}", "separators"),
        ("{{ messages[0].content.split('a', maxsplit=1)[-1] }}", "keyword or unpacked arguments"),
    ],
)
def test_format_and_tojson_options_python_refuses_or_go_cannot_follow(template: str, construct: str) -> None:
    with pytest.raises(ConversionError, match=rf"line 1: .*{construct}"):
        convert(TemplateSource(template, {}, "t"))


def test_a_macro_setting_an_attribute_of_a_namespace_it_is_given_is_refused_by_name() -> None:
    """The namespace is the caller's too; reading it in the macro converts (test_convert_constructs)."""
    template = (
        "{% macro add(n, t) %}{% set n.s = n.s + t %}{% endmacro %}{% set ns = namespace(s='') %}"
        "{% for m in messages %}{{ add(ns, m.content) }}{% endfor %}{{ ns.s }}"
    )
    with pytest.raises(ConversionError, match=r"line 1: macro add\(\) setting an attribute of the namespace"):
        convert(TemplateSource(template, {}, "t"))


def test_missing_file_and_non_gguf(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file"):
        load_source(tmp_path / "nope.jinja")
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a gguf")
    with pytest.raises(SourceError, match="not a GGUF"):
        load_source(fake)


def test_truncated_gguf_and_missing_template_say_what_to_do(tmp_path: Path) -> None:
    import struct

    truncated = tmp_path / "cut.gguf"
    truncated.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, 5, 99) + b"xx")
    with pytest.raises(SourceError, match="truncated or damaged, download it again"):
        load_source(truncated)
    (tmp_path / "tokenizer_config.json").write_text(json.dumps({"eos_token": "</s>"}))
    with pytest.raises(SourceError, match="no chat template found.*give the model's chat_template.jinja"):
        load_source(tmp_path / "tokenizer_config.json")


def test_tokenizer_config_default_template_and_added_tokens(tmp_path: Path) -> None:
    config = {
        "chat_template": [{"name": "tool_use", "template": "T"}, {"name": "default", "template": "{{ bos_token }}D"}],
        "bos_token": {"content": "<s>", "lstrip": False},
        "eos_token": "</s>",
    }
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    source = load_source(tmp_path)
    assert (source.template, source.tool_use) == ("{{ bos_token }}D", "T")
    assert source.special_tokens == {"bos_token": "<s>", "eos_token": "</s>"}
    config["add_bos_token"] = False  # the model does not add BOS: the template's own is kept
    (tmp_path / "tokenizer_config.json").write_text(json.dumps(config))
    template = convert(load_source(tmp_path)).template
    assert template.endswith("<s>D{{end}}") and "T{{else}}" in template


def test_broken_json_is_a_source_error(tmp_path: Path) -> None:
    (tmp_path / "tokenizer_config.json").write_text("{")
    with pytest.raises(SourceError, match="broken JSON"):
        load_source(tmp_path / "tokenizer_config.json")


def test_gguf_template_and_token_strings(tmp_path: Path) -> None:
    import gguf
    import numpy as np

    path = tmp_path / "m.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    writer.add_chat_template("{{ bos_token }}{% for m in messages %}{{ m.content }}{{ eos_token }}{% endfor %}")
    writer.add_token_list(["<unk>", "<s>", "</s>"])
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_tensor("x", np.zeros(4, dtype=np.float32))
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()
    source = load_source(path)
    assert source.special_tokens["bos_token"] == "<s>" and source.special_tokens["eos_token"] == "</s>"
    assert "</s>" in convert(path).parameters["stop"]


def test_cli_prints_one_line_and_exits_1(tmp_path: Path) -> None:
    bad = tmp_path / "bad.jinja"
    bad.write_text("{% for %}")
    result = CliRunner().invoke(main, ["convert", str(bad)])
    assert result.exit_code == 1
    assert result.output.strip().count("\n") == 0 and result.output.startswith("ollama-fc: ")


def test_cli_json_output(tmp_path: Path) -> None:
    source = tmp_path / "t.jinja"
    source.write_text("{% for m in messages %}<|{{ m.role }}|>{{ m.content }}<|end|>{% endfor %}")
    result = CliRunner().invoke(main, ["convert", str(source), "--json"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {"template", "parameters", "warnings", "capabilities"} <= set(data)
    assert data["parameters"]["stop"] == ["<|end|>"]
    # the template renders no tools: stderr says so in one line, the JSON on stdout stays whole
    assert "--tools-format" in result.stderr


def test_modelfile_holds_what_its_parser_would_drop_or_end_at() -> None:
    """Ollama's Modelfile parser ends TEMPLATE at a line ending in three quotes and drops
    unprintable runes; the Modelfile's template avoids both and renders the same."""
    jinja = 'say """\n{{ messages[0].content }}"""  \n{% if "\u00a0x" in messages[0].content %}nbsp\u00a0here{% endif %}\u200b"'
    conversion = convert(TemplateSource(jinja, {}, "t"))
    text = conversion.modelfile("base")
    assert text.startswith('FROM base\nTEMPLATE """')
    start = len('FROM base\nTEMPLATE """')
    quoted = text[start : text.index('"""\n', start)]
    assert not any(line.rstrip().endswith('"""') for line in quoted.splitlines())
    assert all(char.isprintable() or char == "\n" for char in quoted)
    for content in ("\u00a0x y", "plain"):
        messages = [{"role": "user", "content": content}]
        assert oracle.render(quoted, messages) == oracle.render(conversion.template, messages)


def test_template_read_from_a_pipe_is_read_whole(tmp_path: Path) -> None:
    """`ollama-fc convert /dev/stdin < t.jinja`: the source is a pipe, which can be read once."""
    import os
    import threading

    template = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    fifo = tmp_path / "template"
    os.mkfifo(fifo)
    loaded: dict[str, TemplateSource] = {}
    reader = threading.Thread(target=lambda: loaded.update(source=load_source(fifo)), daemon=True)
    reader.start()
    fifo.write_text(template)
    reader.join(10)
    if reader.is_alive():  # a second open waits for a writer that never comes: release it
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        reader.join(10)
    assert "source" in loaded and loaded["source"].template == template
