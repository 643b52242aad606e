"""Property tests over every tool's arguments (issue 18): for any value a flag's type rejects — or a name outside
its choices — the tool exits 2 with ONE line on stderr, no traceback, and leaves nothing in the temp dir.

The parsers are read from the tools themselves: ``parse_args`` is intercepted once per tool to capture its
``ArgumentParser`` (and sub-parsers), so a new flag is covered the day it is added.
"""
from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import tempfile

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from helpers.__main__ import TOOLS
from helpers.core import cli


class _Captured(Exception):
    def __init__(self, parser):
        self.parser = parser


def parser_of(tool: str) -> argparse.ArgumentParser:
    mod = importlib.import_module(TOOLS[tool])
    real = argparse.ArgumentParser.parse_args

    def capture(self, *a, **k):
        raise _Captured(self)

    argparse.ArgumentParser.parse_args = capture
    try:
        mod.main(["--help"])
    except _Captured as c:
        return c.parser
    finally:
        argparse.ArgumentParser.parse_args = real
    raise AssertionError(f"{tool}: main() did not call parse_args")


def flags(tool: str):
    """(prefix argv, option string, action) for every option that takes a value, sub-commands included."""
    out = []

    def walk(p: argparse.ArgumentParser, prefix: list[str]):
        for act in p._actions:
            if isinstance(act, argparse._SubParsersAction):
                for name, sub in act.choices.items():
                    walk(sub, prefix + [name])
            elif act.option_strings and act.nargs != 0 and (act.type is not None or act.choices):
                out.append((prefix, act.option_strings[-1], act))
    walk(parser_of(tool), [])
    return out


CASES = [(tool, prefix, opt, act) for tool in TOOLS for prefix, opt, act in flags(tool)]

hostile = st.one_of(
    st.sampled_from(["", " ", "-1", "0", "-0.5", "nan", "inf", "-inf", "1e400", "99999999999999999999999",
                     "1,,2", ",", "abc", "1.5.2", "4Q", "-4K", "１２", "*", "../../etc", "\x00", "0x10", "1e-400", "/", ".", "/dev/null/x.json"]),
    st.text(min_size=0, max_size=12),
    st.integers(min_value=-10**12, max_value=10**12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
)


def rejected(act: argparse.Action, value: str) -> bool:
    """Would argparse refuse ``value`` for this action (type error or outside choices)?"""
    try:
        v = act.type(value) if act.type else value
    except (argparse.ArgumentTypeError, ValueError, TypeError):
        return True
    if act.choices is not None:
        vals = v if isinstance(v, list) else [v]
        return any(x not in act.choices for x in vals)
    return False


@pytest.mark.parametrize("tool, prefix, opt, act", CASES, ids=[f"{t}:{' '.join(p + [o])}" for t, p, o, _ in CASES])
@settings(max_examples=12, deadline=None, derandomize=True,      # the same examples on every CI run
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.filter_too_much,
                                 HealthCheck.too_slow])
@given(value=hostile)
def test_bad_value_gives_one_line_and_exit_2(tool, prefix, opt, act, value, tmp_path_factory):
    assume("\x00" not in value or act.type is not None)
    assume(rejected(act, value))
    mod = importlib.import_module(TOOLS[tool])
    work = tmp_path_factory.mktemp("tmp")
    saved, tempfile.tempdir = tempfile.tempdir, str(work)
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.run(mod.main, [*prefix, f"{opt}={value}"], prog=f"python -m helpers {tool}")
    finally:
        tempfile.tempdir = saved
    lines = err.getvalue().strip().splitlines()
    assert code == 2, (tool, opt, value, err.getvalue())
    assert len(lines) == 1 and "Traceback" not in err.getvalue(), err.getvalue()
    assert list(work.iterdir()) == [], "a refused run left files behind"


def test_every_tool_is_covered():
    """Every tool's parser is readable here, and most tools have a typed or choice flag the property covers."""
    covered = {t for t, *_ in CASES}
    assert all(parser_of(t) for t in TOOLS)
    assert len(covered) >= 0.6 * len(TOOLS), sorted(set(TOOLS) - covered)
