"""Reader for Slurm's ``--json`` outputs — ``scontrol show node --json``, ``sinfo --json`` and ``squeue --json`` —
in the schemas the versions actually print (chapters 13 and 27):

* OpenAPI v0.0.37/0.0.38 (Slurm 21.08, 22.05): ``"nodes": [{"name", "state": "mixed", "state_flags": ["DRAIN"],
  "reason", "gres", "tres", "tres_used"}]`` and ``"jobs": [{"job_id", "job_state": "RUNNING", "state_reason"}]``;
* data_parser v0.0.39 and later (Slurm 23.02 …): a node's ``"state"`` is a list (``["IDLE", "DRAIN"]``), times are
  ``{"set", "infinite", "number"}`` objects, ``sinfo --json`` prints ``"sinfo": [{"node": {"state": […]},
  "nodes": {"nodes": […], "total"}, "reason": {"description", "user", "time"}, "partition": {"name"}}]`` and a
  job's ``"job_state"`` becomes a list in 23.11 (``squeue --json`` of 23.02.6 still prints ``"RUNNING"``).

slurmrestd answers ``/nodes`` and ``/jobs`` with the same documents (``meta.command`` empty, ``meta.client.source`` an
address); the command line fills ``meta.command`` (``["squeue"]``, ``["show", "node"]``), kept in ``command``.

The rows are the same dataclasses the text readers return (:mod:`helpers.ops.slurmread`), so the verdicts are the
same: ``IDLE+DRAIN`` is degraded, ``DOWN`` failed, whichever form the node came in.

    from helpers.ops import slurmjson
    doc = slurmjson.parse_slurm_json(text)   # SlurmJson(kind, release, nodes, sinfo, jobs)
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timezone

from helpers.ops.slurmread import QueuedJob, SinfoRow, SlurmNode, _tres_gpus, gres_gpus


@dataclass(frozen=True)
class SlurmJson:
    kind: str                    # "nodes" (scontrol show node / sinfo 21.08), "sinfo" (sinfo ≥ 23.02) or "jobs"
    release: str                 # "25.11.0" from meta, "" when absent
    data_parser: str             # "data_parser/v0.0.44", or the OpenAPI plugin "openapi/v0.0.37"
    nodes: tuple                 # SlurmNode …
    sinfo: tuple                 # SinfoRow …
    jobs: tuple                  # QueuedJob …
    command: tuple = ()          # meta.command: ("squeue",) from the command line, () from slurmrestd


def _number(v):
    """Slurm's ``{"set": true, "infinite": false, "number": N}`` or a plain number → N (None when unset)."""
    if isinstance(v, dict):
        return v.get("number") if v.get("set", True) and not v.get("infinite") else None
    return v


def _state(v, flags=()) -> str:
    """``["IDLE", "DRAIN"]`` or ``"idle"`` + ``state_flags`` → ``"IDLE+DRAIN"`` (the scontrol text form)."""
    parts = list(v) if isinstance(v, list) else [str(v)] if v else []
    return "+".join(str(p).upper() for p in parts + list(flags or ()))


def _release(meta: dict) -> tuple[str, str]:
    slurm = meta.get("slurm") or meta.get("Slurm") or {}
    plugin = meta.get("plugin") or meta.get("plugins") or {}
    parser = plugin.get("data_parser") or plugin.get("type", "")
    return str(slurm.get("release", "")), str(parser)


def _reason(reason: str, who, when) -> str:
    """As scontrol prints it: ``Not responding [slurm@2026-01-22T15:43:09]`` (the time in UTC)."""
    when = _number(when)
    if reason and who:
        try:
            at = datetime.fromtimestamp(when, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%S") if when else ""
        except (TypeError, ValueError, OverflowError, OSError):
            raise ValueError(f"Slurm --json: reason time {when!r} of {reason!r} is not a Unix time in seconds; "
                             "give the document as Slurm printed it") from None
        reason += f" [{who}" + (f"@{at}]" if at else "]")
    return reason or ""


def _node(n: dict) -> SlurmNode:
    reason = _reason(n.get("reason") or "", n.get("reason_set_by_user"), n.get("reason_changed_at"))
    gres = n.get("gres") or ""
    cfg = _tres_gpus(n.get("tres", "")) or gres_gpus(gres)
    fields = tuple((k, v) for k, v in n.items() if not isinstance(v, (dict, list)))
    return SlurmNode(str(n.get("name", "?")), _state(n.get("state"), n.get("state_flags")), reason, cfg,
                     _tres_gpus(n.get("tres_used", "") or ""), fields)


def _sinfo_row(e: dict) -> SinfoRow:
    nodes = e.get("nodes") or {}
    names = nodes.get("nodes") or []
    r = e.get("reason") or {}
    reason = _reason(r.get("description", ""), r.get("user"), r.get("time")) if isinstance(r, dict) else str(r)
    return SinfoRow(str((e.get("partition") or {}).get("name", "")), _state((e.get("node") or {}).get("state")),
                    nodes.get("total"), ",".join(names), reason)


def _job(j: dict) -> QueuedJob:
    state = _state(j.get("job_state"))
    why = str(j.get("state_reason") or "")
    nodes = _number(j.get("node_count"))
    fields = tuple((k, v) for k, v in j.items() if not isinstance(v, (dict, list)))
    return QueuedJob(str(j.get("job_id", "")), state, str(j.get("partition", "")), str(j.get("user_name", "")),
                     nodes if isinstance(nodes, int) else None, str(j.get("nodes") or ""),
                     "" if why == "None" else why, fields)


def parse_slurm_json(text: str | dict) -> SlurmJson:
    """One ``--json`` document of scontrol show node, sinfo or squeue. Raises ValueError naming what it saw."""
    doc = json.loads(text) if isinstance(text, str) else text
    if not isinstance(doc, dict) or not any(k in doc for k in ("nodes", "sinfo", "jobs")):
        seen = sorted(doc)[:6] if isinstance(doc, dict) else type(doc).__name__
        raise ValueError(f"Slurm --json: no 'nodes', 'sinfo' or 'jobs' list (keys: {seen})")
    for e in doc.get("errors") or []:
        if isinstance(e, dict) and e.get("error"):
            raise ValueError(f"Slurm --json carries an error: {e.get('error')} ({e.get('source', '')})")
    meta = doc.get("meta") if isinstance(doc.get("meta"), dict) else {}
    release, parser = _release(meta)
    command = tuple(str(c) for c in meta.get("command") or ()) if isinstance(meta.get("command"), list) else ()
    kind = next(k for k in ("sinfo", "jobs", "nodes") if k in doc)
    rows = _entries(doc[kind], kind)
    if kind == "sinfo":
        return SlurmJson("sinfo", release, parser, (), tuple(_sinfo_row(e) for e in rows), (), command)
    if kind == "jobs":
        return SlurmJson("jobs", release, parser, (), (), tuple(_job(j) for j in rows), command)
    return SlurmJson("nodes", release, parser, tuple(_node(n) for n in rows), (), (), command)


def _entries(rows, kind: str) -> list:
    """The ``nodes``/``sinfo``/``jobs`` list, each entry an object; anything else is refused by name."""
    if not isinstance(rows, list):
        raise ValueError(f"Slurm --json: '{kind}' is {type(rows).__name__}, not a list; give the whole document "
                         f"that scontrol/sinfo/squeue --json (or slurmrestd) printed")
    bad = next((i for i, r in enumerate(rows) if not isinstance(r, dict)), None)
    if bad is not None:
        raise ValueError(f"Slurm --json: '{kind}'[{bad}] is {type(rows[bad]).__name__}, not an object; "
                         "the document was cut or edited, give it as Slurm printed it")
    return rows
