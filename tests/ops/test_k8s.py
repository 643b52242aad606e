"""Kubernetes manifests for GPUs validated offline (helpers.ops.k8s)."""
import pytest

from helpers.ops import k8s

MANIFESTS = [k8s.gpu_pod("train", 1, "nvidia.com/mig-1g.18gb", "NVIDIA-H200"), k8s.gpu_pod("whole", 8),
             k8s.device_plugin_daemonset("time-slicing-config"), k8s.time_slicing_config(4),
             k8s.exclusive_mode_daemonset(), k8s.gpu_operator_cluster_policy(time_slicing_map="time-slicing-config"),
             k8s.batch_job("ddp", 1, 2, ["python", "-m", "helpers", "dptrain"], queue="team-a"),
             *k8s.kueue_queues(8), k8s.volcano_gang_job("gang", 4, 8, ["python", "train.py"])]


@pytest.mark.parametrize("m", MANIFESTS, ids=lambda m: f"{m['kind']}-{m['metadata']['name']}")
def test_manifests_validate(m):
    v = k8s.validate(m)
    assert v.ok, v.message


def test_a_misspelt_field_fails_strict_validation():
    pod = k8s.gpu_pod("p")
    pod["spec"]["containers"][0]["resources"]["limit"] = pod["spec"]["containers"][0]["resources"].pop("limits")
    v = k8s.validate(pod)
    assert not v.ok and "limit" in v.message


def test_a_custom_resource_missing_its_key_field_fails():
    job = k8s.volcano_gang_job("g", 2, 1, ["x"])
    del job["spec"]["minAvailable"]
    assert not k8s.validate(job).ok


def test_bad_values():
    with pytest.raises(ValueError, match="fractions"):
        k8s.gpu_pod("p", gpus=0)
    with pytest.raises(ValueError, match="replicas"):
        k8s.time_slicing_config(1)
