"""helpers.compute.mlperf: the MLPerf rules over the book's bench documents."""
import json
from pathlib import Path

import pytest

from helpers.compute import mlperf

BENCH = Path(__file__).parents[2] / "assets" / "measurements" / "h200" / "bench.json"


def test_olympic_mean():
    assert mlperf.olympic_mean([10.0, 1.0, 4.0, 5.0, 6.0]) == 5.0     # drops 1 and 10
    with pytest.raises(ValueError, match="at least 3"):
        mlperf.olympic_mean([1.0, 2.0])


def test_time_to_train():
    evals = [(10.0, 0.50), (20.0, 0.74), (30.0, 0.760), (40.0, 0.77)]
    assert mlperf.time_to_train(evals, 0.759) == 30.0
    assert mlperf.time_to_train(evals, 0.9) is None


@pytest.mark.skipif(not BENCH.exists(), reason="bench.json not recorded")
def test_recorded_bench():
    checks = {c.rule: c for c in mlperf.validate(json.loads(BENCH.read_text()))}
    assert len(checks) == 9
    met = {r for r, c in checks.items() if c.met}
    assert any(r.startswith("system description") for r in met)
    assert not checks["result is the time to train to a quality target"].met


def test_a_conforming_document_meets_the_rules():
    prov = {"device": "X", "driver": "1", "cuda": "13", "torch": "2", "cpu": "c", "host": "h"}
    runs = [{"kind": "run", "seed": s, "target": 0.759, "time_to_train_s": 100.0 + s, "repeats": 30000,
             "time_s": 0.01, "scenario": "offline", "p90_latency_s": 0.01} for s in range(5)]
    runs.append({"kind": "hpl", "passed": True, "scaled_residual": 0.01})
    checks = mlperf.validate({"provenance": prov, "records": runs})
    assert all(c.met for c in checks), [c.rule for c in checks if not c.met]


def test_bad_input():
    with pytest.raises(ValueError, match="bench document"):
        mlperf.validate({"nope": 1})


def test_cli_bad_file(tmp_path):
    from helpers.core import cli
    bad = tmp_path / "b.json"
    bad.write_text("{not json")
    assert cli.run(mlperf.main, [str(bad)]) != 0
