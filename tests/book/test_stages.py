"""`make test`'s stage runner: every stage timed, the table printed also when a stage fails, the rest not run."""
import subprocess
import sys
from pathlib import Path

STAGES = Path(__file__).resolve().parents[2] / "scripts" / "stages.py"


def run(*args):
    return subprocess.run([sys.executable, str(STAGES), *args], capture_output=True, text=True, timeout=60)


def test_times_every_stage_and_stops_at_the_first_failure():
    r = run("one=true", "two=exit 3", "three=true")
    assert r.returncode == 1
    table = r.stdout[r.stdout.index("make test stages"):]
    assert "one" in table and "ok" in table and "FAILED (exit 3)" in table and "not run: three" in table
    assert "total" in table


def test_all_green_exits_0_and_a_malformed_stage_is_refused():
    assert run("a=true", "b=true").returncode == 0
    bad = run("no-equals-sign")
    assert bad.returncode == 2 and "is not NAME=COMMAND" in bad.stderr and "Traceback" not in bad.stderr
