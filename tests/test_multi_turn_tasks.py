"""The multi-turn benchmark's tasks (benchmarks/data/multi_turn_tasks.json) and their scoring.

The multi-turn table says how often a conversation finishes with an answer that uses the tool's
result: a task whose check passed any answer, or whose calls could not be right, would make that
number meaningless. No server.
"""

from __future__ import annotations

import json
from collections import Counter

import pytest

from benchmarks.multi_turn_tasks import KINDS, NO_DATA, Run, judge, load_tasks, task_functions
from benchmarks.real_model_multiturn import first_call
from benchmarks.real_model_scoring import Call
from ollama_fc import function_to_tool, validate_arguments
from ollama_fc.toolchoice import NONE_NOTE

TASK_SET = load_tasks()
TASKS = {task.id: task for task in TASK_SET.tasks}


def test_there_are_forty_tasks_of_the_four_kinds() -> None:
    kinds = Counter(task.kind for task in TASK_SET.tasks)
    assert len(TASK_SET.tasks) == len(TASKS) >= 40  # ids are unique
    assert set(kinds) == set(KINDS) and min(kinds.values()) >= 10
    assert all(len(task.steps) == 2 for task in TASK_SET.tasks if task.kind == "two_calls")
    assert all(len(task.steps) == 1 for task in TASK_SET.tasks if task.kind != "two_calls")


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_each_task_is_well_formed(task_id: str) -> None:
    task = TASKS[task_id]
    assert task.question.strip() and task.must and all(task.must)
    assert set(task.tools) <= set(TASK_SET.tools)
    for step in task.steps:
        assert step.call.name in task.tools and step.result.strip()
    name, arguments, result = first_call(task)
    validate_arguments(name, TASK_SET.tools[name]["function"]["parameters"], arguments)
    assert task.result_of(name, arguments) == result
    assert task.result_of("no_such_tool", {}) == NO_DATA.format(name="no_such_tool")
    if task.kind == "error_result":
        assert all(step.result.startswith("Error:") for step in task.steps)


@pytest.mark.parametrize("task_id", sorted(TASKS))
def test_each_tasks_check_can_pass_and_can_fail(task_id: str) -> None:
    """The words the check wants are in the results (a model can find them there), and an answer
    that ignores the results, the call written again as text, or no answer, fails."""
    task = TASKS[task_id]
    name, arguments, _ = first_call(task)
    assert task.uses_result(" ".join(step.result for step in task.steps))
    for wrong in ("I don't know.", "Let me check that for you.", task.question, NONE_NOTE, "", None):
        assert not task.uses_result(wrong)
    right = [Call(step.call.name, step.arguments()) for step in task.steps]
    assert task.calls_right(right)
    assert task.calls_right([*right, right[0]])  # a repeat is counted apart, not as a wrong call
    assert not task.calls_right(right[:-1] if len(right) > 1 else [])
    assert not task.calls_right([*right, Call("no_such_tool", {})])
    written = json.dumps({"name": name, "arguments": arguments})
    answer = " ".join(step.result for step in task.steps)
    assert judge(task, TASK_SET, Run("t", "a", task.id, task.kind, right, answer)).finished
    shaped = judge(task, TASK_SET, Run("t", "a", task.id, task.kind, right, written + " " + answer))
    assert shaped.call_shaped and not shaped.finished
    assert not judge(task, TASK_SET, Run("t", "a", task.id, task.kind, right, answer, error="refused")).finished


def test_the_tools_run_tools_runs_have_the_files_schemas() -> None:
    for task in TASK_SET.tasks:
        functions = task_functions(TASK_SET, task)
        assert [function_to_tool(function) for function in functions] == TASK_SET.tool_dicts(task)
        name, arguments, result = first_call(task)
        assert dict(zip(task.tools, functions))[name](**arguments) == result
