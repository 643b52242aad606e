"""kubectl describe node, read on real outputs (tests/data/real/kubectl-describe-node)."""
from pathlib import Path

import pytest

from helpers.ops import k8snode

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "kubectl-describe-node"


def _node(name):
    return k8snode.parse_describe_node((REAL / name).read_text())


def test_taint_and_labels():
    n = _node("k8s-device-plugin-33-kind-taint.txt")
    assert (n.name, n.taints, n.unschedulable, len(n.labels)) == ("kind-control-plane", ("gpu:NoSchedule",), False, 8)


def test_conditions_without_gpus():
    n = _node("acs-engine-4236-conditions.txt")
    assert [(c[0], c[1]) for c in n.conditions] == [("MemoryPressure", "False"), ("DiskPressure", "False"),
                                                    ("PIDPressure", "False"), ("Ready", "True")]
    assert n.gpu_resources() == {} and dict(n.capacity)["cpu"] == "6"


def test_capacity_and_allocatable_gpu():
    n = _node("k8s-device-plugin-165-one-gpu.txt")
    assert len(n.conditions) == 5 and n.gpu_resources() == {"nvidia.com/gpu": (1, 1)}


def test_gpu_taint_and_unreachable():
    n = _node("karpenter-1476-g5-taints.txt")
    assert n.taints == ("tritonOnly=true:NoExecute", "nvidia.com/gpu=true:NoSchedule") and len(n.labels) == 14
    u = _node("k8s-device-plugin-302-unreachable.txt")
    assert all("unreachable" in t for t in u.taints) and len(u.taints) == 2


def test_mig_resources_and_bad_input():
    text = "Name: n1\nCapacity:\n  nvidia.com/mig-1g.10gb:  7\n  nvidia.com/gpu:  8\nAllocatable:\n  nvidia.com/gpu:  6\n"
    assert k8snode.parse_describe_node(text).gpu_resources() == {"nvidia.com/mig-1g.10gb": (7, None),
                                                                 "nvidia.com/gpu": (8, 6)}
    with pytest.raises(ValueError, match="kubectl describe node"):
        k8snode.parse_describe_node("nothing here\n")
