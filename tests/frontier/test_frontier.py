"""Frontier wing (chapter 30): state-vector simulator vs its naive version and qiskit; stencil vs the exact
discrete solution; CXL tier model."""
import json
import math
from pathlib import Path

import numpy as np
import pytest
import torch

from helpers.frontier import cxl, statevector as sv, stencil

QISKIT = Path(__file__).parents[1] / "data" / "real" / "qiskit-statevector" / "statevectors.json"


def _ops(case):
    if isinstance(case["ops"], str):                       # x(0), x(2), then qiskit's QFT(4, do_swaps=False)
        return [("x", (0,)), ("x", (2,))] + sv.qft(case["qubits"])
    return [(o[0], tuple(o[1])) + ((tuple(o[2]),) if len(o) > 2 else ()) for o in case["ops"]]


@pytest.mark.parametrize("name", ["ghz3", "qft4_noswap", "mixed4"])
def test_matches_qiskit_statevector(name):
    case = json.loads(QISKIT.read_text())["cases"][name]
    ref = np.array(case["re"]) + 1j * np.array(case["im"])
    got = sv.simulate(case["qubits"], _ops(case)).numpy()
    assert np.allclose(got, ref, atol=1e-12)
    assert np.allclose(sv.simulate_naive(case["qubits"], _ops(case)), ref, atol=1e-12)


def test_fast_equals_naive_and_is_unitary():
    ops = sv.layered(6, 3, seed=2)
    fast = sv.simulate(6, ops).numpy()
    assert np.allclose(fast, sv.simulate_naive(6, ops), atol=1e-12)
    assert math.isclose(np.linalg.norm(fast), 1.0, rel_tol=1e-12)


def test_ghz_has_two_equal_amplitudes():
    psi = sv.simulate(5, sv.ghz(5)).numpy()
    assert np.allclose(np.abs(psi[[0, 31]]) ** 2, 0.5) and np.allclose(np.delete(psi, [0, 31]), 0)


def test_bad_gates_are_refused():
    with pytest.raises(ValueError, match="distinct"):
        sv.simulate(3, [("cx", (1, 1))])
    with pytest.raises(ValueError, match="known gates"):
        sv.gate_matrix("foo")
    with pytest.raises(ValueError, match="n <= 10"):
        sv.simulate_naive(11, [])


def test_bench_records():
    (r,) = sv.bench([6], depth=1, device=torch.device("cpu"), repeats=1)
    assert r.state_bytes == 64 * 8 and r.norm_error < 1e-5 and r.gates == 6 + 5


def test_stencil_naive_vectorised_and_exact():
    u0, h = stencil.initial(10)
    a = u0.copy()
    for _ in range(4):
        a = stencil.step_naive(a, 0.2)
    b = stencil.run(torch.tensor(u0), 0.2, 4).numpy()
    assert np.allclose(a, b, atol=1e-14)
    assert np.allclose(b, stencil.decay_factor(h, 0.2) ** 4 * u0, atol=1e-14)


def test_stencil_bench_and_intensity():
    (r,) = stencil.bench([32], steps=3, device=torch.device("cpu"), repeats=1)
    assert r.flop_per_byte == pytest.approx(7 / 8) and r.max_rel_error < 1e-5
    with pytest.raises(ValueError, match="stable"):
        stencil.bench([32], r=0.3)


def test_cxl_model():
    assert cxl.place(100, 200).avg_latency_ns == cxl.tiers()["local DDR5"].latency_ns
    p = cxl.place(400, 200)
    assert p.spill_fraction == 0.5
    lo, sp = cxl.tiers()["local DDR5"], cxl.tiers()["CXL expander (direct)"]
    assert p.avg_latency_ns == pytest.approx((lo.latency_ns + sp.latency_ns) / 2)
    f = cxl.best_split(lo.bw_GBps, sp.bw_GBps)
    assert 1 / max((1 - f) / lo.bw_GBps, f / sp.bw_GBps) == pytest.approx(lo.bw_GBps + sp.bw_GBps)
    with pytest.raises(ValueError, match="known tiers"):
        cxl.place(1, 1, "tape")


def test_minifloat_grids_match_the_ocp_mx_spec():
    from helpers.frontier import lowprec

    assert lowprec.grid("fp4_e2m1").tolist() == [0, 0.5, 1, 1.5, 2, 3, 4, 6]
    assert (lowprec.grid("fp6_e3m2")[-1], lowprec.grid("fp6_e2m3")[-1], lowprec.grid("fp8_e4m3")[-1]) == (28, 7.5, 448)
    assert lowprec.round_to(np.array([2.4, 2.6, -7.0, 0.2]), "fp4_e2m1").tolist() == [2.0, 3.0, -6.0, 0.0]


def test_block_scaling_beats_per_tensor_fp4():
    from helpers.frontier import lowprec

    e = {r.scheme: r.rel_rms_error for r in lowprec.compare(lowprec.heavy_tailed(4096))}
    assert e["NVFP4 (E2M1, block 16, E4M3 scale)"] < e["MXFP4 (E2M1, block 32, E8M0 scale)"] < e["FP4 E2M1, per tensor"]
    x = np.arange(32, dtype=float)
    q = lowprec.quantize(x, "fp4_e2m1", 32, "pow2")
    assert np.abs(q).max() <= 31 * 2 and np.all(np.abs(q - x) <= 4)    # pow2 scale never lets amax overflow
    with pytest.raises(ValueError, match="multiple of 32"):
        lowprec.compare(np.ones(33))


def test_low_precision_table_is_sourced():
    from helpers.frontier import blackwell

    t = blackwell.peaks()
    assert t.loc["B200 (HGX B200, per GPU)", "fp4_tflops"] == 2 * t.loc["B200 (HGX B200, per GPU)", "fp8_tflops"]
    assert t.source.str.startswith("https://").all()


def test_cpu_records_say_there_is_no_clock():
    (r,) = stencil.bench([16], steps=1, device=torch.device("cpu"), repeats=1)
    assert r.sm_clock_MHz_median is None and "CPU run" in r.sampler_note


@pytest.mark.parametrize("argv", [["qsim", "--qubits", "40"], ["qsim", "--depth", "0"], ["stencil", "--grid", "4"],
                                  ["stencil", "--dtype", "int8"]])
def test_cli_refuses_bad_input(argv, capsys):
    from helpers.__main__ import main

    assert main(argv) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1


def test_cli_writes_json(tmp_path):
    from helpers.__main__ import main

    out = tmp_path / "q.json"
    assert main(["qsim", "--qubits", "4", "--depth", "1", "--repeats", "1", "--device", "cpu", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["kind"] == "qsim" and doc["records"][0]["qubits"] == 4
