"""MIG (Multi-Instance GPU) profiles as data, and a planner that packs tenants' requests into valid placements
(chapter 05, "Partitioning one GPU").

A MIG-capable GPU has 8 memory slices and 7 compute slices. A GPU instance of a profile occupies ``memory`` slices
starting at one of the profile's allowed ``starts`` (what ``nvidia-smi mig -lgipp`` prints as ``{0,2,4}:2``) and
``compute`` of the 7 compute slices. A set of instances is valid when no two overlap on the memory axis, the compute
slices add up to at most 7, and no profile exceeds its instance limit (``1g.*+me``: one). Profiles come from
``helpers/ops/data/mig_profiles.yaml`` (NVIDIA's MIG user guide); the planner is checked against the configurations
NVIDIA ships in mig-parted (``tests/data/real/nvidia-smi-mig/``).

    from helpers.ops import mig
    mig.place("H200-141GB", ["3g.71gb", "2g.35gb", "1g.18gb", "1g.18gb"])   # → [Instance(...), ...] or None
    mig.pack("H200-141GB", ["3g.71gb"] * 3 + ["1g.35gb"] * 2)               # → Plan on the fewest GPUs
    python -m helpers mig plan --gpu H200-141GB --request 3g.71gb,3g.71gb,1g.18gb
    python -m helpers mig list --out mig.json           # this machine's profiles (read-only nvidia-smi queries)
"""
from __future__ import annotations

import argparse
import itertools
import re
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import yaml

DATA = Path(__file__).parent / "data" / "mig_profiles.yaml"


@dataclass(frozen=True)
class Profile:
    name: str
    id: int
    compute: int          # compute slices of 7
    memory: int           # memory slices of 8
    max: int              # instance limit on one GPU
    starts: tuple[int, ...]
    sms: int | None
    memory_GB: float      # nominal: the GPU's nominal memory × memory / 8 (what the profile name rounds)


@dataclass(frozen=True)
class Instance:
    profile: str
    start: int            # first memory slice
    memory: int
    compute: int


@dataclass(frozen=True)
class Plan:
    gpu: str
    gpus: tuple[tuple[Instance, ...], ...]     # the instances on each GPU used
    unplaced: tuple[str, ...]

    @property
    def gpu_count(self) -> int:
        return len(self.gpus)


@lru_cache(maxsize=1)
def _data() -> dict:
    return yaml.safe_load(DATA.read_text(encoding="utf-8"))


def gpu_types() -> list[str]:
    return list(_data()["gpus"])


def profiles(gpu: str) -> dict[str, Profile]:
    """The MIG profiles of ``gpu`` (a key of mig_profiles.yaml), by name."""
    gpus = _data()["gpus"]
    if gpu not in gpus:
        raise ValueError(f"no MIG profiles for GPU {gpu!r}; known: {', '.join(gpus)}")
    row = gpus[gpu]
    return {p["name"]: Profile(p["name"], p["id"], p["compute"], p["memory"], p["max"], tuple(p["starts"]),
                               p["sms"], row["memory_GB"] * p["memory"] / _data()["memory_slices"])
            for p in row["profiles"]}


def _profile(gpu: str, name: str) -> Profile:
    ps = profiles(gpu)
    if name not in ps:
        raise ValueError(f"{name!r} is not a MIG profile of {gpu}; give one of {', '.join(ps)}")
    return ps[name]


def is_valid(gpu: str, instances: list[Instance]) -> tuple[bool, str]:
    """Whether a set of placed instances can coexist on one GPU, and why not."""
    used = [False] * _data()["memory_slices"]
    ps = profiles(gpu)
    for inst in instances:
        p = ps[inst.profile]
        if inst.start not in p.starts:
            return False, f"{inst.profile} cannot start at memory slice {inst.start} (allowed {set(p.starts)})"
        for s in range(inst.start, inst.start + p.memory):
            if used[s]:
                return False, f"{inst.profile} at slice {inst.start} overlaps memory slice {s}"
            used[s] = True
    compute = sum(ps[i.profile].compute for i in instances)
    if compute > _data()["compute_slices"]:
        return False, f"{compute} compute slices > {_data()['compute_slices']}"
    for name, n in Counter(i.profile for i in instances).items():
        if n > ps[name].max:
            return False, f"{n} × {name} > its limit of {ps[name].max}"
    return True, "ok"


def place(gpu: str, requests: list[str], existing: tuple[Instance, ...] = ()) -> list[Instance] | None:
    """Placements for every profile in ``requests`` on one GPU beside ``existing``, or None if they cannot fit.

    Exhaustive search (largest profile first, every allowed start): at most 7 instances, so it is instant. Counts
    over a profile's instance limit or slices over the GPU's are rejected before any placement is tried.
    """
    ps = {name: _profile(gpu, name) for name in requests}
    if not within_limits(gpu, [*requests, *(i.profile for i in existing)]):
        return None
    order = sorted(requests, key=lambda n: (-ps[n].memory, -ps[n].compute, n))

    def go(i: int, placed: list[Instance]) -> list[Instance] | None:
        if i == len(order):
            return placed
        p = ps[order[i]]
        for start in p.starts:
            cand = placed + [Instance(p.name, start, p.memory, p.compute)]
            if is_valid(gpu, cand)[0]:
                found = go(i + 1, cand)
                if found is not None:
                    return found
        return None

    found = go(0, list(existing))
    return None if found is None else found[len(existing):]


def within_limits(gpu: str, names: list[str]) -> bool:
    """Checked before any search: no profile over its instance limit, compute and memory slices within the GPU's."""
    ps, d = profiles(gpu), _data()
    counts = Counter(names)
    return all(n <= ps[name].max for name, n in counts.items()) and \
        sum(ps[k].compute * n for k, n in counts.items()) <= d["compute_slices"] and \
        sum(ps[k].memory * n for k, n in counts.items()) <= d["memory_slices"]


def min_gpus(gpu: str, requests: list[str]) -> int:
    """A lower bound on the GPUs ``requests`` need: counts over per-GPU limits, slices over one GPU's (no search)."""
    ps, d = {name: _profile(gpu, name) for name in set(requests)}, _data()
    counts = Counter(requests)
    if not counts:
        return 0
    by_limit = max(-(-n // ps[k].max) for k, n in counts.items())
    by_compute = -(-sum(ps[k].compute * n for k, n in counts.items()) // d["compute_slices"])
    by_memory = -(-sum(ps[k].memory * n for k, n in counts.items()) // d["memory_slices"])
    return max(by_limit, by_compute, by_memory)


def fits(gpu: str, counts: dict[str, int]) -> bool:
    """Whether ``{"1g.10gb": 2, "3g.40gb": 1}`` (mig-parted's ``mig-devices`` form) fits on one GPU."""
    return place(gpu, [n for n, c in counts.items() for _ in range(c)]) is not None


def pack(gpu: str, requests: list[str], max_gpus: int = 64) -> Plan:
    """Pack requests onto the fewest GPUs: first fit decreasing, each GPU checked exactly by :func:`place`.

    Requests that cannot fit on ``max_gpus`` GPUs (:func:`min_gpus`, from each profile's instance limit and the
    slices) are refused before any search, with the number needed and the limit."""
    ps = {name: _profile(gpu, name) for name in requests}
    need = min_gpus(gpu, requests)
    if need > max_gpus:
        worst = max(Counter(requests).items(), key=lambda kv: -(-kv[1] // ps[kv[0]].max))
        raise ValueError(f"{len(requests)} instances need at least {need} × {gpu} (e.g. {worst[1]} × {worst[0]} at "
                         f"{ps[worst[0]].max} per GPU) but max_gpus is {max_gpus}: raise --max-gpus to {need} or "
                         "request fewer instances")
    order = sorted(requests, key=lambda n: (-ps[n].compute, -ps[n].memory, n))
    boards: list[list[Instance]] = []
    refused: dict[int, set[str]] = defaultdict(set)
    unplaced = []
    for name in order:
        for board in (b for b in boards if name not in refused[id(b)]):  # a board only grows: a no stays a no
            new = place(gpu, [name], tuple(board))
            if new is not None:
                board.extend(new)
                break
            refused[id(board)].add(name)
        else:
            if len(boards) < max_gpus:
                boards.append(place(gpu, [name]) or [])
            else:
                unplaced.append(name)
    return Plan(gpu, tuple(tuple(sorted(b, key=lambda i: i.start)) for b in boards), tuple(unplaced))


def smallest_profile(gpu: str, memory_GB: float, compute: int = 1) -> str:
    """The smallest profile with at least ``memory_GB`` (nominal) and ``compute`` slices: what a tenant should ask for."""
    ok = [p for p in profiles(gpu).values()
          if p.memory_GB >= memory_GB and p.compute >= compute and "+" not in p.name]
    if not ok:
        raise ValueError(f"no {gpu} MIG profile has {memory_GB} GB and {compute} compute slices; "
                         "the whole GPU (7g) is the largest")
    return min(ok, key=lambda p: (p.compute, p.memory, p.name)).name


def maximal_configs(gpu: str) -> list[dict[str, int]]:
    """Every maximal valid mix of profiles (no further instance fits), without the +me variants.

    Counts are bounded by each profile's limit, filtered by the slice totals, then checked by :func:`place`.
    """
    ps = [p for p in profiles(gpu).values() if "+" not in p.name]
    slices_c, slices_m = _data()["compute_slices"], _data()["memory_slices"]
    valid = set()
    for counts in itertools.product(*(range(p.max + 1) for p in ps)):
        if sum(c * p.compute for c, p in zip(counts, ps)) > slices_c or \
                sum(c * p.memory for c, p in zip(counts, ps)) > slices_m or not any(counts):
            continue
        if place(gpu, [p.name for c, p in zip(counts, ps) for _ in range(c)]) is not None:
            valid.add(counts)
    maximal = [c for c in valid
               if not any(tuple(x + (i == k) for i, x in enumerate(c)) in valid for k in range(len(ps)))]
    return [{p.name: n for p, n in zip(ps, c) if n} for c in sorted(maximal, reverse=True)]


# ---- nvidia-smi output --------------------------------------------------------------------------------------

_LGIP = re.compile(r"^\|\s*(\d+)\s+MIG\s+(\S+)\s+(\d+)\s+(\d+)/(\d+)\s+([\d.]+)\s+(Yes|No)\s+(\d+)\s+(\d+)\s+(\d+)\s*\|", re.A)
_LGIPP = re.compile(r"GPU\s+([0-9]+)\s+Profile ID\s+([0-9]+)\s+Placements?\s*:\s*\{([0-9,]+)\}:([0-9]+)")


def parse_lgip(text: str) -> list[dict]:
    """Rows of ``nvidia-smi mig -lgip``: gpu, name, id, free, total, memory_GiB, sms."""
    rows = []
    for line in text.splitlines():
        m = _LGIP.match(line.strip())
        if m:
            g, name, pid, free, total, mem, _p2p, sms, _dec, _enc = m.groups()
            rows.append({"gpu": int(g), "name": name, "id": int(pid), "free": int(free), "total": int(total),
                         "memory_GiB": float(mem), "sms": int(sms)})
    return rows


def parse_lgipp(text: str) -> dict[int, tuple[tuple[int, ...], int]]:
    """``nvidia-smi mig -lgipp``: profile id → (allowed starts, memory slices)."""
    out = {}
    for m in _LGIPP.finditer(text):
        out[int(m.group(2))] = (tuple(int(s) for s in m.group(3).split(",")), int(m.group(4)))
    return out


def list_real(timeout_s: float = 30.0) -> tuple[list[dict], str]:
    """This machine's MIG profiles from ``nvidia-smi mig -lgip`` and ``-lgipp`` (read-only queries: nothing is
    changed), with each profile's placements; ([], why) where nvidia-smi is absent or MIG is not enabled."""
    import shutil
    import subprocess

    if shutil.which("nvidia-smi") is None:
        return [], "nvidia-smi not found (no NVIDIA driver here)"
    out = {}
    for flag in ("-lgip", "-lgipp"):
        p = subprocess.run(["nvidia-smi", "mig", flag], capture_output=True, text=True, timeout=timeout_s)
        out[flag] = p.stdout + p.stderr
    rows = parse_lgip(out["-lgip"])
    placements = parse_lgipp(out["-lgipp"])
    for r in rows:
        starts, size = placements.get(r["id"], ((), 0))
        r["starts"], r["memory_slices"] = list(starts), size
    why = "ok" if rows else " ".join(out["-lgip"].split())[:200] or "no MIG profiles listed"
    return rows, why


def main(argv: list[str] | None = None) -> int:
    from helpers.core import cli, results

    ap = argparse.ArgumentParser(prog="python -m helpers mig", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    pl = sub.add_parser("plan", help="pack MIG instances onto the fewest GPUs")
    pl.add_argument("--gpu", default="H200-141GB", choices=gpu_types())
    pl.add_argument("--request", type=cli.csv_of(str), required=True, help="profiles, e.g. 3g.71gb,1g.18gb")
    pl.add_argument("--max-gpus", type=cli.bounded_int(1, 4096), default=64,
                    help="GPUs the plan may use; requests that need more are refused before any search")
    ls = sub.add_parser("list", help="this machine's MIG profiles (nvidia-smi mig -lgip/-lgipp, read-only)")
    results.add_output_args(ls)
    args = ap.parse_args(argv)
    if args.cmd == "list":
        rows, why = list_real()
        results.emit(rows, "mig-profiles", args, note=why)
        return 0
    plan = pack(args.gpu, list(args.request), max_gpus=args.max_gpus)
    for i, board in enumerate(plan.gpus):
        print(f"GPU {i}: " + ", ".join(f"{x.profile}@{x.start}" for x in board))
    print(f"{len(args.request)} instances on {plan.gpu_count} × {args.gpu}")
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
