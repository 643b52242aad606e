"""A model pipeline data -> train -> evaluate -> register with content-addressed versions (chapter 22).

Every artefact is named by the SHA-256 of its bytes: the dataset, the trained weights, and the model version, whose
id hashes the weights *and* the dataset hash and hyper-parameters that produced them. Re-running with the same inputs
gives the same id (nothing new is registered); changing one byte gives a new one. The registry is a folder; a version
moves through stages None -> Staging -> Production (-> Archived), and is registered only if it passes the evaluation
gate. ``with_mlflow=True`` also logs params, metrics and the model version to MLflow's local file store (tracking,
model registry, stage transitions) when ``mlflow-skinny`` is installed.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

STAGES = ("None", "Staging", "Production", "Archived")


def sha256(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def data_step(n: int = 2000, seed: int = 0, shift: float = 0.0):
    """A binary task: label = 1 if x0 + x1 > 0 (with 10% label noise); ``shift`` moves the features (drift)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)) + shift
    y = ((x[:, 0] + x[:, 1] > 0) ^ (rng.random(n) < 0.1)).astype(np.int64)
    blob = x.astype("<f8").tobytes() + y.astype("<i8").tobytes()
    return x, y, sha256(blob)


def train_step(x, y, lr: float = 0.5, steps: int = 200) -> np.ndarray:
    a = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(3)
    for _ in range(steps):
        w -= lr * a.T @ (1 / (1 + np.exp(-a @ w)) - y) / len(y)
    return w


def evaluate_step(w, x, y) -> float:
    return float((((np.hstack([x, np.ones((len(x), 1))]) @ w) > 0) == y).mean())


@dataclass(frozen=True)
class Version:
    version_id: str          # sha256 of (weights hash, data hash, params)
    weights_sha256: str
    data_sha256: str
    accuracy: float
    stage: str


class Registry:
    """A model registry in a folder: objects/<sha> (weights) and versions.json (metadata and stages)."""

    def __init__(self, root: str | os.PathLike):
        self.root = Path(root)
        (self.root / "objects").mkdir(parents=True, exist_ok=True)
        self.index = self.root / "versions.json"

    def versions(self) -> dict[str, dict]:
        return json.loads(self.index.read_text()) if self.index.exists() else {}

    def _save(self, v: dict) -> None:
        tmp = self.index.with_suffix(".tmp")
        tmp.write_text(json.dumps(v, indent=1, sort_keys=True))
        os.replace(tmp, self.index)

    def register(self, w: np.ndarray, data_sha: str, params: dict, accuracy: float) -> tuple[Version, bool]:
        """Store the weights by content; returns (version, created). Same inputs -> same id, created False."""
        wb = np.asarray(w, dtype="<f8").tobytes()
        wsha = sha256(wb)
        vid = sha256(json.dumps({"w": wsha, "data": data_sha, "params": params}, sort_keys=True).encode())[:16]
        vs = self.versions()
        created = vid not in vs
        if created:
            (self.root / "objects" / wsha).write_bytes(wb)
            vs[vid] = {"weights_sha256": wsha, "data_sha256": data_sha, "params": params, "accuracy": accuracy,
                       "stage": "None", "order": len(vs)}
            self._save(vs)
        return self.get(vid), created

    def get(self, vid: str) -> Version:
        v = self.versions()[vid]
        return Version(vid, v["weights_sha256"], v["data_sha256"], v["accuracy"], v["stage"])

    def transition(self, vid: str, stage: str) -> None:
        """Move a version to ``stage``; promoting one to Production archives the previous Production version."""
        if stage not in STAGES:
            raise ValueError(f"stage {stage!r}: use one of {STAGES}")
        vs = self.versions()
        if vid not in vs:
            raise ValueError(f"version {vid}: not in the registry ({len(vs)} versions)")
        if stage == "Production":
            for k, v in vs.items():
                if v["stage"] == "Production" and k != vid:
                    v["stage"] = "Archived"
        vs[vid]["stage"] = stage
        self._save(vs)

    def production(self) -> str | None:
        return next((k for k, v in self.versions().items() if v["stage"] == "Production"), None)

    def rollback(self) -> str:
        """Production goes back to the most recent Archived version; the current one is archived."""
        vs = self.versions()
        archived = sorted((v["order"], k) for k, v in vs.items() if v["stage"] == "Archived")
        if not archived:
            raise ValueError("rollback: no archived version to return to")
        prev = archived[-1][1]
        self.transition(prev, "Production")
        return prev

    def load(self, vid: str) -> np.ndarray:
        v = self.get(vid)
        b = (self.root / "objects" / v.weights_sha256).read_bytes()
        if sha256(b) != v.weights_sha256:
            raise ValueError(f"version {vid}: weights object corrupt (hash mismatch)")
        return np.frombuffer(b, dtype="<f8").copy()


def run(registry: Registry, seed: int = 0, lr: float = 0.5, gate: float = 0.8, shift: float = 0.0,
        with_mlflow: bool = False) -> dict:
    """One pipeline run; registers and stages the model only if test accuracy >= gate."""
    x, y, dsha = data_step(2000, seed, shift)
    xt, yt, _ = data_step(1000, seed + 100, shift)
    params = {"lr": lr, "steps": 200, "seed": seed}
    w = train_step(x, y, lr)
    acc = evaluate_step(w, xt, yt)
    out = {"data_sha256": dsha[:12], "accuracy": acc, "passed_gate": acc >= gate, "version": None, "created": False}
    if acc >= gate:
        v, created = registry.register(w, dsha, params, acc)
        if created:
            registry.transition(v.version_id, "Staging")
        out.update(version=v.version_id, created=created)
        if with_mlflow:
            out["mlflow_version"] = _mlflow_log(registry.root / "mlruns", params, acc, v.version_id)
    return out


def _mlflow_log(store: Path, params: dict, acc: float, vid: str) -> str:
    """Track the run and register the version in MLflow's local file store (no server)."""
    os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
    import logging
    import warnings

    import mlflow
    from mlflow import MlflowClient

    logging.getLogger("mlflow").setLevel(logging.ERROR)
    mlflow.set_tracking_uri(store.resolve().as_uri())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with mlflow.start_run() as r:
            mlflow.log_params(params)
            mlflow.log_metric("accuracy", acc)
            mlflow.set_tag("content_version", vid)
        c = MlflowClient()
        if not c.search_registered_models(f"name='book-model'"):
            c.create_registered_model("book-model")
        mv = c.create_model_version("book-model", source=r.info.artifact_uri, run_id=r.info.run_id)
        c.transition_model_version_stage("book-model", mv.version, "Staging")
        return f"book-model v{mv.version} ({c.get_model_version('book-model', mv.version).current_stage})"


def deployment_manifests(version: str, canary_version: str | None = None, replicas: int = 4,
                         canary_replicas: int = 1, image: str = "registry.example.com/book-model-server") -> list[dict]:
    """GitOps: the Deployment(s) a repository would hold for the model server — the stable version and, during a
    canary, a second Deployment with the same ``app`` label (the Service splits traffic by replica count)."""
    def dep(name, ver, n, track):
        labels = {"app": "book-model", "track": track}
        return {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "namespace": "serving", "labels": labels},
                "spec": {"replicas": n, "selector": {"matchLabels": labels},
                         "template": {"metadata": {"labels": labels},
                                      "spec": {"containers": [{
                                          "name": "server", "image": f"{image}:{ver}",
                                          "env": [{"name": "MODEL_VERSION", "value": ver}],
                                          "ports": [{"containerPort": 8080}],
                                          "readinessProbe": {"httpGet": {"path": "/healthz", "port": 8080}},
                                          "resources": {"limits": {"nvidia.com/gpu": 1}}}]}}}}
    out = [dep("book-model", version, replicas, "stable")]
    if canary_version:
        out.append(dep("book-model-canary", canary_version, canary_replicas, "canary"))
    out.append({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "book-model", "namespace": "serving"},
                "spec": {"selector": {"app": "book-model"}, "ports": [{"port": 80, "targetPort": 8080}]}})
    return out
