"""FedAvg's communication rounds to a target accuracy from the local work per round, checked on the FedAvg paper (chapter 17).

McMahan et al. 2017, Table 2, gives the rounds FedSGD and FedAvg need to reach 99 % (MNIST CNN) and 54 %
(Shakespeare LSTM) test accuracy at several (E local epochs, B local batch), ordered by u = E·n_k/B, the expected
local updates per client per round, in an IID and a non-IID column (``data/fedavg_table2.yaml``, 30 numbers). The
model, one per (network, split):

    rounds(u) = R_floor + (R_1 − R_floor) / u

— a local update is worth one FedSGD round (u = 1 is FedSGD, R_1 its rounds) until the rounds hit a floor R_floor
that more local work does not lower (client drift, the ~20 rounds even large u needs on the CNN). The exponent of
u is fixed at 1 by that reading, not fitted, so two constants per (network, split) are fitted: on the FedSGD row
and the largest-u row (``fit: true``), 8 of the 30 numbers; :func:`check` predicts the other 22. ``form="power"``
is the alternative the issue suggested, R_1·u^(−β) through the same two rows, kept to compare. :func:`cross_split`
asks whether IID constants times one factor predict the non-IID column.

    python -m helpers fedrounds --check
    python -m helpers fedrounds --model "MNIST CNN" --split iid --u 100
"""
from __future__ import annotations

import argparse
import statistics
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from helpers.core import cli, inputs, results

DATA = Path(__file__).resolve().parent / "data" / "fedavg_table2.yaml"
SPLITS = ("iid", "non-iid")
FORMS = ("saturating", "power")


@dataclass(frozen=True)
class Row:
    model: str                     # "MNIST CNN" | "Shakespeare LSTM"
    split: str                     # "iid" | "non-iid"
    method: str                    # "FedSGD" | "FedAvg"
    epochs: int                    # E, local epochs per round
    batch: int | None              # B, local batch (None = ∞, the client's whole dataset)
    updates_per_round: float       # u = E·n_k/B as the table prints it
    rounds: int                    # rounds to the target accuracy (Table 2)
    target_accuracy: float
    fit: bool                      # the model is fitted on this row
    source: str
    says: str                      # the table row, quoted

    @property
    def label(self) -> str:
        b = "∞" if self.batch is None else self.batch
        return f"{self.model} {self.split} {self.method} E={self.epochs} B={b}"


@dataclass(frozen=True)
class Constants:
    model: str
    split: str
    form: str                      # "saturating" | "power"
    rounds_at_u1: float            # R_1
    rounds_floor: float            # R_floor (saturating form; 0 for the power law)
    exponent: float                # 1 for the saturating form (fixed); β for the power law (fitted)
    fitted_on: tuple[str, ...]


@dataclass(frozen=True)
class Prediction:
    label: str
    model: str
    split: str
    updates_per_round: float
    rounds_published: int
    rounds_predicted: float
    error: float                   # predicted ÷ published − 1
    fitted_on_it: bool


@dataclass(frozen=True)
class Estimate:
    model: str
    split: str
    form: str
    updates_per_round: float
    rounds_predicted: float


def load_rows(path: str | Path = DATA) -> tuple[Row, ...]:
    """Every (network, split, table row) of Table 2, with its source URL and quote; checks u against E and B."""
    doc = inputs.read_yaml(path, what="FedAvg table")
    groups = {g["model"]: g for g in doc["groups"]}
    out = []
    for r in doc["rows"]:
        g = groups.get(r["model"])
        if g is None:
            raise ValueError(f"{Path(path).name}: row {r['says']!r} names model {r['model']!r}; add it under groups")
        n = g.get("examples_per_client")
        want = r["epochs"] if r["batch"] is None else (r["epochs"] * n / r["batch"] if n else r["u"])
        if abs(want - r["u"]) > 1e-9:
            raise ValueError(f"{Path(path).name}: {r['says']!r} has u = {r['u']} but E·n_k/B = {want:g}; "
                             "copy the row again from the table")
        source = r.get("source", doc["source"])
        if not str(source).startswith("http") or not r.get("says"):
            raise ValueError(f"{Path(path).name}: {r['model']} {r['method']} needs a source URL and a `says` quote")
        for split, key in zip(SPLITS, ("iid", "non_iid")):
            out.append(Row(r["model"], split, r["method"], int(r["epochs"]), r["batch"], float(r["u"]),
                           int(r[key]), float(g["target_accuracy"]), bool(r.get("fit", False)), str(source),
                           f"{doc['table']}, {g['says_header']}: {r['says']}"))
    return tuple(out)


def fit(rows, form: str = "saturating") -> Constants:
    """Constants for one (network, split) by least squares on relative error: exact through two rows, unless the
    saturating form's floor would come out negative — then it is pinned at 0 and R_1 alone is fitted."""
    rows = list(rows)
    if len({(r.model, r.split) for r in rows}) != 1 or len({r.updates_per_round for r in rows}) < 2:
        raise ValueError("fit takes rows of one (model, split) at two or more values of u; mark them fit: true")
    if form not in FORMS:
        raise ValueError(f"form {form!r} unknown; use one of {', '.join(FORMS)}")
    u = np.array([r.updates_per_round for r in rows])
    y = np.array([r.rounds for r in rows], dtype=float)
    if form == "power":            # log rounds = log R_1 − β log u
        slope, icpt = np.polyfit(np.log(u), np.log(y), 1)
        r1, floor, beta = float(np.exp(icpt)), 0.0, float(-slope)
    else:                          # rounds = R_floor·1 + (R_1 − R_floor)·(1/u), each row weighted by 1/rounds
        a = np.stack([np.ones_like(u), 1 / u], axis=1) / y[:, None]
        (floor, span), *_ = np.linalg.lstsq(a, np.ones_like(y), rcond=None)
        if floor < 0:              # rounds cannot fall below zero: refit as the pure R_1/u (floor pinned at 0)
            floor, span = 0.0, float(a[:, 1].sum() / (a[:, 1] ** 2).sum())
        r1, floor, beta = float(floor + span), float(floor), 1.0
    return Constants(rows[0].model, rows[0].split, form, r1, floor, beta, tuple(r.label for r in rows))


def predict(c: Constants, updates_per_round: float) -> float:
    """Rounds to the target at u local updates per client per round."""
    if not updates_per_round >= 1:
        raise ValueError(f"u = {updates_per_round:g}: u counts local updates per round and is at least 1 (FedSGD)")
    if c.form == "power":
        return c.rounds_at_u1 * updates_per_round ** -c.exponent
    return c.rounds_floor + (c.rounds_at_u1 - c.rounds_floor) / updates_per_round


def _pred(c: Constants, r: Row, factor: float = 1.0, fitted: bool | None = None) -> Prediction:
    p = factor * predict(c, r.updates_per_round)
    return Prediction(r.label, r.model, r.split, r.updates_per_round, r.rounds, p, p / r.rounds - 1,
                      r.fit if fitted is None else fitted)


def _groups(rows):
    return {k: [r for r in rows if (r.model, r.split) == k] for k in dict.fromkeys((r.model, r.split) for r in rows)}


def check(rows=None, form: str = "saturating") -> tuple[list[Constants], list[Prediction]]:
    """Fit each (network, split) on its ``fit`` rows and predict all its rows; out of sample = the rest."""
    rows = load_rows() if rows is None else tuple(rows)
    consts, preds = [], []
    for grp in _groups(rows).values():
        c = fit([r for r in grp if r.fit], form)
        consts.append(c)
        preds += [_pred(c, r) for r in grp]
    return consts, preds


def cross_split(rows=None, anchor: str = "fedsgd") -> tuple[dict[str, float], list[Prediction]]:
    """Non-IID rows predicted by the IID constants × one factor per network: non-IID ÷ IID rounds at the anchor row
    (``"fedsgd"``: u = 1; ``"largest_u"``). Returns the factors and the non-IID predictions (anchor marked fitted)."""
    rows = load_rows() if rows is None else tuple(rows)
    consts, _ = check(rows)
    factors, preds = {}, []
    for c in consts:
        if c.split != "iid":
            continue
        non = [r for r in rows if r.model == c.model and r.split == "non-iid"]
        iid = {(r.epochs, r.batch): r for r in rows if r.model == c.model and r.split == "iid"}
        a = min(non, key=lambda r: r.updates_per_round) if anchor == "fedsgd" else \
            max(non, key=lambda r: r.updates_per_round) if anchor == "largest_u" else None
        if a is None:
            raise ValueError(f"anchor {anchor!r} unknown; use 'fedsgd' or 'largest_u'")
        factors[c.model] = a.rounds / iid[(a.epochs, a.batch)].rounds
        preds += [_pred(c, r, factors[c.model], r is a) for r in non]
    return factors, preds


def summary(preds, split: str | None = None) -> dict:
    """n, median and worst |error| (fractions) and the worst row, over the predictions not fitted on."""
    errs = [(abs(p.error), p.label) for p in preds if not p.fitted_on_it and split in (None, p.split)]
    if not errs:
        raise ValueError(f"no out-of-sample predictions{' for ' + split if split else ''}")
    worst = max(errs)
    return {"n": len(errs), "median": statistics.median(e for e, _ in errs), "worst": worst[0], "worst_row": worst[1]}


def _print_check(form: str) -> int:
    consts, preds = check(form=form)
    shape = "R_floor + (R_1 − R_floor)/u" if form == "saturating" else "R_1·u^(−β)"
    print(f"rounds(u) = {shape}; fitted per (model, split) on {sum(p.fitted_on_it for p in preds)} of {len(preds)} "
          "numbers of McMahan et al. 2017 Table 2:")
    for c in consts:
        print(f"  {c.model} {c.split}: R_1 = {c.rounds_at_u1:.0f}, R_floor = {c.rounds_floor:.1f}, "
              f"exponent = {c.exponent:.2f}; fitted on {' and '.join(l.split(' ', 3)[-1] for l in c.fitted_on)}")
    print(f"\n{'row':46s} {'u':>6s} {'published':>9s} {'predicted':>9s} {'error':>7s}")
    for p in preds:
        print(f"{p.label:46s} {p.updates_per_round:6g} {p.rounds_published:9d} {p.rounds_predicted:9.0f} "
              f"{p.error:+7.0%}{'  (fitted on)' if p.fitted_on_it else ''}")
    print()
    for label, split in (("out of sample", None), ("  IID", "iid"), ("  non-IID", "non-iid")):
        s = summary(preds, split)
        print(f"{label}: n = {s['n']}, median |error| {s['median']:.0%}, worst {s['worst']:.0%} ({s['worst_row']})")
    for anchor in ("fedsgd", "largest_u"):
        f, cp = cross_split(anchor=anchor)
        s = summary(cp)
        print(f"cross-split (IID constants × non-IID/IID at the {anchor} row: "
              f"{', '.join(f'{m} {v:.2f}' for m, v in f.items())}): n = {s['n']}, median |error| {s['median']:.0%}, "
              f"worst {s['worst']:.0%} ({s['worst_row']})")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers fedrounds", description=__doc__.split("\n\n")[0])
    ap.add_argument("--check", action="store_true", help="print the fit, every prediction and its error, and exit")
    ap.add_argument("--form", choices=FORMS, default="saturating", help="model form (default saturating)")
    ap.add_argument("--model", type=cli.name_of(("MNIST CNN", "Shakespeare LSTM")), default="MNIST CNN")
    ap.add_argument("--split", choices=SPLITS, default="iid")
    ap.add_argument("--u", type=cli.bounded_float(1, 1e6), help="local updates per client per round, E·n_k/B")
    results.add_output_args(ap)
    a = ap.parse_args(argv)
    if a.check:
        return _print_check(a.form)
    if a.u is None:
        raise ValueError("give --u N (local updates per client per round, E·n_k/B) or --check")
    c = next(c for c in check(form=a.form)[0] if (c.model, c.split) == (a.model, a.split))
    rec = Estimate(a.model, a.split, a.form, a.u, predict(c, a.u))
    if a.json or a.out:
        results.emit([rec], "fedavg_rounds", a, constants=vars(c))
    if not a.json:
        print(f"{a.model} {a.split}, u = {a.u:g}: about {rec.rounds_predicted:.0f} rounds to "
              f"{'99' if a.model == 'MNIST CNN' else '54'} % test accuracy ({a.form} model fitted on "
              f"{', '.join(c.fitted_on)})")
    return 0


if __name__ == "__main__":
    sys.exit(cli.run(main))
