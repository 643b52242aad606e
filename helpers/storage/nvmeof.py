"""NVMe over Fabrics targets as nvmetcli JSON: generate a loop target and validate its structure (chapter 23).

    from helpers.storage import nvmeof
    nvmeof.configfs_status()                            # is the kernel's nvmet configfs here? (usually not in a VM)
    cfg = nvmeof.loop_target("nqn.2026-01.io.example:book", "/dev/nvme0n1")
    nvmeof.validate(cfg)                                # raises ValueError naming the bad field and the fix

Linux's NVMe target (``nvmet``) is configured through configfs under ``/sys/kernel/config/nvmet``: subsystems
(named by an NQN) hold namespaces (block devices or files), ports carry a transport (``loop``, ``tcp``,
``rdma``, ``fc``) and link to subsystems. ``nvmetcli save`` writes that tree as JSON and ``nvmetcli restore``
loads it back; this module writes the same JSON and checks it the way the tree's rules require. It never
touches configfs: the book generates and checks, and prints the commands that would apply it.
"""
from __future__ import annotations

import os
import uuid
from dataclasses import dataclass

CONFIGFS = "/sys/kernel/config/nvmet"
TRTYPES = ("loop", "tcp", "rdma", "fc")
ADRFAM = {"loop": ("",), "tcp": ("ipv4", "ipv6"), "rdma": ("ipv4", "ipv6", "ib"), "fc": ("fc",)}
NQN_MAX_BYTES = 223                     # NVMe Base Specification: an NQN is at most 223 bytes


@dataclass(frozen=True)
class ConfigfsStatus:
    present: bool
    path: str
    note: str


def configfs_status(path: str = CONFIGFS) -> ConfigfsStatus:
    """Whether the nvmet configfs tree exists (needs configfs mounted and ``modprobe nvmet nvme-loop``)."""
    if os.path.isdir(path):
        return ConfigfsStatus(True, path, f"{path} exists: nvmetcli restore could apply a configuration here")
    parent = os.path.dirname(path)
    why = ("configfs is mounted but the nvmet module is not loaded" if os.path.isdir(parent)
           else f"{parent} does not exist (configfs not mounted, or the kernel has no configfs)")
    return ConfigfsStatus(False, path, f"{path} is absent: {why}; the target below is generated and checked, not run")


def loop_target(nqn: str, device_path: str, *, nsid: int = 1, portid: int = 1, host_nqn: str | None = None,
                seed: int = 0) -> dict:
    """An nvmetcli JSON document exporting ``device_path`` as namespace ``nsid`` of subsystem ``nqn`` on a
    loop port. ``host_nqn`` restricts access to that host; without it any host may connect. The namespace
    GUID is derived from ``seed`` so the document is reproducible."""
    guid = str(uuid.UUID(int=uuid.uuid5(uuid.NAMESPACE_URL, f"{nqn}/{nsid}/{seed}").int))
    sub = {"allowed_hosts": [host_nqn] if host_nqn else [],
           "attr": {"allow_any_host": "0" if host_nqn else "1"},
           "namespaces": [{"device": {"nguid": guid, "path": device_path}, "enable": 1, "nsid": nsid}],
           "nqn": nqn}
    port = {"addr": {"adrfam": "", "traddr": "", "treq": "not specified", "trsvcid": "", "trtype": "loop"},
            "portid": portid, "referrals": [], "subsystems": [nqn]}
    cfg = {"hosts": [{"nqn": host_nqn}] if host_nqn else [], "ports": [port], "subsystems": [sub]}
    validate(cfg)
    return cfg


def _nqn_ok(nqn: str) -> bool:
    # "nqn.yyyy-mm.reverse-domain:name", the UUID form, or a bare name (nvmetcli's own examples use "testnqn")
    return isinstance(nqn, str) and 0 < len(nqn.encode()) <= NQN_MAX_BYTES and " " not in nqn


def validate(cfg: dict) -> dict:
    """Check an nvmetcli document's structure; return a summary, or raise ValueError naming the problem."""
    if not isinstance(cfg, dict):
        raise ValueError(f"nvmetcli config must be a JSON object, got {type(cfg).__name__}")
    missing = {"hosts", "ports", "subsystems"} - set(cfg)
    if missing:
        raise ValueError(f"nvmetcli config lacks {sorted(missing)}: nvmetcli save writes hosts, ports, subsystems")
    hosts = [h.get("nqn") for h in cfg["hosts"]]
    for h in hosts:
        if not _nqn_ok(h):
            raise ValueError(f"host nqn {h!r}: must be a non-empty string of ≤ {NQN_MAX_BYTES} bytes without spaces")
    subs = {}
    for s in cfg["subsystems"]:
        nqn = s.get("nqn")
        if not _nqn_ok(nqn):
            raise ValueError(f"subsystem nqn {nqn!r}: must be a non-empty string of ≤ {NQN_MAX_BYTES} bytes")
        if nqn in subs:
            raise ValueError(f"subsystem {nqn!r} defined twice; NQNs name subsystems uniquely")
        nsids = []
        for ns in s.get("namespaces", []):
            nsid, path = ns.get("nsid"), ns.get("device", {}).get("path", "")
            if not isinstance(nsid, int) or nsid < 1:
                raise ValueError(f"subsystem {nqn!r}: nsid {nsid!r} must be an integer ≥ 1")
            if not os.path.isabs(path):
                raise ValueError(f"subsystem {nqn!r} namespace {nsid}: device path {path!r} must be absolute")
            nsids.append(nsid)
        if len(set(nsids)) != len(nsids):
            raise ValueError(f"subsystem {nqn!r}: namespace ids {nsids} repeat; each nsid must be unique")
        allow_any = s.get("attr", {}).get("allow_any_host")
        if allow_any not in ("0", "1"):
            raise ValueError(f"subsystem {nqn!r}: attr.allow_any_host {allow_any!r} must be \"0\" or \"1\"")
        for h in s.get("allowed_hosts", []):
            if h not in hosts:
                raise ValueError(f"subsystem {nqn!r} allows host {h!r}, which is not in hosts {hosts}; add it there")
        if allow_any == "0" and not s.get("allowed_hosts"):
            raise ValueError(f"subsystem {nqn!r}: allow_any_host is \"0\" and no host is allowed; nobody could connect")
        subs[nqn] = nsids
    portids, ports = set(), []
    for p in cfg["ports"]:
        pid, addr = p.get("portid"), p.get("addr", {})
        if not isinstance(pid, int) or pid in portids:
            raise ValueError(f"portid {pid!r}: must be a unique integer")
        portids.add(pid)
        tr = addr.get("trtype")
        if tr not in TRTYPES:
            raise ValueError(f"port {pid}: trtype {tr!r} is not one of {TRTYPES}")
        if addr.get("adrfam", "") not in ADRFAM[tr]:
            raise ValueError(f"port {pid}: adrfam {addr.get('adrfam')!r} does not fit trtype {tr!r}; use {ADRFAM[tr]}")
        if tr != "loop" and not (addr.get("traddr") and addr.get("trsvcid")):
            raise ValueError(f"port {pid} ({tr}): needs traddr and trsvcid (e.g. an IP address and 4420)")
        for s in p.get("subsystems", []):
            if s not in subs:
                raise ValueError(f"port {pid} links subsystem {s!r}, which is not defined; define it under subsystems")
        ports.append(dict(portid=pid, trtype=tr, subsystems=list(p.get("subsystems", []))))
    return dict(hosts=hosts, subsystems=subs, ports=ports)


def apply_commands(json_path: str) -> list[str]:
    """The commands that would load a saved document on a machine whose kernel has nvmet (not run here)."""
    return ["modprobe nvmet", "modprobe nvme-loop", f"nvmetcli restore {json_path}",
            "nvme discover -t loop", "nvme connect -t loop -n <subsystem nqn>", "nvme list"]
