"""Governance wing (chapters 17, 20, 22): federated averaging, secure aggregation, DP, sync, RBAC on the
Kubernetes documentation's own examples, AES-GCM, TLS/mTLS, audit chain, segmentation, MLOps, DVC layout."""
import json
import shutil
import tempfile
from pathlib import Path

import numpy as np
import pytest

from helpers.governance import (abtest, atrest, auditlog, compliance, dataver, drift, fedlearn, mlpipeline,
                                netseg, privacy, rbac, sync, tlslab)

REAL = Path(__file__).parents[1] / "data" / "real"


def test_dirichlet_split_partitions_all_indices():
    _, y = fedlearn.make_data(500)
    parts = fedlearn.split_dirichlet(y, 4, 0.1)
    assert sorted(np.concatenate(parts).tolist()) == list(range(500))


def test_fedavg_is_weighted_mean():
    x, y = fedlearn.make_data(300)
    shards = [(x[:100], y[:100]), (x[100:], y[100:])]
    w0 = fedlearn.init_weights()
    ws = [fedlearn.local_train(w0, *s) for s in shards]
    assert np.allclose(fedlearn.fedavg_round(w0, shards), (100 * ws[0] + 200 * ws[1]) / 300)


def test_secure_sum_exact_and_masked():
    rng = np.random.default_rng(1)
    ups = [rng.normal(size=(4, 3)) for _ in range(5)]
    total, seen = privacy.secure_sum(ups)
    assert np.array_equal(total, privacy.plain_fixed_point_sum(ups))
    assert np.abs(total - sum(ups)).max() < 5 * 2 ** -16
    assert not np.array_equal(seen[0], privacy.encode(ups[0]))


def test_dp_noise_and_sigma():
    assert np.linalg.norm(privacy.clip(np.ones(4) * 10, 1.0)) == pytest.approx(1.0)
    assert privacy.gaussian_sigma(0.5, 1e-5, 1.0) == pytest.approx(2 * np.sqrt(2 * np.log(1.25e5)))
    with pytest.raises(ValueError):
        privacy.gaussian_sigma(2, 1e-5, 1)


def test_sync_detects_corruption_and_keeps_good_file(tmp_path):
    src, dst = tmp_path / "a", tmp_path / "b"
    (src / "d").mkdir(parents=True)
    dst.mkdir()
    (src / "d" / "x.bin").write_bytes(b"new data")
    (dst / "d").mkdir()
    (dst / "d" / "x.bin").write_bytes(b"old data")
    (dst / "gone.bin").write_bytes(b"stale")
    m = sync.manifest(src)
    plan = sync.diff(m, sync.manifest(dst))
    assert plan.send == ("d/x.bin",) and plan.delete == ("gone.bin",)
    bad = sync.apply(plan, src, dst, m, corrupt=lambda rel, tmp: Path(tmp).write_bytes(b"flipped!"))
    assert bad == {"d/x.bin": "checksum mismatch"} and (dst / "d" / "x.bin").read_bytes() == b"old data"
    assert sync.apply(plan, src, dst, m) == {"d/x.bin": "ok"} and sync.manifest(dst) == m


def test_transfer_model_limits():
    t = sync.transfer_time(1e12, 100, 50, streams=1)
    assert t.limited_by == "TCP window" and t.throughput_GBps == pytest.approx(16 * 2**20 / 0.05 / 1e9)
    assert sync.transfer_time(1e12, 10, 0.1, streams=8).limited_by == "link"


def test_rbac_kubernetes_docs_examples():
    docs = rbac.load(sorted((REAL / "k8s-rbac").glob("*.yaml")))
    assert rbac.validate(docs) == []
    # "allows jane to read pods in the default namespace"
    assert all(rbac.can(docs, "jane", v, "pods", "default").allowed for v in ("get", "watch", "list"))
    assert not rbac.can(docs, "jane", "delete", "pods", "default").allowed
    assert not rbac.can(docs, "jane", "get", "pods", "kube-system").allowed
    # "allows dave to read secrets in the development namespace ... only"
    assert rbac.can(docs, "dave", "get", "secrets", "development").allowed
    assert not rbac.can(docs, "dave", "get", "secrets", "default").allowed
    # "anyone in the manager group to read secrets in any namespace"
    for ns in ("default", "development", None):
        assert rbac.can(docs, "erin", "list", "secrets", ns, subject_groups=("manager",)).allowed
    assert not rbac.can(docs, "erin", "list", "secrets", None).allowed


def test_rbac_policy_and_schema_errors():
    docs = rbac.load(rbac.gpu_cluster_policy())
    assert rbac.validate(docs) == []
    sa = "system:serviceaccount:kubeflow:training-operator"
    assert rbac.can(docs, sa, "create", "pods", "team-b").allowed
    assert not rbac.can(docs, sa, "get", "secrets", "team-b").allowed
    assert rbac.can(docs, "ann", "create", "jobs", "team-a", group="batch", subject_groups=("team-a",)).allowed
    assert not rbac.can(docs, "ann", "create", "jobs", "team-b", group="batch", subject_groups=("team-a",)).allowed
    broken = [dict(docs[0], rules=[{"apiGroups": [""], "resources": ["pods"], "verb": ["get"]}])]
    assert rbac.validate(broken) and "verbs" in rbac.validate(broken)[0]


def test_aes_gcm_roundtrip_and_tamper():
    key, data = atrest.new_key(), bytes(range(256)) * 1000
    assert atrest.open_naive(key, atrest.seal_naive(key, data)) == data
    chunks = atrest.seal(key, data, chunk=10_000)
    assert atrest.open_sealed(key, chunks) == data
    ad, blob = chunks[3]
    flipped = chunks[:3] + [(ad, blob[:-1] + bytes([blob[-1] ^ 1]))] + chunks[4:]
    with pytest.raises(ValueError, match="chunk 3: authentication failed"):
        atrest.open_sealed(key, flipped)
    with pytest.raises(ValueError, match="reordered"):
        atrest.open_sealed(key, [chunks[1], chunks[0]] + chunks[2:])
    with pytest.raises(ValueError, match="dropped or added"):
        atrest.open_sealed(key, chunks[:-1])


def test_tls_and_mutual_tls(tmp_path):
    pki = tlslab.make_pki(tmp_path)
    with tlslab.serve(pki) as port:
        assert tlslab.probe("tls", port, pki["ca_cert"]).reply_or_error.startswith("hello anonymous")
        assert not tlslab.probe("no CA", port, None).connected
    with tlslab.serve(pki, mutual=True) as port:
        assert not tlslab.probe("no client cert", port, pki["ca_cert"]).connected
        ok = tlslab.probe("mtls", port, pki["ca_cert"], (pki["client_cert"], pki["client_key"]))
        assert ok.connected and "trainer-17" in ok.reply_or_error


def test_audit_chain_detects_edit_delete_truncate():
    key = b"k" * 32
    lines = auditlog.demo_log(key)
    assert auditlog.verify(lines, key).ok
    rec = json.loads(lines[2])
    rec["entry"]["detail"] = "allowed"
    assert auditlog.verify(lines[:2] + [json.dumps(rec)] + lines[3:], key).first_bad_line == 3
    assert auditlog.verify(lines[:1] + lines[2:], key).first_bad_line == 2
    anchor = json.loads(lines[-1])["hash"]
    assert not auditlog.verify(lines[:-1], key, anchor).ok
    assert not auditlog.verify(lines, b"wrong key" * 4).ok


def test_segmentation_policies_hold():
    assert all(r["ok"] for r in netseg.audit(netseg.graph()))
    assert netseg.reachable(netseg.graph(), "internet", "bmc") is None
    assert netseg.reachable(netseg.graph(), "internet", "bmc", with_logins=True)[-2:] == ["mgmt", "bmc"]
    leaky = netseg.graph(netseg.RULES + [("vpn-gw", "bmc", "udp/623")])       # a VPN route straight to the BMCs
    assert netseg.reachable(leaky, "internet", "bmc") == ["internet", "vpn-gw", "bmc"]
    assert not all(r["ok"] for r in netseg.audit(leaky))


def test_compliance_map_points_at_real_labs():
    t = compliance.table()
    assert {"GDPR", "MLPS 2.0 (GB/T 22239-2019)"} == set(t.framework)


def test_pipeline_content_addressed_and_rollback(tmp_path):
    reg = mlpipeline.Registry(tmp_path)
    a = mlpipeline.run(reg)
    assert a["created"] and mlpipeline.run(reg)["version"] == a["version"] and not mlpipeline.run(reg)["created"]
    b = mlpipeline.run(reg, seed=1)
    assert b["version"] != a["version"]
    reg.transition(a["version"], "Production")
    reg.transition(b["version"], "Production")
    assert reg.get(a["version"]).stage == "Archived"
    assert reg.rollback() == a["version"] and reg.production() == a["version"]
    assert np.allclose(reg.load(a["version"]), mlpipeline.train_step(*mlpipeline.data_step()[:2]))
    assert not mlpipeline.run(reg, gate=0.99)["passed_gate"]


def test_ab_sample_size_and_z_test():
    n = abtest.sample_size(0.10, 0.12)
    assert 3000 < n < 5000
    assert 0.7 < abtest.power_by_simulation(0.10, 0.12, n, trials=300) < 0.9
    t = abtest.z_test(100, 1000, 130, 1000)
    assert t.significant and t.p_value == pytest.approx(0.0359, abs=2e-3)


def test_drift_psi_ks_and_canary():
    rng = np.random.default_rng(0)
    ref = rng.normal(size=4000)
    assert drift.psi(ref, rng.normal(size=4000)) < 0.1 and drift.psi(ref, rng.normal(1, 1, 4000)) > 0.25
    d, p = drift.ks(ref, rng.normal(size=4000))
    assert p > 0.01 and drift.ks(ref, rng.normal(0.3, 1, 4000))[1] < 1e-6
    steps = drift.canary(ref, [rng.normal(size=2000), rng.normal(0.8, 1, 2000), ref], [0.01, 0.01, 0.01])
    assert [s.action for s in steps] == ["promote", "rollback"]


def test_dvc_layout_matches_real_dvc(tmp_path):
    shutil.copy(REAL / "dvc" / "data.csv", tmp_path)
    ptr = dataver.add(tmp_path, "data.csv")
    real = __import__("yaml").safe_load((REAL / "dvc" / "data.csv.dvc").read_text())
    assert ptr == real
    listed = (REAL / "dvc" / "cache_listing.txt").read_text().split()[0]
    assert dataver.cache_path(tmp_path, ptr["outs"][0]["md5"]).relative_to(tmp_path).as_posix() == listed
    (tmp_path / "data.csv").write_text("changed")
    assert dataver.checkout(tmp_path, "data.csv.dvc") == real["outs"][0]["md5"]
    assert (tmp_path / "data.csv").read_bytes() == (REAL / "dvc" / "data.csv").read_bytes()


def test_gitops_manifests_validate_and_errors_are_named():
    ms = mlpipeline.deployment_manifests("v1", canary_version="v2")
    assert rbac.validate(ms) == [] and [m["kind"] for m in ms] == ["Deployment", "Deployment", "Service"]
    ms[0]["spec"]["replicas"] = "four"
    (err,) = rbac.validate(ms)
    assert err.startswith("Deployment/book-model") and "four" in err


def test_nvflare_tool_refuses_bad_input(capsys):
    from helpers.__main__ import main

    assert main(["nvflare", "--clients", "0"]) == 2
    assert main(["nvflare", "--alpha", "0"]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 2


def test_registry_refuses_unknown_stage_and_version(tmp_path):
    reg = mlpipeline.Registry(tmp_path)
    v = mlpipeline.run(reg)["version"]
    with pytest.raises(ValueError, match="stage"):
        reg.transition(v, "Live")
    with pytest.raises(ValueError, match="not in the registry"):
        reg.transition("deadbeef", "Production")
    with pytest.raises(ValueError, match="no archived version"):
        reg.rollback()
