"""Health checks with planted faults, the self-healing rule on a real Slurm, and the Ansible role (idempotent)."""
from pathlib import Path

import pytest

from helpers.ops import automation, health, slurm

REAL = Path(__file__).parents[1] / "data" / "real"


def fake_ib(tmp_path: Path, states: list[str]) -> Path:
    for i, s in enumerate(states):
        d = tmp_path / "ib" / f"mlx5_{i}" / "ports" / "1"
        d.mkdir(parents=True)
        (d / "state").write_text(f"{4 if s == 'ACTIVE' else 1}: {s}\n")
    return tmp_path / "ib"


def test_planted_faults_are_found(tmp_path):
    ok = health.run_checks(health.Expect(ib_ports=2), nvml=None, sysfs=fake_ib(tmp_path / "a", ["ACTIVE"] * 2),
                           kernel_log="")
    assert health.healthy(ok)
    bad = health.run_checks(health.Expect(ib_ports=2), nvml=None, sysfs=fake_ib(tmp_path / "b", ["ACTIVE", "DOWN"]),
                            kernel_log=(REAL / "dmesg-xid" / "nvsentinel-155-fallen-off-bus.txt").read_text())
    failed = {r.name: r.value for r in bad if r.status == "fail"}
    assert set(failed) == {"ib_ports", "xid"} and "mlx5_1/1" in failed["ib_ports"]
    assert "UNHEALTHY" in health.report(bad, "n1")


def test_application_xids_do_not_fail_the_node():
    res = health.run_checks(health.Expect(), nvml=None, sysfs="/nonexistent",
                            kernel_log=(REAL / "dmesg-xid" / "tinygrad-6947-xid31.txt").read_text())
    assert health.healthy(res)


def test_expected_gpus_missing_fails():
    res = health.run_checks(health.Expect(gpus=8), nvml=None, sysfs="/nonexistent", kernel_log="")
    assert {r.name for r in res if r.status == "fail"} == {"driver", "gpu_count"}


@pytest.mark.skipif(not slurm.available()[0], reason=slurm.available()[1])
def test_self_healing_drains_and_resumes_in_real_slurm():
    bad = [health.CheckResult("xid", "fail", "Xid 79", "none", True)]
    good = [health.CheckResult("xid", "ok", "none", "none", True)]
    with slurm.cluster(cpus=2) as c:
        assert health.heal(c, bad).startswith("drained")
        assert "drain" in c.node_state()[0]
        assert health.heal(c, bad).startswith("still drained")
        assert health.heal(c, good) == "resumed (all checks pass)"
        c.drain("hardware swap (human)")
        assert health.heal(c, good).startswith("left drained by someone else")


@pytest.mark.skipif(not automation.available()[0], reason=automation.available()[1])
def test_ansible_role_is_idempotent_and_fails_a_bad_node(tmp_path):
    first = automation.run_playbook(tmp_path)
    second = automation.run_playbook(tmp_path)
    assert first.failed == 0 and first.changed >= 1 and second.changed == 0 and second.failed == 0
    assert "healthy" in (tmp_path / "localhost.md").read_text()
    bad = automation.run_playbook(tmp_path, {"kernel_log": str(REAL / "dmesg-xid" / "nvsentinel-155-fallen-off-bus.txt")})
    assert bad.failed == 1 and "xid" in bad.message and "UNHEALTHY" in (tmp_path / "localhost.md").read_text()


@pytest.mark.skipif(not (__import__("shutil").which("terraform") or __import__("shutil").which("tofu")),
                    reason="neither Terraform nor OpenTofu installed")
def test_terraform_plan_offline_and_its_validation():
    plan = automation.terraform_plan({"gpu_nodes": 3, "gpus_per_node": 8})
    assert plan["valid"] and plan["resources"] == 3 and plan["outputs"]["total_gpus"] == 24
    assert plan["outputs"]["ansible_inventory"].splitlines() == ["[gpu_nodes]"] + [
        f"gpu00{i} expect_gpus=8" for i in (1, 2, 3)]
    with pytest.raises(ValueError, match="between 1 and 1024"):
        automation.terraform_plan({"gpu_nodes": 0})


def test_kernel_log_look_alike_xid_and_sysfs_typo(tmp_path, capsys):
    """Issue 35: '٧٩' in a kernel log was read as Xid 79 (drain); a --sysfs typo read as "no IB ports here"."""
    from helpers.core import cli

    log = tmp_path / "dmesg.txt"
    log.write_text("[  1.0] NVRM: Xid (PCI:0000:01:00): \u0667\u0669, pid=1, name=x\n")
    res = health.run_checks(health.Expect(0, 0, 0), nvml=None, sysfs=tmp_path, kernel_log=log.read_text())
    assert next(r for r in res if r.name == "xid").status == "ok"
    res = health.run_checks(health.Expect(0, 0, 0), nvml=None, sysfs=tmp_path, kernel_log=log.read_text()
                            .replace("\u0667\u0669", "79"))
    assert next(r for r in res if r.name == "xid").status == "fail"
    for bad in ("--sysfs=/no/such/sysfs", "--sysfs="):
        assert cli.run(health.main, ["check", bad, "--kernel-log", str(log)]) == 2
        assert len(capsys.readouterr().err.strip().splitlines()) == 1
