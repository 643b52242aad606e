"""MIG profiles and planner (helpers.ops.mig), checked against NVIDIA's documented data and real nvidia-smi output."""
from pathlib import Path

import pytest
import yaml

from helpers.ops import mig

REAL = Path(__file__).parents[1] / "data" / "real" / "nvidia-smi-mig"
GPU_OF = {"a100-40gb": "A100-SXM4-40GB", "h100-80gb": "H100-80GB", "h200-141gb": "H200-141GB"}


@pytest.mark.parametrize("group", sorted(GPU_OF))
def test_every_config_nvidia_ships_in_mig_parted_is_valid(group):
    configs = yaml.safe_load((REAL / "mig-parted-config-default-excerpt.yaml").read_text())[group]
    for name, counts in configs.items():
        assert mig.fits(GPU_OF[group], counts), (group, name, counts)


@pytest.mark.parametrize("gpu", mig.gpu_types())
def test_max_instances_match_the_user_guide_table(gpu):
    # "Number of Instances Available" of NVIDIA's table = the most instances of one profile the planner places
    for name, p in mig.profiles(gpu).items():
        assert mig.fits(gpu, {name: p.max})
        assert not mig.fits(gpu, {name: p.max + 1})


def test_placements_equal_nvidia_smi_lgipp():
    real = mig.parse_lgipp((REAL / "a100-lgipp-mig-user-guide.txt").read_text())
    ours = {p.id: (p.starts, p.memory) for p in mig.profiles("A100-SXM4-40GB").values()}
    assert real == ours


def test_lgip_h200_matches_the_profile_table():
    rows = mig.parse_lgip((REAL / "h200-141gb-lgip-mig-parted-120.txt").read_text())
    assert [r["name"] for r in rows] == ["1g.18gb", "1g.18gb+me", "1g.35gb", "2g.35gb", "3g.71gb", "4g.71gb"]
    table = mig.profiles("H200-141GB")
    for r in rows:
        assert r["total"] == table[r["name"]].max and r["id"] == table[r["name"]].id
        assert r["sms"] == table[r["name"]].sms
    assert [r["sms"] for r in rows] == [16, 16, 26, 32, 60, 64]


@pytest.mark.parametrize("fname,first,n", [("gh200-144g-lgip-mig-parted-139.txt", ("1g.18gb", 17.5, 7), 4),
                                           ("h100-nvl-lgip-gpu-operator-900.txt", ("1g.12gb", 10.75, 7), 3)])
def test_lgip_other_gpus(fname, first, n):
    rows = mig.parse_lgip((REAL / fname).read_text())
    assert len(rows) == n and (rows[0]["name"], rows[0]["memory_GiB"], rows[0]["total"]) == first


def test_documented_invalid_mixes():
    assert not mig.fits("H200-141GB", {"3g.71gb": 2, "1g.18gb": 1})        # 3g+3g takes all 8 memory slices
    assert not mig.fits("H200-141GB", {"4g.71gb": 1, "3g.71gb": 1, "1g.18gb": 1})
    assert not mig.fits("H200-141GB", {"1g.18gb+me": 2})
    ok, why = mig.is_valid("H200-141GB", [mig.Instance("2g.35gb", 1, 2, 2)])
    assert not ok and "cannot start" in why


def test_pack_uses_the_fewest_gpus_and_exhaustive_place_agrees():
    plan = mig.pack("H200-141GB", ["3g.71gb"] * 3 + ["1g.35gb"] * 2)
    assert plan.gpu_count == 2 and not plan.unplaced
    for board in plan.gpus:
        assert mig.is_valid("H200-141GB", list(board))[0]


def test_maximal_configs_are_valid_and_maximal():
    cfgs = mig.maximal_configs("H200-141GB")
    assert {"3g.71gb": 1, "2g.35gb": 1, "1g.18gb": 2} in cfgs and {"7g.141gb": 1} in cfgs
    for c in cfgs:
        assert mig.fits("H200-141GB", c)


def test_bad_input_names_the_fix():
    with pytest.raises(ValueError, match="not a MIG profile"):
        mig.place("H200-141GB", ["3g.40gb"])
    with pytest.raises(ValueError, match="known"):
        mig.profiles("RTX 4090")
    assert mig.smallest_profile("H200-141GB", 30) == "1g.35gb"
