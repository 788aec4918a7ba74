"""Shared fixtures: the Ollama servers of the test session, and scripted models on them.

Every test that uses `ollama_server` (or `ollama_host`, `scripted_model`) runs once per tier:
the pinned v0.24.0 and the current 0.3x release (`ollama_fc/testbed/tiers.py`), with the tier
and version in its id (`[current-v0.34.4]`). `--ollama-tier NAME` (repeatable) keeps some.
In one pytest process one server runs at a time: pytest groups the tests of each tier. `.ci/run`
runs the tiers side by side, one pytest-xdist worker and one server each (`--dist loadscope`
with the scheduler below).

With CI=true a server that cannot be provisioned or started fails the run; elsewhere the
tests that need it are skipped with the reason, so pure tests still run on a laptop.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any

import pytest

from ollama_fc.errors import OllamaFcError
from ollama_fc.testbed.tiers import TIERS, Tier
from tests.shared_data import IN_CI

ScriptedModel = Callable[..., str]

#: Threads a runner computes a scripted model with. Its weights are a few hundred KiB, so a second
#: thread only adds a barrier per layer, and on a busy machine a barrier whose other thread is
#: descheduled spins for a time slice: one thread made a warm chat about 50 times faster at a load
#: of 20 on two cores (0.02 s instead of 1.3 s on v0.24.0). Set per scripted model (`num_thread`)
#: and, for 0.3x, as llama-server's default (`LLAMA_ARG_THREADS`), which models built by
#: `ollama-fc build` in the tests also use; v0.24.0 has no such default.
SCRIPTED_THREADS = 1


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--ollama-tier",
        action="append",
        choices=list(TIERS),
        help="run the server tests on this Ollama tier only (repeatable; default: every tier)",
    )


def _tiers(config: pytest.Config) -> list[Tier]:
    chosen = config.getoption("--ollama-tier") or list(TIERS)
    return [TIERS[name] for name in TIERS if name in chosen]


def pytest_report_header(config: pytest.Config) -> str:
    tiers = ", ".join(f"{tier.name} {tier.version}" for tier in _tiers(config))
    return f"Ollama tiers: {tiers}" + (" (CI: a missing server fails the run)" if IN_CI else "")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that reaches `ollama_server`, directly or through a fixture, runs per tier."""
    if "ollama_server" in metafunc.fixturenames:
        tiers = _tiers(metafunc.config)
        metafunc.parametrize("ollama_server", tiers, indirect=True, scope="session", ids=[tier.label for tier in tiers])


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """Tests that use the server are marked `ollama`, so `-m "not ollama"` selects the rest.

    In `.ci/run`'s workers the tiers' tests then come first, after pytest has grouped each tier's
    tests and deselected (see pytest_xdist_make_scheduler).
    """
    for item in items:
        if "ollama_server" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.ollama)
    yield
    if os.environ.get("PYTEST_XDIST_WORKER") and config.getvalue("dist") == "loadscope":
        order = list(TIERS)
        items.sort(key=lambda item: order.index(tier) if (tier := _tier_of(item.nodeid)) else len(order))


# -- `.ci/run`: the tiers side by side (pytest-xdist, `--numprocesses 2 --dist loadscope`) --------


def _tier_of(nodeid: str) -> str | None:
    """The tier a test runs on, read from its id (`[pinned-v0.24.0-...]`), or None."""
    for tier in TIERS.values():
        if re.search(rf"[\[-]{re.escape(tier.label)}[\]-]", nodeid):
            return tier.name
    return None


#: the test files that run a real model (Qwen2.5-Coder, and SmolLM2 whose template has no tools)
REAL_MODEL_TESTS = ("test_real_model.py::", "test_tools_format_e2e.py::")


@pytest.hookimpl(optionalhook=True)
def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The real-model tests by name, tier and outcome, so a log shows that a real model ran on
    each tier (the summary counts alone cannot)."""
    lines = [
        f"{report.outcome.upper()} {report.nodeid}"
        for outcome in ("passed", "failed", "skipped")
        for report in terminalreporter.stats.get(outcome, [])
        if any(name in getattr(report, "nodeid", "") for name in REAL_MODEL_TESTS)
        and (report.when == "call" or report.outcome != "passed")
    ]
    if lines:
        terminalreporter.write_sep("=", f"real model ({len(lines)} tests)")
        for line in lines:
            terminalreporter.write_line(line)


def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    """With `--dist loadscope`, all tests of a tier are one scope, so one worker runs them against
    one server started once, and the tiers are handed out first, one to each worker; the other
    tests follow by module, so a module's fixtures (a corpus survey, an oracle pair) are made once.
    """
    if config.getvalue("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class TiersFirst(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            tier = _tier_of(nodeid)
            return f"tier {tier}" if tier else nodeid.split("::", 1)[0]

        def schedule(self) -> None:
            config.option.loadscopereorder = False  # the order the workers collected: tiers first
            super().schedule()

    return TiersFirst(config, log)


@contextmanager
def _environment(**values: object) -> Iterator[None]:
    """These environment variables set (unless already set) while the block runs."""
    added = {name: str(value) for name, value in values.items() if name not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@pytest.fixture(scope="session")
def engine() -> Iterator[Any]:
    """Ollama's own template package (the pinned version's oracle), one process for the session."""
    from ollama_fc import oracle

    with oracle.Oracle() as pinned:
        yield pinned


@pytest.fixture(scope="session")
def engines() -> Iterator[Any]:
    """Both Ollama versions' template packages (pinned and latest oracle), by version, for the
    differential tests (`renders.ollama_renders`)."""
    from ollama_fc import oracle
    from ollama_fc.verify.runner import open_oracles

    with open_oracles((oracle.PINNED, oracle.LATEST)) as both:
        yield both


@pytest.fixture(scope="session")
def ollama_server(request: pytest.FixtureRequest) -> Iterator[Any]:
    """`ollama serve` of one tier (the test's parameter) on a free loopback port.

    Started once per tier for the session; the previous tier's server stops first. Its llama-server
    runners (0.3x) compute with one thread unless a model says otherwise: see SCRIPTED_THREADS.
    """
    from ollama_fc.testbed.server import OllamaServer

    tier: Tier = request.param
    server = OllamaServer(tier)
    try:
        with _environment(LLAMA_ARG_THREADS=SCRIPTED_THREADS):
            server.start()
    except OllamaFcError as exc:
        server.cleanup()
        if IN_CI:
            pytest.fail(f"the {tier.name} Ollama {tier.version} server is required in CI: {exc}", pytrace=False)
        pytest.skip(f"{tier.name} Ollama {tier.version} server unavailable: {exc}")
    try:
        yield server
    finally:
        server.cleanup()


@pytest.fixture(scope="session")
def ollama_host(ollama_server: Any) -> str:
    return str(ollama_server.host)


@pytest.fixture(scope="session")
def scripted_model(ollama_host: str, tmp_path_factory: pytest.TempPathFactory) -> ScriptedModel:
    """Factory: create a scripted model on the server and return its name.

    `scripted_model(script, *, after=None, trigger="<tool_response>", template, special_tokens=(),
    parameters=None, parser=None, name=None, chat_template=None)`. The same arguments give the
    same model (created once). `parser` is the create request's `parser` field (e.g.
    "passthrough"), sent as `ollama-fc build` sends it; `chat_template` is a Jinja template
    stored in the GGUF (as a converted Hugging Face model has one).
    """
    import ollama

    from ollama_fc.build import create_model
    from ollama_fc.testbed.scripted import write_scripted_gguf

    client = ollama.Client(host=ollama_host)
    folder = tmp_path_factory.mktemp("scripted")
    created: dict[str, str] = {}

    def create(
        script: str,
        *,
        after: str | None = None,
        trigger: str = "<tool_response>",
        template: str,
        special_tokens: Sequence[str] = (),
        parameters: Mapping[str, Any] | None = None,
        parser: str | None = None,
        name: str | None = None,
        chat_template: str | None = None,
    ) -> str:
        recipe = json.dumps(
            [script, after, trigger, template, list(special_tokens), parameters, chat_template, parser],
            sort_keys=True,
            default=str,
        )
        key = hashlib.sha256(recipe.encode()).hexdigest()[:12]
        model = name or f"scripted-{key}"
        if created.get(model) == recipe:
            return model
        path = write_scripted_gguf(
            folder / f"{key}.gguf",
            script,
            after=after,
            trigger=trigger,
            special_tokens=special_tokens,
            chat_template=chat_template,
        )
        digest = client.create_blob(path)
        for _ in create_model(
            client,
            model,
            parser=parser,
            files={path.name: digest},
            template=template,
            parameters={"num_thread": SCRIPTED_THREADS, **(parameters or {})},
        ):
            pass
        created[model] = recipe
        return model

    return create


@pytest.fixture(scope="session")
def proxy(ollama_host: str) -> Iterator[str]:
    """`ollama-fc serve` in front of the tier's server (a thread of the test process)."""
    from ollama_fc.serve import ProxyThread

    with ProxyThread(ollama_host) as running:
        yield running.url


@pytest.fixture(scope="session")
def family_models(ollama_host: str, tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """Each seed family built with `ollama-fc build` over a scripted GGUF that prints its native
    call, then (once the tool result is in its prompt) the answer."""
    from ollama_fc.build import build
    from ollama_fc.families import load_family
    from ollama_fc.testbed.scripted import write_scripted_gguf
    from tests.family_cases import ANSWER, CASES

    folder = tmp_path_factory.mktemp("families")
    models = {}
    for family, case in CASES.items():
        gguf = write_scripted_gguf(
            folder / f"{family}.gguf",
            case.call + case.end,
            after=ANSWER + case.end,
            trigger=case.trigger,
            special_tokens=load_family(family).recipe.special_tokens.control,
        )
        models[family] = build(family, from_=str(gguf), name=f"proxy-{family}", host=ollama_host).name
    return models
