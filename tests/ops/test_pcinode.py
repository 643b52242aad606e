"""lspci -vvv link status, ACS and AER, read on real outputs (tests/data/real/lspci)."""
from pathlib import Path

import pytest

from helpers.ops import pcinode

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "lspci"


def _one(name):
    (d,) = pcinode.parse_lspci((REAL / name).read_text())
    return d


def test_speed_downgrade_on_a_riser():
    d = _one("janhq-183-4090-riser-downgraded.txt")
    assert (d.cap_speed_GTps, d.cap_width, d.sta_speed_GTps, d.sta_width) == (16.0, 16, 2.5, 16)
    assert d.downgraded == ("speed 2.5 of 16 GT/s",)


def test_full_link_is_not_downgraded():
    d = _one("lact-593-9070xt-full-link.txt")
    assert d.sta_speed_GTps == d.cap_speed_GTps == 32.0 and d.downgraded == ()


def test_width_downgrade_and_aer():
    d = _one("geerlingguy-480-rtx8000-pi-aer.txt")
    assert len(d.downgraded) == 2 and d.aer_correctable == ("AdvNonFatalErr",) and d.aer_uncorrectable == ()


def test_device_header():
    d = _one("tinygrad-ogkm-6-4090-header.txt")
    assert d.address == "62:00.0" and "GeForce RTX 4090" in d.description and d.sta_speed_GTps is None


def test_nn_ids_and_acs():
    text = ("0000:18:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)\n"
            "\t\tACSCtl:\tSrcValid+ TransBlk- ReqRedir+ CmpltRedir+ UpstreamFwd+ EgressCtrl- DirectTrans-\n")
    (d,) = pcinode.parse_lspci(text)
    assert d.ids == "10de:2330" and d.acs_ctl.startswith("SrcValid+")
    with pytest.raises(ValueError, match="lspci"):
        pcinode.parse_lspci("\n")


def test_a100_nn_header():
    d = _one("hwloc-653-a100-nn-vvv.txt")
    assert (d.address, d.ids) == ("da:00.0", "10de:20b0") and "A100 SXM4 40GB" in d.description
