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


def test_ten_thousand_requests_are_refused_before_any_search():
    """Issue 28: 10⁴ requests ran > 60 s; counts are checked against each profile's instance limit first."""
    import time

    t0 = time.monotonic()
    with pytest.raises(ValueError, match=r"need at least 1429 × H200-141GB .*7 per GPU.*--max-gpus"):
        mig.pack("H200-141GB", ["1g.18gb"] * 10_000)
    assert time.monotonic() - t0 < 1.0
    assert mig.min_gpus("H200-141GB", ["3g.71gb"] * 5) == 3 and mig.min_gpus("H200-141GB", []) == 0
    assert not mig.within_limits("H200-141GB", ["1g.18gb+me"] * 2)
    t0 = time.monotonic()
    assert mig.place("H200-141GB", ["1g.18gb"] * 8) is None and time.monotonic() - t0 < 0.1


def test_cli_refuses_too_many_requests_with_the_flag(capsys):
    from helpers.core import cli

    assert cli.run(mig.main, ["plan", "--request", ",".join(["7g.141gb"] * 65)]) == 2
    err = capsys.readouterr().err
    assert "65 × H200-141GB" in err and "--max-gpus" in err and "max_gpus is 64" in err
    assert cli.run(mig.main, ["plan", "--max-gpus", "65", "--request", ",".join(["7g.141gb"] * 65)]) == 0
    assert "65 instances on 65 × H200-141GB" in capsys.readouterr().out


def test_a100_80gb_and_h200_tables():
    """NVIDIA MIG user guide, "Supported MIG Profiles": A100-SXM4-80GB names scale with memory, counts as A100-40GB."""
    a80, a40 = mig.profiles("A100-SXM4-80GB"), mig.profiles("A100-SXM4-40GB")
    assert list(a80) == ["1g.10gb", "1g.10gb+me", "1g.20gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"]
    assert [(p.id, p.max, p.starts) for p in a80.values()] == [(p.id, p.max, p.starts) for p in a40.values()]
    assert a80["3g.40gb"].memory_GB == 40 and a80["7g.80gb"].sms == 98
    h200 = mig.profiles("H200-141GB")
    assert {n: p.max for n, p in h200.items()} == {"1g.18gb": 7, "1g.18gb+me": 1, "1g.35gb": 4, "2g.35gb": 3,
                                                   "3g.71gb": 2, "4g.71gb": 1, "7g.141gb": 1}
    # mig-parted's "h100-80gb" group is shared by A100-80GB (same names and counts)
    configs = yaml.safe_load((REAL / "mig-parted-config-default-excerpt.yaml").read_text())["h100-80gb"]
    for counts in configs.values():
        assert mig.fits("A100-SXM4-80GB", counts)
