"""MLPerf's rules applied to the book's own benchmark: which a ``bench`` document meets and which it cannot (chapter 15).

    python -m helpers mlperf assets/measurements/h200/bench.json          # the rule-by-rule table
    python -m helpers mlperf bench.json --json --out mlperf_check.json

An MLPerf Training result is the time to train to a quality target, the olympic mean of a benchmark-specific
number of complete runs (the fastest and slowest dropped), each run with its seed logged; an Inference result is a
LoadGen scenario's metric over at least a minimum number of queries and a minimum duration. The book's ``bench``
suite is a set of micro-benchmarks: it has provenance and a quality gate (HPL's residual), but no time-to-train, no
seeds, no scenario. :func:`validate` says so rule by rule, from the document alone.
"""
from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from helpers.core import inputs, results

TRAINING_RULES = "https://github.com/mlcommons/training_policies/blob/master/training_rules.adoc"
INFERENCE_RULES = ("https://github.com/mlcommons/inference_policies/blob/32c6bfabd9a3461330f6b407303ef059404af1f3/"
                   "inference_rules.adoc")                  # v0.5 (Sept 2019); the old training_policies copy is gone
RUNS_REQUIRED = {"image_classification": 5, "nlp": 10}      # training rules v1.0, "Benchmark Results"
SCENARIOS = ("single_stream", "multi_stream", "server", "offline")
MIN_QUERIES_P90 = 24_576                                    # inference rules v0.5, 90th percentile
MIN_DURATION_S = 60.0                                       # inference rules v0.5, every scenario


@dataclass(frozen=True)
class Check:
    suite: str          # training | inference | both
    rule: str
    met: bool
    evidence: str       # what in the document decided it
    source: str


def olympic_mean(times_s: list[float]) -> float:
    """MLPerf Training's score: the mean of the run times after dropping one fastest and one slowest."""
    if len(times_s) < 3:
        raise ValueError(f"olympic mean needs at least 3 runs, got {len(times_s)}: run the benchmark more times")
    t = sorted(inputs.number(x, what="run time (s)", allow_zero=False) for x in times_s)[1:-1]
    return sum(t) / len(t)


def time_to_train(evals: list[tuple[float, float]], target: float) -> float | None:
    """The first wall-clock time (s) at which an evaluation reached ``target`` quality; None if none did.
    ``evals`` are (time_s, quality) pairs in the order they were taken."""
    for t, q in evals:
        if q >= target:
            return t
    return None


def validate(doc: dict) -> list[Check]:
    """Each MLPerf rule against one ``bench`` JSON document (from ``python -m helpers bench all --out``)."""
    if not isinstance(doc, dict) or "records" not in doc:
        raise ValueError("not a bench document: expected a JSON object with 'records' "
                         "(make one with: python -m helpers bench all --out bench.json)")
    recs = doc["records"]
    if not isinstance(recs, list) or not all(isinstance(r, dict) for r in recs):
        raise inputs.BadInput("'records' must be a list of JSON objects (as bench --out writes them)")
    for i, r in enumerate(recs):                 # a time or count is finite and not negative (NaN, inf refused)
        for k in ("time_s", "repeats", "time_to_train_s", "scaled_residual"):
            if r.get(k) is not None:
                r[k] = inputs.number(r[k], what=f"records[{i}].{k}", integer=k == "repeats")
    prov = doc.get("provenance") or {}
    kinds = sorted({r.get("kind", "?") for r in recs})
    hpl = [r for r in recs if r.get("kind") == "hpl"]
    seeded = [r for r in recs if "seed" in r] or (["doc"] if "seed" in doc else [])
    runs = [r for r in recs if r.get("kind") == "run"]
    reps = [r.get("repeats") for r in recs if r.get("repeats")]
    timed_s = [r["time_s"] * r["repeats"] for r in recs if r.get("repeats") and r.get("time_s")]
    sysdesc = [k for k in ("device", "driver", "cuda", "torch", "cpu", "host") if prov.get(k)]
    out = [
        Check("both", "system description: hardware and software of the system under test", len(sysdesc) >= 4,
              f"provenance gives {', '.join(sysdesc) or 'nothing'}", TRAINING_RULES),
        Check("training", "result is the time to train to a quality target", bool(runs and all(
            "target" in r and "time_to_train_s" in r for r in runs)),
              f"record kinds {kinds}: rates per shape, no quality target or time to reach it", TRAINING_RULES),
        Check("training", "a quality check gates the result", bool(hpl) and all(r.get("passed") for r in hpl),
              (f"HPL scaled residual {hpl[0]['scaled_residual']:.3g} < 16, passed={hpl[0]['passed']}" if hpl
               else "no HPL record"), TRAINING_RULES),
        Check("training", "seeds fixed and logged for every run", bool(seeded),
              f"{len(seeded)} of {len(recs)} records carry a seed", TRAINING_RULES),
        Check("training", f"≥ {min(RUNS_REQUIRED.values())} complete runs, olympic mean reported",
              len(runs) >= min(RUNS_REQUIRED.values()),
              f"{len(runs)} complete runs; the {len(reps)} timed records repeat one kernel "
              f"{min(reps, default=0)}–{max(reps, default=0)} times inside one process", TRAINING_RULES),
        Check("inference", "a LoadGen scenario is declared", any(r.get("scenario") in SCENARIOS for r in recs),
              f"scenarios named: {sorted({r['scenario'] for r in recs if 'scenario' in r}) or 'none'}",
              INFERENCE_RULES),
        Check("inference", f"≥ {MIN_QUERIES_P90:,} queries for a 90th-percentile latency",
              max(reps, default=0) >= MIN_QUERIES_P90, f"at most {max(reps, default=0)} timed iterations",
              INFERENCE_RULES),
        Check("inference", f"each run lasts ≥ {MIN_DURATION_S:.0f} s", bool(timed_s) and
              min(timed_s) >= MIN_DURATION_S,
              f"timed loops last {min(timed_s, default=0):.3g}–{max(timed_s, default=0):.3g} s", INFERENCE_RULES),
        Check("inference", "tail latency (a percentile) reported, not only the best",
              any(k.startswith("p9") for r in recs for k in r),
              "percentile fields: " + (", ".join(sorted({k for r in recs for k in r if k.startswith("p9")}))
                                       or "none (best and median time only)"), INFERENCE_RULES),
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli

    p = argparse.ArgumentParser(prog="python -m helpers mlperf", description=__doc__.splitlines()[0])
    p.add_argument("bench_json", type=cli.nonempty_path, help="a bench document (python -m helpers bench all --out)")
    results.add_output_args(p)
    a = p.parse_args(argv)
    doc = inputs.read_json(a.bench_json, what="bench document")
    results.emit(validate(doc), "mlperf_check", a, ["suite", "rule", "met", "evidence"])
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
