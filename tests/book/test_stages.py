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


def test_a_plus_stage_runs_alongside_and_its_output_is_shown(tmp_path):
    # a waits (up to 30 s) for the file b writes: it passes only if b runs while a runs
    wait = "for i in $(seq 300); do [ -f flag ] && exit 0; sleep 0.1; done; exit 1"
    r = subprocess.run([sys.executable, str(STAGES), f"a={wait}", "+b=echo from-b; touch flag", "c=true"],
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "from-b" in r.stdout and "+b" in r.stdout and (tmp_path / "_build" / "stage-b.log").exists()
    assert run("+first=true").returncode == 2       # nothing to run alongside
