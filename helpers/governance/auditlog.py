"""A tamper-evident audit log: every line carries the hash of the previous one (chapter 20).

Line k stores ``prev`` = hash of line k-1 and ``hash`` = HMAC-SHA256(key, prev || canonical JSON of the entry).
Editing, deleting or reordering any line breaks the chain from that line on, and ``verify`` names the first bad line.
Without the key (kept away from the log's host, e.g. in a KMS) an attacker cannot recompute the chain; with a plain
hash instead of an HMAC they could rewrite the whole tail — which is why the key matters. Anchoring the latest hash
elsewhere (a second system, a WORM bucket) also catches truncation at the end.
"""
from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass

GENESIS = "0" * 64


def _digest(key: bytes, prev: str, entry: dict) -> str:
    body = json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hmac.new(key, (prev + body).encode(), hashlib.sha256).hexdigest()


def append(lines: list[str], key: bytes, entry: dict) -> list[str]:
    """Return ``lines`` plus one JSON line for ``entry`` chained to the last one."""
    prev = json.loads(lines[-1])["hash"] if lines else GENESIS
    rec = {"entry": entry, "prev": prev, "hash": _digest(key, prev, entry)}
    return lines + [json.dumps(rec, sort_keys=True, ensure_ascii=False)]


@dataclass(frozen=True)
class Verdict:
    ok: bool
    lines: int
    first_bad_line: int | None     # 1-based
    reason: str


def verify(lines: list[str], key: bytes, anchor: str | None = None) -> Verdict:
    """Walk the chain; ``anchor`` = the last hash kept elsewhere (detects a truncated tail)."""
    prev = GENESIS
    for k, line in enumerate(lines, 1):
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            return Verdict(False, len(lines), k, "not JSON")
        if rec.get("prev") != prev:
            return Verdict(False, len(lines), k, "prev does not match the line before (deleted or reordered)")
        if not hmac.compare_digest(rec.get("hash", ""), _digest(key, prev, rec.get("entry", {}))):
            return Verdict(False, len(lines), k, "hash does not match the entry (edited)")
        prev = rec["hash"]
    if anchor is not None and prev != anchor:
        return Verdict(False, len(lines), len(lines), "last hash differs from the anchor (truncated)")
    return Verdict(True, len(lines), None, "chain intact")


def demo_log(key: bytes, n: int = 6) -> list[str]:
    """A short log of cluster events (who did what, when) for the lab."""
    events = [("alice", "login", "bastion-1"), ("alice", "sbatch", "job 4711 on 64 GPUs"),
              ("bob", "kubectl get secrets", "namespace team-a: denied"), ("carol", "scp", "ckpt-0100.pt to storage"),
              ("alice", "scancel", "job 4711"), ("root", "ipmitool chassis power cycle", "gpu-node-17")]
    lines: list[str] = []
    for i, (who, what, detail) in enumerate(events[:n]):
        lines = append(lines, key, {"seq": i, "time": f"2026-01-05T09:{10 + 7 * i:02d}:00Z", "user": who,
                                    "action": what, "detail": detail})
    return lines
