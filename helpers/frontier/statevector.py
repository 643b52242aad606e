"""A state-vector quantum circuit simulator on torch, CPU or GPU (chapter 30, "GPUs for quantum computing").

An n-qubit state is 2^n complex amplitudes; a gate on k qubits touches every amplitude, so each gate streams the
whole state through memory once (read + write). That is why state-vector simulation is memory-bound and why GPUs
(NVIDIA cuQuantum / cuStateVec, qiskit-aer-gpu) run it: an H200's HBM holds 2^33 complex64 amplitudes in 64 GiB.

Ordering follows qiskit (little-endian): qubit 0 is the least significant bit of the basis index, so the state
``|q2 q1 q0>`` has index ``4*q2 + 2*q1 + q0``. ``simulate_naive`` builds the full 2^n x 2^n unitary with Kronecker
products (teaching version, n <= 10); ``simulate`` applies each gate as a small tensor contraction on the reshaped
state (what real simulators do). Tests hold them against each other and against qiskit's ``Statevector``.

    python -m helpers qsim --qubits 10,14,18 --depth 4 --out assets/measurements/h200/qsim.json
"""
from __future__ import annotations

import argparse
import math
import sys
from dataclasses import dataclass

import numpy as np

_S2 = 1 / math.sqrt(2)
FIXED = {
    "h": np.array([[_S2, _S2], [_S2, -_S2]], dtype=complex),
    "x": np.array([[0, 1], [1, 0]], dtype=complex),
    "y": np.array([[0, -1j], [1j, 0]], dtype=complex),
    "z": np.array([[1, 0], [0, -1]], dtype=complex),
    "s": np.array([[1, 0], [0, 1j]], dtype=complex),
    "t": np.array([[1, 0], [0, np.exp(1j * math.pi / 4)]], dtype=complex),
}
TWO_QUBIT = ("cx", "cz", "cp")       # (control, target); cp takes an angle


def gate_matrix(name: str, params: tuple = ()) -> np.ndarray:
    """The gate's unitary: 2x2 for one qubit; 4x4 for two, in the basis index 2*control + target."""
    if name in FIXED:
        return FIXED[name]
    if name in ("rx", "ry", "rz", "p"):
        (th,) = params
        c, s = math.cos(th / 2), math.sin(th / 2)
        return {"rx": np.array([[c, -1j * s], [-1j * s, c]]), "ry": np.array([[c, -s], [s, c]], dtype=complex),
                "rz": np.array([[np.exp(-1j * th / 2), 0], [0, np.exp(1j * th / 2)]]),
                "p": np.array([[1, 0], [0, np.exp(1j * th)]])}[name]
    if name in TWO_QUBIT:
        u = np.eye(4, dtype=complex)
        if name == "cx":
            u[2:, 2:] = FIXED["x"]
        else:
            u[3, 3] = -1 if name == "cz" else np.exp(1j * params[0])
        return u
    raise ValueError(f"gate {name!r}: known gates are {sorted(FIXED) + ['rx', 'ry', 'rz', 'p'] + list(TWO_QUBIT)}")


def _check(n: int, ops) -> None:
    for name, qubits, *_ in ops:
        want = 2 if name in TWO_QUBIT else 1
        if len(qubits) != want or len(set(qubits)) != want or not all(0 <= q < n for q in qubits):
            raise ValueError(f"gate {name} on qubits {qubits}: needs {want} distinct qubit(s) in 0..{n - 1}")


def simulate_naive(n: int, ops) -> np.ndarray:
    """Teaching version: the full 2^n x 2^n unitary of every gate (kron of identities), applied to |0...0>."""
    if not 1 <= n <= 10:
        raise ValueError(f"n={n}: the naive simulator builds 2^n x 2^n matrices; use n <= 10 (or simulate())")
    _check(n, ops)
    dim = 2 ** n
    psi = np.zeros(dim, dtype=complex)
    psi[0] = 1
    for name, qubits, *rest in ops:
        u = gate_matrix(name, tuple(rest[0]) if rest else ())
        if len(qubits) == 1:                 # kron order: qubit n-1 first (most significant) ... qubit 0 last
            full = np.array([[1.0]])
            for q in reversed(range(n)):
                full = np.kron(full, u if q == qubits[0] else np.eye(2))
        else:                                # permutation form: U acts on bits (control, target) of each index
            c, t = qubits
            full = np.zeros((dim, dim), dtype=complex)
            for col in range(dim):
                bc, bt = (col >> c) & 1, (col >> t) & 1
                for out in range(4):
                    amp = u[out, 2 * bc + bt]
                    if amp != 0:
                        row = (col & ~(1 << c) & ~(1 << t)) | ((out >> 1) << c) | ((out & 1) << t)
                        full[row, col] += amp
        psi = full @ psi
    return psi


def simulate(n: int, ops, device=None, dtype=None):
    """Fast version: the state as a tensor of shape (2,)*n; a gate is a tensordot on its qubits' axes.

    Axis a of the tensor holds qubit n-1-a (C order puts the most significant bit first). Returns a 1-D torch tensor."""
    import torch

    _check(n, ops)
    dtype = dtype or torch.complex128
    psi = torch.zeros(2 ** n, dtype=dtype, device=device)
    psi[0] = 1
    psi = psi.reshape((2,) * n)
    cache: dict = {}
    for name, qubits, *rest in ops:
        params = tuple(rest[0]) if rest else ()
        key = (name, params)
        if key not in cache:
            cache[key] = torch.as_tensor(gate_matrix(name, params), dtype=dtype, device=device)
        u = cache[key]
        axes = [n - 1 - q for q in qubits]
        if len(axes) == 1:
            psi = torch.tensordot(u, psi, dims=([1], axes)).movedim(0, axes[0])
        else:                                # u as (c', t', c, t) contracted over the (control, target) axes
            psi = torch.tensordot(u.reshape(2, 2, 2, 2), psi, dims=([2, 3], axes)).movedim((0, 1), tuple(axes))
    return psi.reshape(-1)


def ghz(n: int):
    """H on qubit 0, then a CNOT chain: (|0...0> + |1...1>)/sqrt(2)."""
    return [("h", (0,))] + [("cx", (q, q + 1)) for q in range(n - 1)]


def qft(n: int):
    """The quantum Fourier transform (without the final swaps; qiskit's QFT(do_swaps=False))."""
    ops = []
    for j in reversed(range(n)):
        ops.append(("h", (j,)))
        for k in reversed(range(j)):
            ops.append(("cp", (k, j), (math.pi / 2 ** (j - k),)))
    return ops


def layered(n: int, depth: int, seed: int = 0):
    """A benchmark circuit: per layer, H or RZ(random angle) on every qubit, then a CNOT chain."""
    rng = np.random.default_rng(seed)
    ops = []
    for _ in range(depth):
        for q in range(n):
            ops.append(("h", (q,)) if rng.random() < 0.5 else ("rz", (q,), (float(rng.uniform(0, 2 * math.pi)),)))
        ops += [("cx", (q, q + 1)) for q in range(n - 1)]
    return ops


@dataclass(frozen=True)
class QsimResult:
    qubits: int
    device: str
    gates: int
    state_bytes: int
    time_s: float            # median over repeats, whole circuit
    time_per_gate_s: float
    bw_GBps: float           # 2 x state_bytes (read + write) per gate / time_per_gate_s
    norm_error: float        # | ||psi|| - 1 |: the unitarity check
    sm_clock_MHz_median: float | None = None
    power_W_median: float | None = None
    throttle_reasons: tuple = ()
    sampler_note: str = ""


def peak_bytes(n: int) -> int:
    """Bytes one run of ``bench`` holds at its peak: the complex64 state (2 fp32 per amplitude), a gate's output of
    the same size, and the complex128 copy the norm check makes (twice the size)."""
    from helpers.formulas import dtypes

    return 4 * 2 ** n * 2 * dtypes.bytes_per_element("fp32")


def bench(qubits: list[int], depth: int = 4, device=None, repeats: int = 3) -> list[QsimResult]:
    """Time ``layered(n, depth)`` for each n on ``device`` (complex64, as GPU simulators use)."""
    import torch

    from helpers.core import device as devmod, resources
    from helpers.frontier import sampled

    if device is None:
        device, _ = devmod.pick_device()
    for n in qubits:                             # every size checked before the first one runs
        if not 2 <= n <= 34:
            raise ValueError(f"qubits={n}: use 2..34 (2^34 complex64 amplitudes = 128 GiB)")
        resources.require_memory(peak_bytes(n), what=f"a {n}-qubit state vector (complex64, with a gate's output "
                                 "and the complex128 norm check)", flag="--qubits", device=str(device))
    out = []
    for n in qubits:
        ops = layered(n, depth)
        psi = simulate(n, ops, device=device, dtype=torch.complex64)
        err = abs(float(torch.linalg.vector_norm(psi.to(torch.complex128))) - 1)
        t, clk = sampled.time_sampled(lambda: simulate(n, ops, device=device, dtype=torch.complex64), device,
                                      repeats=repeats)
        sb = 2 ** n * 8
        out.append(QsimResult(n, str(device), len(ops), sb, t.median_s, t.median_s / len(ops),
                              2 * sb / (t.median_s / len(ops)) / 1e9, err, **clk))
    return out


def main(argv: list[str] | None = None) -> int:
    """State-vector simulator benchmark: time per gate and effective bandwidth vs qubit count (chapter 30)."""
    from helpers.core import cli, device as devmod, results

    ap = argparse.ArgumentParser(prog="python -m helpers qsim", description=__doc__.split("\n\n")[0])
    ap.add_argument("--qubits", type=cli.csv_of(cli.bounded_int(2, 34)), default=[8, 12, 16])
    ap.add_argument("--depth", type=cli.bounded_int(1, 100), default=4)
    ap.add_argument("--repeats", type=cli.bounded_int(1, 100), default=3)
    ap.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    results.add_output_args(ap)
    args = ap.parse_args(argv)
    dev, _ = devmod.pick_device(None if args.device == "auto" else args.device)
    recs = bench(args.qubits, args.depth, dev, args.repeats)
    if args.device == "auto" and dev.type == "cuda":          # the CPU row beside the GPU row, same circuits
        recs += bench([n for n in args.qubits if n <= 22], args.depth, devmod.pick_device("cpu")[0], args.repeats)
    results.emit(recs, "qsim", args)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
