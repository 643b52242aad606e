"""Read nccl-tests logs (``all_reduce_perf``, ``all_gather_perf`` …) into records (chapters 03 and 08).

nccl-tests (github.com/NVIDIA/nccl-tests) prints a header — ``# nThread 1 nGpus 8 minBytes …``, one ``#  Rank N …
device …`` line per rank — then one row per message size with an out-of-place and an in-place half::

        size   count  type  redop  root   time  algbw  busbw  #wrong   time  algbw  busbw  #wrong

Older versions have no ``root`` column (and before 2.x no ``redop``, an ``error`` column instead of ``#wrong``); the
reader takes the columns from the row itself. ``busbw = algbw × factor`` where the factor depends on the collective and
the number of ranks n (doc/PERFORMANCE.md; ``helpers.formulas.comm.busbw_factor``): 2(n−1)/n for all-reduce,
(n−1)/n for all-gather, reduce-scatter and all-to-all, 1 for broadcast, reduce and send/recv. :func:`parse` checks
every row against it and says so when the log contradicts itself, and :func:`fit_alpha_beta` fits t = α + β·S to
the rows with :func:`helpers.network.commmodel.fit`.

    python -m helpers nccltests all_reduce.log          # the rows, the checks and the α-β fit
"""
from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field

from helpers.core import inputs
from helpers.formulas import comm
from helpers.network import commmodel

OPS = ("all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "reduce", "sendrecv", "gather",
       "scatter", "hypercube")


@dataclass(frozen=True)
class Row:
    """One half (out-of-place or in-place) of one nccl-tests result line."""
    op: str | None
    placement: str            # "out-of-place" | "in-place"
    size_bytes: int
    count: int
    dtype: str
    redop: str | None
    root: int | None
    time_us: float
    algbw_GBps: float
    busbw_GBps: float
    wrong: int | None         # #wrong (data-check failures); None when the log has an "error" column


@dataclass(frozen=True)
class Log:
    op: str | None            # from the binary's name in the log, None when the log does not say
    ranks: int | None         # ranks in the header (distinct "# Rank N" lines); None when the header is missing
    devices: tuple            # device names of the ranks, in rank order
    rows: tuple               # Row, …
    avg_busbw_GBps: float | None
    warnings: tuple = ()
    partial: bool = False     # a row was cut off or the log ends before its summary line
    inferred_ranks: int | None = field(default=None)   # n that busbw/algbw implies, when ranks is None

    def table(self, placement: str = "out-of-place") -> list[dict]:
        return [{"size_bytes": r.size_bytes, "count": r.count, "type": r.dtype, "redop": r.redop,
                 "time_us": r.time_us, "algbw_GBps": r.algbw_GBps, "busbw_GBps": r.busbw_GBps, "wrong": r.wrong}
                for r in self.rows if r.placement == placement]


_ROW_START = re.compile(r"^\s*([0-9]+)\s+([0-9]+)\s+([a-z][a-z0-9_]*)\s+(.*)$", re.A)   # ASCII digits only
_NUM = r"[-+]?(?:[0-9]+\.?[0-9]*(?:e[-+]?[0-9]+)?|N/A|nan|inf)"


def _num(s: str) -> float:
    return float("nan") if s in ("N/A", "nan") else float(s)


def _measured(s: str, what: str) -> float:
    """A time or bandwidth cell: finite and not negative (``inputs.number``); a log that prints NaN, inf or a
    negative time is refused, not averaged into a fit."""
    return inputs.number(s, what=what)


def _halves(rest: list[str]):
    """Split the cells after size/count/type into (redop, root, out-half, in-half); each half is
    (time, algbw, busbw, wrong|error)."""
    redop = root = None
    if rest and not re.fullmatch(_NUM, rest[0]):
        redop = rest.pop(0)
        # a root column: full rows have 1 + 4 (+ 4) cells; in a cut row a negative integer is the root (-1),
        # never a time
        if rest and re.fullmatch(r"-?[0-9]+", rest[0], re.A) and (len(rest) in (5, 9) or rest[0].startswith("-")):
            root = int(rest.pop(0))
    halves = [rest[i:i + 4] for i in range(0, len(rest), 4)]
    return redop, root, halves


def _op_name(text: str) -> str | None:
    m = (re.search(r"Collective test concluded:\s*(\w+?)_perf", text) or re.search(r"\b(\w+?)_perf(?:_mpi)?\b", text))
    if m and m.group(1) in OPS:
        return m.group(1)
    return None


def parse(text: str, op: str | None = None) -> Log:
    """Read one nccl-tests log. ``op`` overrides the collective when the log does not name its binary."""
    if op is not None and op not in OPS:
        raise ValueError(f"op={op!r}: known collectives are {OPS}")
    op = op or _op_name(text)
    ranks_seen, devices, rows, warnings, partial = {}, [], [], [], False
    headers = len(re.findall(r"^#\s*nThread\s+[0-9]+", text, re.M))
    avg = None
    for ln in text.splitlines():
        ln = re.sub(r"^\[[0-9]+,[0-9]+\]<std(?:out|err)>:", "", ln)          # mpirun --tag-output prefix
        if (m := re.match(r"#\s+Rank\s+([0-9]+)\s+.*?device\s+[0-9]+\s+\[[^\]]*\]\s+(.+?)\s*$", ln)):
            r = int(m.group(1))
            if r in ranks_seen:
                warnings.append(f"rank {r} appears twice in the header: these are separate runs of one rank each "
                                "(nccl-tests built without MPI=1, or -np without a shared communicator), not one job")
            ranks_seen[r] = m.group(2)
            continue
        if (m := re.match(r"#\s*Avg bus bandwidth\s*:\s*(" + _NUM + ")", ln)):
            avg = _num(m.group(1))
            continue
        m = _ROW_START.match(ln)
        if not m or ln.lstrip().startswith("#"):
            continue
        size, count, dtype, rest = int(m.group(1)), int(m.group(2)), m.group(3), m.group(4).split()
        redop, root, halves = _halves(rest)
        for placement, h in zip(("out-of-place", "in-place"), halves):
            if len(h) < 4 or not all(re.fullmatch(_NUM, c) for c in h):
                partial = True
                warnings.append(f"size {size}: the {placement} columns are cut off ({' '.join(h) or 'empty'})")
                continue
            err = h[3]
            wrong = int(float(err)) if re.fullmatch(r"[0-9]+", err) else None
            at = f"nccl-tests row size {size} {placement}"
            rows.append(Row(op, placement, size, count, dtype, redop, root, _measured(h[0], f"{at}: time_us"),
                            _measured(h[1], f"{at}: algbw"), _measured(h[2], f"{at}: busbw"), wrong))
            if wrong:
                warnings.append(f"size {size} {placement}: #wrong = {wrong}: the result data were wrong "
                                "(a data-corruption or hang symptom, the bandwidth of this row is meaningless)")
            elif wrong is None and err not in ("0e+00", "0", "N/A") and _num(err) > 1e-3:
                warnings.append(f"size {size} {placement}: error column {err} (max deviation from the expected result)")
    separate = headers > 1 or any("twice" in w for w in warnings)
    if not rows:
        raise ValueError("nccl-tests: no result rows (\"size count type … time algbw busbw …\") found; saw "
                         f"{len(text.splitlines())} lines, {headers} header(s), ranks {sorted(set(ranks_seen))}"
                         + ("; the header appears more than once: separate one-process runs, not one job"
                            if separate else ""))
    n = len(ranks_seen) if ranks_seen and not separate else None
    if ranks_seen and max(ranks_seen) + 1 != len(ranks_seen):
        warnings.append(f"the header lists ranks {sorted(ranks_seen)[:4]}… only: it is cut off, "
                        "the number of ranks is not known")
        n, partial = None, True
    if avg is None:
        partial = True
    inferred = _check_factor(rows, op, n, warnings)
    return Log(op, n, tuple(ranks_seen[k] for k in sorted(ranks_seen)), tuple(rows), avg, tuple(warnings),
               partial, inferred)


def _check_factor(rows, op, n, warnings) -> int | None:
    """Compare busbw/algbw with the collective's factor; return the n that the ratio implies (None if unknown)."""
    big = [r for r in rows if r.algbw_GBps >= 1.0 and r.busbw_GBps > 0]   # two decimals: ratio good to ~1 %
    if not big:
        return None
    ratio = sorted(r.busbw_GBps / r.algbw_GBps for r in big)[len(big) // 2]
    implied = None
    if op in ("all_reduce", None) and 1.02 < ratio < 2 or op == "all_reduce" and ratio < 2:
        implied = round(2 / (2 - ratio)) if ratio < 1.999 else None
    elif op in ("all_gather", "reduce_scatter", "alltoall") and ratio < 1:
        implied = round(1 / (1 - ratio)) if ratio < 0.999 else None
    if op and n:
        want = comm.busbw_factor(op, n)
        if abs(ratio - want) > 0.02 * want + 0.01:
            warnings.append(f"busbw/algbw = {ratio:.3f}, but {op} on {n} ranks has factor {want:.3f}"
                            + (f" (the ratio fits {implied} ranks)" if implied else ""))
    elif op is None:
        fits = [o for o in ("all_reduce", "all_gather", "broadcast")
                if n and abs(ratio - comm.busbw_factor(o, n)) < 0.02]
        warnings.append(f"the log does not name its collective; busbw/algbw = {ratio:.3f}"
                        + (f", which is the factor of {' or '.join(fits)} on {n} ranks" if fits else
                           " (2(n-1)/n for all_reduce, (n-1)/n for all_gather/reduce_scatter, 1 for broadcast)"))
    return implied


def fit_alpha_beta(log: Log, placement: str = "out-of-place", min_bytes: int = 1,
                   max_bytes: float = float("inf")) -> commmodel.Fit:
    """t = α + β·S over the rows of ``placement`` (``min_bytes`` ≤ size ≤ ``max_bytes``, rows with #wrong = 0)."""
    pts = [(r.size_bytes, r.time_us * 1e-6) for r in log.rows if r.placement == placement
           and min_bytes <= r.size_bytes <= max_bytes and not r.wrong and r.time_us > 0]
    if len(pts) < 2:
        raise ValueError(f"{len(pts)} usable {placement} rows: the α-β fit needs ≥ 2 sizes (run with -b 8 -e 1G)")
    return commmodel.fit([s for s, _ in pts], [t for _, t in pts])


def main(argv=None) -> int:
    from helpers.core import cli, results

    ap = argparse.ArgumentParser(prog="python -m helpers nccltests", description=__doc__.split("\n")[0])
    ap.add_argument("log", type=cli.nonempty_path, help="an nccl-tests log (stdout of all_reduce_perf …)")
    ap.add_argument("--op", choices=OPS, help="the collective, when the log does not name its binary")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    log = parse(inputs.read_text(a.log, what="nccl-tests log"), a.op)
    for w in log.warnings:
        print("warning:", w, file=sys.stderr)
    results.emit(log.table(), "nccl_tests", a)
    try:
        f = fit_alpha_beta(log)
        print(f"alpha-beta fit: alpha = {f.line.alpha_s * 1e6:.2f} us, 1/beta = {f.line.bw_GBps:.2f} GB/s "
              f"(max rel. error {f.max_rel_error:.1%} over {f.n_points} sizes)", file=sys.stderr)
    except ValueError as e:
        print(f"no alpha-beta fit: {e}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
