"""Reader for ``kubectl describe node`` on a GPU node: conditions, taints, capacity against allocatable
``nvidia.com/gpu`` (and MIG resources ``nvidia.com/mig-…``), and the GPU feature discovery labels (chapters 05, 13
and 27). Excerpts (a Conditions table without its header, Capacity without Labels) are read as far as they go.

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
