"""The data lifecycle as a model: objects move between hot, warm and cold tiers by age and access (chapter 04).

A day-by-day simulation of a training project's data — raw crawl, tokenised shards, checkpoints, logs — under a
tiering policy: an object that nobody has read for a while moves down a tier, a read brings it back to the hot
tier (paying the tier's retrieval price), the newest checkpoints stay hot whatever happens, and retention deletes
what is no longer needed (milestone checkpoints are kept). It reports the capacity of every tier on every day and
the cost of every tier in every 30-day month: storage, retrieval, and the minimum-duration charge a tier bills for
data that leaves it early. Prices come from ``data/tiers.yaml`` (dated, with sources).

The naive policy first: :data:`KEEP_ALL_HOT` keeps everything on the parallel file system for ever; the
policy of :func:`default_rules` is the one the chapter argues for. Both run through the same :func:`simulate`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

TIERS = ("hot", "warm", "cold")
DATA = Path(__file__).with_name("data") / "tiers.yaml"
MONTH_DAYS = 30


@dataclass(frozen=True)
class Tier:
    tier: str
    example: str
    usd_per_GB_month: float
    retrieval_usd_per_GB: float
    min_days: int
    date: str
    region: str
    source: str


def load_tiers(path: str | Path = DATA) -> dict[str, Tier]:
    """The tier table, checked: hot, warm and cold each once, prices falling from hot to cold."""
    import yaml

    rows = yaml.safe_load(Path(path).read_text())
    tiers = {r["tier"]: Tier(**{**r, "date": str(r["date"])}) for r in rows}
    if sorted(tiers) != sorted(TIERS) or len(rows) != len(TIERS):
        raise ValueError(f"{path}: need exactly one row for each tier {TIERS}, found {[r['tier'] for r in rows]}")
    prices = [tiers[t].usd_per_GB_month for t in TIERS]
    if not all(p > 0 for p in prices) or prices != sorted(prices, reverse=True):
        raise ValueError(f"{path}: storage prices must be positive and fall from hot to cold, got {prices}")
    return tiers


@dataclass(frozen=True)
class Rule:
    """What one class of data needs. Idle days count from the last read (or from creation)."""
    warm_after_idle_days: int | None = None     # hot -> warm when unread this long (None: never)
    cold_after_idle_days: int | None = None     # -> cold when unread this long (None: never)
    delete_after_days: int | None = None        # retention: deleted at this age, milestones excepted (None: kept)
    keep_latest_hot: int = 0                    # the newest N objects of the class stay hot

    def __post_init__(self):
        w, c = self.warm_after_idle_days, self.cold_after_idle_days
        if w is not None and c is not None and c <= w:
            raise ValueError(f"cold_after_idle_days={c} must exceed warm_after_idle_days={w}")
        if any(v is not None and v < 0 for v in (w, c, self.delete_after_days)) or self.keep_latest_hot < 0:
            raise ValueError(f"{self}: day counts and keep_latest_hot must be ≥ 0")


KEEP_ALL_HOT = Rule()


def default_rules() -> dict[str, Rule]:
    """The chapter's policy: raw data to cheap storage once tokenised, shards warm between runs, three latest
    checkpoints hot and the rest deleted at three days old unless they are milestones, logs kept 90 days."""
    return {"raw": Rule(warm_after_idle_days=3, cold_after_idle_days=30),
            "dataset": Rule(warm_after_idle_days=14, cold_after_idle_days=90),
            "checkpoint": Rule(warm_after_idle_days=7, cold_after_idle_days=60, delete_after_days=3, keep_latest_hot=3),
            "log": Rule(warm_after_idle_days=7, delete_after_days=90)}


@dataclass(frozen=True)
class Obj:
    name: str
    data_class: str
    size_bytes: float
    created_day: int
    reads: tuple[int, ...] = ()
    milestone: bool = False


def training_project(ckpt_bytes: float, days: int = 180, train_days: tuple[int, int] = (4, 64),
                     restarts: tuple[int, ...] = (17, 38, 51), finetune: tuple[int, int] = (120, 130)) -> list[Obj]:
    """One project's data: 40 TB of raw crawl (read twice to tokenise), 2 TB of shards (read every training day
    and again by a fine-tuning run), one ``ckpt_bytes`` checkpoint per training day (every 10th and the last are
    milestones; a restart reads the latest; milestones are read for evaluation on day 150), 20 GB of logs a day."""
    t0, t1 = train_days
    if not 0 < t0 < t1 <= days:
        raise ValueError(f"train_days={train_days} must lie inside 1..days={days}")
    train = tuple(range(t0, t1))
    objs = [Obj(f"raw/{i:02d}", "raw", 1e12, 0, (1, 2)) for i in range(40)]
    objs += [Obj(f"shards/{i:02d}", "dataset", 1e11, 3, train + tuple(range(*finetune))) for i in range(20)]
    for d in train:
        milestone = (d - t0) % 10 == 9 or d == t1 - 1
        reads = tuple(r for r in restarts if r == d + 1) + ((150,) if milestone else ())
        objs.append(Obj(f"ckpt/day{d:03d}", "checkpoint", ckpt_bytes, d, reads, milestone))
        objs.append(Obj(f"logs/day{d:03d}", "log", 2e10, d, (d + 1, d + 2)))
    return objs


@dataclass(frozen=True)
class TierDay:
    day: int
    tier: str
    stored_TB: float


@dataclass(frozen=True)
class TierMonth:
    month: int
    tier: str
    storage_usd: float
    retrieval_usd: float
    early_usd: float            # minimum-duration charges for data that left the tier early
    total_usd: float


@dataclass
class _Live:
    obj: Obj
    tier: str = "hot"
    since: int = 0              # day it entered its tier
    last_read: int = 0


@dataclass
class Simulation:
    days: list[TierDay] = field(default_factory=list)
    months: list[TierMonth] = field(default_factory=list)
    moves: dict[str, int] = field(default_factory=dict)     # "hot->warm": count, "delete": count, …

    def total_usd(self) -> float:
        return sum(m.total_usd for m in self.months)


def simulate(objects: list[Obj], rules: dict[str, Rule], tiers: dict[str, Tier], days: int) -> Simulation:
    """Run the policy for ``days`` days; storage is billed per day at price / 30."""
    missing = {o.data_class for o in objects} - set(rules)
    if missing:
        raise ValueError(f"no rule for data class(es) {sorted(missing)}: add them to rules (KEEP_ALL_HOT keeps all)")
    n_months = -(-days // MONTH_DAYS)
    cost = {(m, t, k): 0.0 for m in range(n_months) for t in TIERS for k in ("storage", "retrieval", "early")}
    sim, live = Simulation(), {}

    def leave(x: _Live, day: int, to: str) -> None:
        t = tiers[x.tier]
        short = t.min_days - (day - x.since)
        if short > 0:
            gb = x.obj.size_bytes / 1e9
            cost[(day // MONTH_DAYS, x.tier, "early")] += gb * t.usd_per_GB_month / MONTH_DAYS * short
        sim.moves[f"{x.tier}->{to}"] = sim.moves.get(f"{x.tier}->{to}", 0) + 1
        x.tier, x.since = to, day

    for day in range(days):
        m = day // MONTH_DAYS
        for o in objects:
            if o.created_day == day:
                live[o.name] = _Live(o, "hot", day, day)
        for x in live.values():
            if day in x.obj.reads:
                x.last_read = day
                if x.tier != "hot":                      # a read brings it back to the hot tier
                    cost[(m, x.tier, "retrieval")] += x.obj.size_bytes / 1e9 * tiers[x.tier].retrieval_usd_per_GB
                    leave(x, day, "hot")
        newest = set()
        for cls, rule in rules.items():
            if rule.keep_latest_hot:
                mine = sorted((x for x in live.values() if x.obj.data_class == cls),
                              key=lambda x: (x.obj.created_day, x.obj.name))
                newest |= {x.obj.name for x in mine[-rule.keep_latest_hot:]}
        for name in list(live):
            x, rule = live[name], rules[live[name].obj.data_class]
            age, idle = day - x.obj.created_day, day - x.last_read
            if name in newest:
                continue
            if rule.delete_after_days is not None and age >= rule.delete_after_days and not x.obj.milestone:
                leave(x, day, "delete")
                del live[name]
            elif x.tier != "cold" and rule.cold_after_idle_days is not None and idle >= rule.cold_after_idle_days:
                leave(x, day, "cold")
            elif x.tier == "hot" and rule.warm_after_idle_days is not None and idle >= rule.warm_after_idle_days:
                leave(x, day, "warm")
        for t in TIERS:
            gb = sum(x.obj.size_bytes for x in live.values() if x.tier == t) / 1e9
            cost[(m, t, "storage")] += gb * tiers[t].usd_per_GB_month / MONTH_DAYS
            sim.days.append(TierDay(day, t, round(gb / 1e3, 3)))
    for mo in range(n_months):
        for t in TIERS:
            s, r, e = (round(cost[(mo, t, k)], 2) for k in ("storage", "retrieval", "early"))
            sim.months.append(TierMonth(mo + 1, t, s, r, e, round(s + r + e, 2)))
    return sim
