"""Kubernetes manifests for GPUs — the NVIDIA device plugin, its time-slicing config, MIG and exclusive use, GPU
Operator and batch queues — generated as data and validated offline against the Kubernetes OpenAPI schemas with
``kubernetes-validate`` (chapters 05 and 13).

Core kinds (Pod, DaemonSet, ConfigMap, Job …) are checked against the schema of a Kubernetes release, ``strict`` so
that a misspelt field fails. Custom resources (the GPU Operator's ClusterPolicy, Kueue's ClusterQueue, Volcano's Job)
have no schema in kubernetes-validate; :func:`validate` says so instead of pretending, and checks the fields the
book relies on. A schema check is not a scheduler: a Pod asking for more GPUs than any node has still validates.

    from helpers.ops import k8s
    pod = k8s.gpu_pod("train", gpus=1, resource="nvidia.com/mig-1g.18gb", product="NVIDIA-H200")
    k8s.validate(pod)          # → Validation(kind="Pod", ok=True, checked="schema 1.33 (strict)", message="")
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

K8S_VERSION = "1.33"
DEVICE_PLUGIN_IMAGE = "nvcr.io/nvidia/k8s-device-plugin:v0.17.0"
CUDA_IMAGE = "nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04"
GPU_TOLERATION = {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}


@dataclass(frozen=True)
class Validation:
    kind: str
    name: str
    ok: bool
    checked: str
    message: str


def gpu_pod(name: str, gpus: int = 1, resource: str = "nvidia.com/gpu", product: str | None = None,
            image: str = CUDA_IMAGE, command: tuple[str, ...] = ("nvidia-smi", "-L")) -> dict[str, Any]:
    """A Pod that asks for ``gpus`` of ``resource`` (whole GPUs, a MIG profile ``nvidia.com/mig-1g.18gb`` in the
    mixed strategy, or a time-sliced replica), tolerates the GPU taint and may pin a product label (GPU feature
    discovery sets ``nvidia.com/gpu.product``)."""
    if gpus < 1:
        raise ValueError(f"gpus={gpus}: a GPU request is a positive integer (GPUs cannot be requested in fractions)")
    spec: dict[str, Any] = {
        "restartPolicy": "Never",
        "tolerations": [GPU_TOLERATION],
        "containers": [{"name": name, "image": image, "command": list(command),
                        "resources": {"limits": {resource: gpus}}}],
    }
    if product:
        spec["nodeSelector"] = {"nvidia.com/gpu.product": product}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def device_plugin_daemonset(config_map: str | None = None) -> dict[str, Any]:
    """The NVIDIA device plugin as a DaemonSet (what its static manifest deploys), optionally reading a config map."""
    container: dict[str, Any] = {
        "name": "nvidia-device-plugin-ctr", "image": DEVICE_PLUGIN_IMAGE,
        "env": [{"name": "FAIL_ON_INIT_ERROR", "value": "false"}],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}],
    }
    volumes: list[dict[str, Any]] = [{"name": "device-plugin", "hostPath": {"path": "/var/lib/kubelet/device-plugins"}}]
    if config_map:
        container["env"].append({"name": "CONFIG_FILE", "value": "/etc/nvidia/config.yaml"})
        container["volumeMounts"].append({"name": "config", "mountPath": "/etc/nvidia"})
        volumes.append({"name": "config", "configMap": {"name": config_map}})
    labels = {"name": "nvidia-device-plugin-ds"}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "nvidia-device-plugin-daemonset", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": labels}, "updateStrategy": {"type": "RollingUpdate"},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"tolerations": [GPU_TOLERATION],
                                           "priorityClassName": "system-node-critical",
                                           "containers": [container], "volumes": volumes}}}}


def time_slicing_config(replicas: int, name: str = "time-slicing-config") -> dict[str, Any]:
    """The device plugin's sharing config: each physical GPU is advertised as ``replicas`` schedulable GPUs.
    Replicas share the GPU in time with no memory or fault isolation (chapter 05)."""
    if not 2 <= replicas <= 64:
        raise ValueError(f"replicas={replicas}: time-slicing needs 2..64 replicas per GPU")
    import yaml

    body = {"version": "v1", "flags": {"migStrategy": "none"},
            "sharing": {"timeSlicing": {"renameByDefault": False, "failRequestsGreaterThanOne": True,
                                        "resources": [{"name": "nvidia.com/gpu", "replicas": replicas}]}}}
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "kube-system"},
            "data": {"config.yaml": yaml.safe_dump(body, sort_keys=False)}}


def exclusive_mode_daemonset() -> dict[str, Any]:
    """A privileged DaemonSet that sets every GPU of a node to EXCLUSIVE_PROCESS compute mode (one CUDA context per
    GPU): the container that gets the GPU owns it end to end, a second process fails instead of sharing."""
    labels = {"name": "gpu-exclusive-mode"}
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {"name": "gpu-exclusive-mode", "namespace": "kube-system"},
            "spec": {"selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"tolerations": [GPU_TOLERATION],
                                           "nodeSelector": {"nvidia.com/gpu.present": "true"},
                                           "initContainers": [{"name": "set-mode", "image": CUDA_IMAGE,
                                                               "command": ["nvidia-smi", "-c", "EXCLUSIVE_PROCESS"],
                                                               "securityContext": {"privileged": True}}],
                                           "containers": [{"name": "pause", "image": "registry.k8s.io/pause:3.10"}]}}}}


def gpu_operator_cluster_policy(mig_strategy: str = "mixed", time_slicing_map: str | None = None) -> dict[str, Any]:
    """The GPU Operator's ClusterPolicy (a custom resource): driver, toolkit, device plugin, DCGM exporter, MIG manager."""
    if mig_strategy not in ("none", "single", "mixed"):
        raise ValueError(f"mig_strategy={mig_strategy!r}: give none, single or mixed")
    dp: dict[str, Any] = {"enabled": True}
    if time_slicing_map:
        dp["config"] = {"name": time_slicing_map, "default": "any"}
    return {"apiVersion": "nvidia.com/v1", "kind": "ClusterPolicy", "metadata": {"name": "cluster-policy"},
            "spec": {"operator": {"defaultRuntime": "containerd"}, "driver": {"enabled": True},
                     "toolkit": {"enabled": True}, "devicePlugin": dp, "dcgmExporter": {"enabled": True},
                     "mig": {"strategy": mig_strategy}, "migManager": {"enabled": mig_strategy != "none"},
                     "gfd": {"enabled": True}}}


def batch_job(name: str, gpus_per_pod: int, pods: int, command: list[str], queue: str | None = None) -> dict[str, Any]:
    """An Indexed Job of ``pods`` pods (``parallelism = completions``); with ``queue`` it is submitted suspended to a
    Kueue LocalQueue, which admits it only when the whole quota is free (all pods at once)."""
    meta: dict[str, Any] = {"name": name}
    if queue:
        meta["labels"] = {"kueue.x-k8s.io/queue-name": queue}
    pod = gpu_pod(name, gpus_per_pod, command=tuple(command))["spec"]
    pod["restartPolicy"] = "Never"
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta,
            "spec": {"completionMode": "Indexed", "completions": pods, "parallelism": pods, "backoffLimit": 0,
                     "suspend": bool(queue), "template": {"spec": pod}}}


def kueue_queues(gpus: int, name: str = "gpu-cluster-queue") -> list[dict[str, Any]]:
    """Kueue's ResourceFlavor, ClusterQueue (a quota of ``gpus``) and a LocalQueue pointing at it (custom resources)."""
    return [
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor", "metadata": {"name": "h200"},
         "spec": {"nodeLabels": {"nvidia.com/gpu.product": "NVIDIA-H200"}}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue", "metadata": {"name": name},
         "spec": {"namespaceSelector": {}, "queueingStrategy": "BestEffortFIFO",
                  "resourceGroups": [{"coveredResources": ["nvidia.com/gpu"],
                                      "flavors": [{"name": "h200", "resources": [
                                          {"name": "nvidia.com/gpu", "nominalQuota": gpus}]}]}]}},
        {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
         "metadata": {"name": "team-a", "namespace": "default"}, "spec": {"clusterQueue": name}},
    ]


def volcano_gang_job(name: str, pods: int, gpus_per_pod: int, command: list[str]) -> dict[str, Any]:
    """A Volcano Job with ``minAvailable = pods``: gang scheduling, none of the pods starts until all can."""
    pod = gpu_pod(name, gpus_per_pod, command=tuple(command))["spec"]
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": name},
            "spec": {"schedulerName": "volcano", "minAvailable": pods, "queue": "default",
                     "tasks": [{"name": "worker", "replicas": pods, "template": {"spec": pod}}]}}


_CUSTOM = {("nvidia.com/v1", "ClusterPolicy"): ("spec",), ("batch.volcano.sh/v1alpha1", "Job"): ("spec", "minAvailable"),
           ("kueue.x-k8s.io/v1beta1", "ClusterQueue"): ("spec", "resourceGroups"),
           ("kueue.x-k8s.io/v1beta1", "LocalQueue"): ("spec", "clusterQueue"),
           ("kueue.x-k8s.io/v1beta1", "ResourceFlavor"): ("spec",)}


def validate(manifest: dict[str, Any], version: str = K8S_VERSION, strict: bool = True) -> Validation:
    """Validate one manifest: core kinds against the Kubernetes ``version`` schema, custom kinds structurally."""
    import kubernetes_validate as kv

    kind, name = manifest.get("kind", "?"), manifest.get("metadata", {}).get("name", "?")
    key = (manifest.get("apiVersion"), kind)
    if key in _CUSTOM:
        node: Any = manifest
        for field in _CUSTOM[key]:
            if not isinstance(node, dict) or field not in node:
                return Validation(kind, name, False, "custom resource: required fields", f"missing {field!r}")
            node = node[field]
        return Validation(kind, name, True, "custom resource: required fields only (no schema offline)", "")
    try:
        kv.validate(manifest, version, strict=strict)
    except kv.ValidationError as e:
        path = "/".join(str(p) for p in e.path)
        return Validation(kind, name, False, f"schema {version}{' (strict)' if strict else ''}", f"{path}: {e.message}")
    return Validation(kind, name, True, f"schema {version}{' (strict)' if strict else ''}", "")
