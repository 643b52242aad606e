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


# ---- GPU feature discovery labels (tests/data/real/gfd-labels: NVIDIA's cloud-native docs) -------------------

def test_gfd_labels_h100_mig_mixed_and_single():
    from helpers.ops import k8snode

    mixed = k8snode.parse_gfd_labels((REAL.parent / "gfd-labels" / "nvidia-docs-h100-mig-mixed-labels.json").read_text())
    assert (mixed.product, mixed.count, mixed.memory_MiB, mixed.mig_strategy, mixed.driver) == \
        ("NVIDIA-H100-80GB-HBM3", 1, 81559, "mixed", "550.54.15")
    assert mixed.mig_devices == (("1g.10gb", 2), ("2g.20gb", 1), ("3g.40gb", 1)) and not mixed.memory_label_in_bytes
    single = k8snode.parse_gfd_labels((REAL.parent / "gfd-labels" / "nvidia-docs-h100-mig-single-labels.json").read_text())
    assert (single.mig_strategy, single.mig_devices, single.replicas) == ("single", (), 1)
    assert dict(single.labels)["nvidia.com/mig.config"] == "all-disabled"


def test_gfd_labels_jq_and_grep_excerpts():
    from helpers.ops import k8snode

    dgx = k8snode.parse_gfd_labels((REAL.parent / "gfd-labels" / "nvidia-docs-dgx-a100-mig-single-1g5gb.json").read_text())
    assert (dgx.product, dgx.count, dgx.memory_MiB, dgx.driver) == ("A100-SXM4-40GB-MIG-1g.5gb", 7, 4864, "450.80.02")
    t4 = k8snode.parse_gfd_labels((REAL.parent / "gfd-labels" / "nvidia-docs-openshift-t4-time-slicing-grep.txt").read_text())
    assert (t4.product, t4.replicas, t4.driver) == ("Tesla-T4-SHARED", 8, "510.73.08")
    assert t4.memory_label_in_bytes and t4.memory_MiB == 16106127360 / 2**20      # the label says 16106127360


def test_gfd_labels_nodecheck():
    from helpers.ops import nodecheck, noderules_ext

    files = sorted(f for f in (REAL.parent / "gfd-labels").iterdir() if f.name != "SOURCES.md")
    assert {nodecheck.detect(f.read_text()) for f in files} == {"gfd-labels"}
    found = [x for f in files for x in nodecheck.read_path(f)]
    assert {x.status for x in found} == {"healthy"} and len(found) == 4
    assert any("time-sliced: 8 replicas" in x.why for x in found)
    bad = '{"nvidia.com/gpu.product": "NVIDIA-H100-80GB-HBM3", "nvidia.com/mig.config.state": "failed"}'
    assert noderules_ext.findings("gfd-labels", bad, "x")[0].status == "degraded"
