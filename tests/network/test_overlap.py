"""The overlap lab: trace reading on a hand-made trace, and one real two-rank run on gloo."""
import json

from helpers.network import overlap


def test_interval_arithmetic():
    assert overlap.covered([(0, 2), (1, 3), (5, 6)]) == 4
    assert overlap.intersection([(0, 4)], [(1, 2), (3, 6)]) == 2
    assert overlap.intersection([(0, 1)], [(1, 2)]) == 0


def test_read_trace(tmp_path):
    trace = {"traceEvents": [
        {"ph": "X", "name": "step", "tid": 1, "ts": 100, "dur": 1000},
        {"ph": "X", "name": "gloo:all_reduce", "tid": 9, "ts": 110, "dur": 600},
        {"ph": "X", "name": "compute", "tid": 1, "ts": 200, "dur": 700},
        {"ph": "X", "name": "aten::mm", "tid": 1, "ts": 210, "dur": 10},
        {"ph": "i", "name": "marker", "tid": 1, "ts": 50}]}
    p = tmp_path / "t.json"
    p.write_text(json.dumps(trace))
    ivs, spans = overlap.read_trace(str(p))
    assert {iv.name for iv in ivs} == {"step", "gloo:all_reduce", "compute"}
    assert abs(overlap.intersection(spans["comm"], spans["compute"]) - 510e-6) < 1e-12


def test_two_ranks_overlap_only_when_async():
    # Two ranks on 2 cores run 4 busy threads (2 main, 2 gloo workers), so a worker can wait for a core.
    # With 2**18 floats and 10 matmuls (~3 ms of compute) that wait hid the all-reduce entirely in 2 of 8 runs
    # (the gloo span started after compute ended, or ended before compute began); with 2**20 floats and
    # 40 matmuls (~12 ms) 0 of 24 runs missed, idle or beside a busy core. Correctness is asserted on every
    # attempt; the overlap itself is asked of the best of three runs.
    for _attempt in range(3):
        recs, lanes, why = overlap.run(world_size=2, numel=2**20, iters=40)
        by = {r.variant: r for r in recs}
        assert all(r.correct for r in recs) and "gloo" in why
        # serial: nothing to hide (a little trace-timing slack on a loaded 2-core machine); async: something hidden
        assert by["serial"].overlap_s < 0.25 * by["serial"].comm_s
        if by["overlapped"].overlap_s > by["serial"].overlap_s:
            break
    assert by["overlapped"].overlap_s > by["serial"].overlap_s
    assert lanes and all(lanes.values())        # what helpers.figures.network.overlap_figure draws


def test_cli_under_torchrun():
    """`torchrun --nproc-per-node 2 -m helpers overlap --json`: one JSON document on stdout, from rank 0."""
    from helpers.core import launch

    res = launch.torchrun("helpers", ["overlap", "--numel", str(2**16), "--iters", "5", "--json"], nproc=2,
                          timeout_s=180)
    doc = json.loads(res.stdout)
    assert [r["variant"] for r in doc["records"]] == ["serial", "overlapped"]
    assert all(r["correct"] for r in doc["records"]) and "torchrun" in doc["backend_reason"]
