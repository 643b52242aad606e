"""nvmetcli JSON: the book's loop target and real nvmetcli examples validate; broken ones fail with the fix."""
import copy
import json
from pathlib import Path

import pytest

from helpers.storage import nvmeof

REAL = Path(__file__).parents[1] / "data" / "real" / "nvmetcli-json"


def test_real_examples_validate_as_the_source_says():
    loop = nvmeof.validate(json.loads((REAL / "loop.json").read_text()))
    assert loop == {"hosts": ["hostnqn"], "subsystems": {"testnqn": [1]},
                    "ports": [{"portid": 1, "trtype": "loop", "subsystems": ["testnqn"]}]}
    rdma = json.loads((REAL / "rdma.json").read_text())
    s = nvmeof.validate(rdma)
    assert s["ports"][0]["trtype"] == "rdma" and rdma["ports"][0]["addr"]["trsvcid"] == "4420"


def test_generated_loop_target_has_nvmetcli_shape():
    real = json.loads((REAL / "loop.json").read_text())
    cfg = nvmeof.loop_target("testnqn", "/dev/nvme0n1", host_nqn="hostnqn")
    assert set(cfg) == set(real)
    assert set(cfg["ports"][0]) == set(real["ports"][0]) and cfg["ports"][0]["addr"] == real["ports"][0]["addr"]
    sub, rsub = cfg["subsystems"][0], real["subsystems"][0]
    assert set(sub) == set(rsub) and sub["attr"] == rsub["attr"] and sub["allowed_hosts"] == rsub["allowed_hosts"]
    assert set(sub["namespaces"][0]) == set(rsub["namespaces"][0])
    assert cfg == nvmeof.loop_target("testnqn", "/dev/nvme0n1", host_nqn="hostnqn")     # reproducible
    open_cfg = nvmeof.loop_target("nqn.2026-12.io.example:x", "/srv/img.raw")
    assert open_cfg["subsystems"][0]["attr"]["allow_any_host"] == "1" and open_cfg["hosts"] == []


@pytest.mark.parametrize("breakit, msg", [
    (lambda c: c["ports"][0].update(subsystems=["nope"]), "not defined"),
    (lambda c: c["ports"][0]["addr"].update(trtype="carrier-pigeon"), "trtype"),
    (lambda c: c["subsystems"][0]["namespaces"][0].update(nsid=0), "nsid"),
    (lambda c: c["subsystems"][0]["namespaces"][0]["device"].update(path="nvme0n1"), "absolute"),
    (lambda c: c["subsystems"][0].update(allowed_hosts=["stranger"]), "not in hosts"),
    (lambda c: c["subsystems"].append(copy.deepcopy(c["subsystems"][0])), "twice"),
    (lambda c: c.pop("ports"), "lacks"),
    (lambda c: c["ports"][0]["addr"].update(trtype="tcp", adrfam="ipv4"), "traddr"),
])
def test_broken_configs_are_rejected(breakit, msg):
    cfg = json.loads((REAL / "loop.json").read_text())
    breakit(cfg)
    with pytest.raises(ValueError, match=msg):
        nvmeof.validate(cfg)


def test_configfs_status_on_missing_path(tmp_path):
    st = nvmeof.configfs_status(str(tmp_path / "nvmet"))
    assert not st.present and "not loaded" in st.note
    (tmp_path / "nvmet").mkdir()
    assert nvmeof.configfs_status(str(tmp_path / "nvmet")).present
    assert any("nvmetcli restore" in c for c in nvmeof.apply_commands("/tmp/x.json"))
