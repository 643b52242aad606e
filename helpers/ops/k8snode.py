"""Reader for ``kubectl describe node`` on a GPU node: conditions, taints, capacity against allocatable
``nvidia.com/gpu`` (and MIG resources ``nvidia.com/mig-…``), and the GPU feature discovery labels (chapters 05, 13
and 27). Excerpts (a Conditions table without its header, Capacity without Labels) are read as far as they go;
:func:`parse_gfd_labels` reads the labels GFD writes, from `kubectl get node -o json` or its jq/grep excerpts.

    from helpers.ops import k8snode
    n = k8snode.parse_describe_node(text)     # K8sNode(name, conditions, taints, capacity, allocatable, labels …)
    n.gpu_resources()                         # {"nvidia.com/gpu": (capacity, allocatable), …}
"""
from __future__ import annotations

import re
from dataclasses import dataclass

_COND = re.compile(r"^\s+(Ready|MemoryPressure|DiskPressure|PIDPressure|NetworkUnavailable|[A-Z]\w+)\s+"
                   r"(True|False|Unknown)\s+(.*?)\s{2,}(.*?)\s{2,}(\w+)\s+(.*)$")


@dataclass(frozen=True)
class K8sNode:
    name: str
    conditions: tuple            # ((type, status, reason, message), …)
    taints: tuple                # ("nvidia.com/gpu=true:NoSchedule", …)
    unschedulable: bool | None
    capacity: tuple              # ((resource, value), …)
    allocatable: tuple
    labels: tuple                # ((key, value), …)

    def gpu_resources(self) -> dict:
        cap, alloc = dict(self.capacity), dict(self.allocatable)
        keys = [k for k in dict.fromkeys(list(cap) + list(alloc)) if k.startswith("nvidia.com/")]
        return {k: (int(cap[k]) if k in cap else None, int(alloc[k]) if k in alloc else None) for k in keys}


def parse_describe_node(text: str) -> K8sNode:
    name, conds, taints, unsched = "", [], [], None
    res = {"Capacity": [], "Allocatable": []}
    labels, section = [], ""
    for ln in text.splitlines():
        top = re.match(r"^([A-Z][A-Za-z ]*):\s*(.*)$", ln)
        if top:
            section, val = top.group(1), top.group(2).strip()
            if section == "Name":
                name = val
            elif section == "Taints" and val and val not in ("<none>", "&lt;none&gt;"):
                taints.append(val)
            elif section == "Unschedulable":
                unsched = val == "true"
            elif section == "Labels" and "=" in val:
                labels.append(tuple(val.split("=", 1)))
            continue
        c = _COND.match(ln)
        if c and not ln.strip().startswith("Type"):
            conds.append((c.group(1), c.group(2), c.group(5), c.group(6).strip()))
            continue
        s = ln.strip()
        if section == "Taints" and s and ln.startswith(" "):
            taints.append(s)
        elif section == "Labels" and "=" in s and ln.startswith(" "):
            labels.append(tuple(s.split("=", 1)))
        elif section in res:
            r = re.match(r"^\s+(\S+):\s+(\S+)\s*$", ln)
            if r:
                res[section].append((r.group(1), r.group(2)))
    if not (name or conds or taints or res["Capacity"]):
        raise ValueError("kubectl describe node: no Name:, Conditions rows, Taints: or Capacity: section")
    return K8sNode(name, tuple(conds), tuple(taints), unsched, tuple(res["Capacity"]), tuple(res["Allocatable"]),
                   tuple(labels))


# ---- GPU feature discovery labels ----------------------------------------------------------------------------

@dataclass(frozen=True)
class GfdLabels:
    product: str                 # nvidia.com/gpu.product: "NVIDIA-H100-80GB-HBM3", "A100-SXM4-40GB-MIG-1g.5gb"
    count: int | None            # nvidia.com/gpu.count (MIG devices with the single strategy)
    memory_MiB: float | None     # nvidia.com/gpu.memory, in MiB (some GFD versions print bytes: converted)
    memory_label_in_bytes: bool  # the label held bytes, not MiB (e.g. "16106127360" on a T4)
    replicas: int | None         # nvidia.com/gpu.replicas: > 1 means time-sliced or MPS-shared
    mig_strategy: str            # nvidia.com/mig.strategy: single / mixed / none / ""
    mig_devices: tuple           # (("1g.10gb", 2), …) from nvidia.com/mig-<profile>.count (mixed strategy)
    driver: str                  # "550.54.15" (cuda.driver-version.full or driver.major.minor.rev)
    labels: tuple                # every nvidia.com/* label as printed, in order


def _labels_of(text: str) -> list:
    """The label pairs of a ``kubectl get node -o json`` (Node or NodeList), its ``.metadata.labels`` printed by
    jq, or the same lines filtered by grep (not valid JSON: no braces, trailing commas)."""
    import json

    try:
        doc = json.loads(text)
    except ValueError:
        return re.findall(r'^\s*"([^"]+)":\s*"([^"]*)",?\s*$', text, re.M)
    if isinstance(doc, dict) and "items" in doc:
        doc = (doc["items"] or [{}])[0]
    if isinstance(doc, dict) and isinstance(doc.get("metadata"), dict):
        doc = doc["metadata"].get("labels") or {}
    return [(k, str(v)) for k, v in doc.items()] if isinstance(doc, dict) else []


def parse_gfd_labels(text: str) -> GfdLabels:
    """NVIDIA GPU feature discovery's node labels (``nvidia.com/gpu.product``, ``.count``, ``.memory``, MIG …)."""
    pairs = [(k, v) for k, v in _labels_of(text) if k.startswith("nvidia.com/")]
    f = dict(pairs)
    if "nvidia.com/gpu.product" not in f and "nvidia.com/gpu.count" not in f:
        raise ValueError("GPU feature discovery labels: no nvidia.com/gpu.product or nvidia.com/gpu.count label")
    num = lambda k: float(f[k]) if re.fullmatch(r"[0-9]+(\.[0-9]+)?", f.get(k, "")) else None  # noqa: E731
    mem, in_bytes = num("nvidia.com/gpu.memory"), False
    if mem is not None and mem > 4e6:               # no GPU has 4 TiB: the label is in bytes
        mem, in_bytes = mem / 2**20, True
    mig = tuple((m.group(1), int(v)) for k, v in pairs
                if (m := re.fullmatch(r"nvidia\.com/mig-(.+)\.count", k)) and v.isascii() and v.isdigit())
    drv = f.get("nvidia.com/cuda.driver-version.full") or ".".join(
        f[k] for k in ("nvidia.com/cuda.driver.major", "nvidia.com/cuda.driver.minor", "nvidia.com/cuda.driver.rev")
        if f.get(k))
    cnt, rep = num("nvidia.com/gpu.count"), num("nvidia.com/gpu.replicas")
    return GfdLabels(f.get("nvidia.com/gpu.product", ""), int(cnt) if cnt is not None else None, mem, in_bytes,
                     int(rep) if rep is not None else None, f.get("nvidia.com/mig.strategy", ""), mig, drv,
                     tuple(pairs))
