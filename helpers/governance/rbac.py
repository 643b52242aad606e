"""Kubernetes RBAC: manifests validated offline, and a policy engine that answers "who can do what" (chapter 20).

The engine follows the rules of https://kubernetes.io/docs/reference/access-authn-authz/rbac/: permissions are purely
additive (no deny rules); a Role grants within its namespace; a ClusterRole grants cluster-wide only through a
ClusterRoleBinding, and inside one namespace when a RoleBinding references it; a rule matches when apiGroups,
resources (optionally ``resourceNames``) and verbs all match, ``*`` matching anything. Subjects are User, Group or
ServiceAccount (``system:serviceaccount:NS:NAME``). ``kubectl auth can-i`` asks the API server the same question.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

KINDS = ("Role", "ClusterRole", "RoleBinding", "ClusterRoleBinding")


def load(paths_or_text) -> list[dict]:
    """Every document in the given YAML files (or one YAML string) whose kind is an RBAC kind."""
    docs = []
    items = [paths_or_text] if isinstance(paths_or_text, str) and "\n" in paths_or_text else paths_or_text
    for item in items:
        text = item if isinstance(item, str) and "\n" in item else Path(item).read_text()
        docs += [d for d in yaml.safe_load_all(text) if d]
    bad = [d.get("kind") for d in docs if d.get("kind") not in KINDS]
    if bad:
        raise ValueError(f"not RBAC objects: kinds {bad}; expected {KINDS}")
    return docs


def validate(docs: list[dict], k8s_version: str = "1.30") -> list[str]:
    """Offline schema validation with kubernetes-validate (strict: unknown fields are errors). [] when all valid."""
    import kubernetes_validate

    errors = []
    for d in docs:
        try:
            kubernetes_validate.validate(d, k8s_version, strict=True)
        except kubernetes_validate.ValidationError as e:
            errors.append(f"{d.get('kind')}/{d.get('metadata', {}).get('name')}: {e.message}")
    return errors


def _match(allowed, value) -> bool:
    return "*" in allowed or value in allowed


@dataclass(frozen=True)
class Decision:
    allowed: bool
    via: str            # the binding and role that granted it, or "no rule matches"


def can(docs: list[dict], subject: str, verb: str, resource: str, namespace: str | None = None,
        group: str = "", name: str | None = None, subject_groups: tuple[str, ...] = ()) -> Decision:
    """May ``subject`` (a user name, or ``system:serviceaccount:ns:name``) ``verb`` the ``resource``?

    ``namespace=None`` asks about cluster-scope (all namespaces); ``subject_groups`` are the groups the user is in."""
    roles = {(d["kind"], d["metadata"].get("namespace"), d["metadata"]["name"]): d for d in docs
             if d["kind"] in ("Role", "ClusterRole")}
    for b in docs:
        if b["kind"] not in ("RoleBinding", "ClusterRoleBinding"):
            continue
        if not any(_is(s, subject, subject_groups, b["metadata"].get("namespace")) for s in b.get("subjects", [])):
            continue
        bns = b["metadata"].get("namespace")
        if b["kind"] == "RoleBinding" and namespace != bns:
            continue                                  # a RoleBinding grants only inside its own namespace
        ref = b["roleRef"]
        role = roles.get((ref["kind"], bns if ref["kind"] == "Role" else None, ref["name"]))
        for rule in (role or {}).get("rules", []):
            if (_match(rule.get("apiGroups", []), group) and _match(rule.get("resources", []), resource)
                    and _match(rule.get("verbs", []), verb)
                    and (not rule.get("resourceNames") or name in rule["resourceNames"])):
                return Decision(True, f"{b['kind']}/{b['metadata']['name']} -> {ref['kind']}/{ref['name']}")
    return Decision(False, "no rule matches")


def _is(s: dict, subject: str, groups: tuple[str, ...], binding_ns: str | None) -> bool:
    if s["kind"] == "User":
        return s["name"] == subject
    if s["kind"] == "Group":
        return s["name"] in groups
    if s["kind"] == "ServiceAccount":
        return subject == f"system:serviceaccount:{s.get('namespace', binding_ns)}:{s['name']}"
    return False


def matrix(docs, subjects: dict[str, tuple[str, ...]], questions: list[tuple[str, str, str | None]]):
    """A who-can-do-what table: rows subjects, columns "verb resource @ns"; cells True/False."""
    import pandas as pd

    rows = {}
    for subj, groups in subjects.items():
        rows[subj] = {f"{v} {r} @{ns or 'cluster'}": can(docs, subj, v, r, ns, subject_groups=groups).allowed
                      for v, r, ns in questions}
    return pd.DataFrame(rows).T


def gpu_cluster_policy() -> str:
    """The chapter's policy for a shared GPU cluster: researchers run jobs in their team namespace, read-only on
    logs elsewhere; the training operator's service account manages pods cluster-wide; nobody but admins reads secrets."""
    rb = "rbac.authorization.k8s.io"
    docs = [
        {"apiVersion": f"{rb}/v1", "kind": "Role", "metadata": {"name": "job-runner", "namespace": "team-a"},
         "rules": [{"apiGroups": ["", "batch"], "resources": ["pods", "jobs"],
                    "verbs": ["get", "list", "watch", "create", "delete"]},
                   {"apiGroups": [""], "resources": ["pods/log"], "verbs": ["get"]}]},
        {"apiVersion": f"{rb}/v1", "kind": "RoleBinding", "metadata": {"name": "team-a-runners", "namespace": "team-a"},
         "subjects": [{"kind": "Group", "name": "team-a", "apiGroup": rb}],
         "roleRef": {"kind": "Role", "name": "job-runner", "apiGroup": rb}},
        {"apiVersion": f"{rb}/v1", "kind": "ClusterRole", "metadata": {"name": "pod-manager"},
         "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch", "create", "delete"]}]},
        {"apiVersion": f"{rb}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "operator-pods"},
         "subjects": [{"kind": "ServiceAccount", "name": "training-operator", "namespace": "kubeflow"}],
         "roleRef": {"kind": "ClusterRole", "name": "pod-manager", "apiGroup": rb}},
        {"apiVersion": f"{rb}/v1", "kind": "ClusterRole", "metadata": {"name": "secret-admin"},
         "rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["*"]}]},
        {"apiVersion": f"{rb}/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "admins-secrets"},
         "subjects": [{"kind": "Group", "name": "cluster-admins", "apiGroup": rb}],
         "roleRef": {"kind": "ClusterRole", "name": "secret-admin", "apiGroup": rb}},
    ]
    return yaml.safe_dump_all(docs, sort_keys=False)
