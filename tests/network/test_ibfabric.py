"""helpers.network.ibfabric: iblinkinfo lines and the nominal rate of a link (chapter 03; ibparse re-exports it)."""
from pathlib import Path

import pytest

from helpers.network import ibfabric

REAL = Path(__file__).parents[1] / "data" / "real" / "iblinkinfo"


def test_iblinkinfo_two_hcas_back_to_back():
    links = ibfabric.parse_iblinkinfo((REAL / "archwiki-two-hcas-back-to-back.txt").read_text())
    assert [(x.lid, x.port, x.peer_lid, x.width, x.state) for x in links] == [(4, 1, 3, "4X", "Active"),
                                                                             (3, 1, 4, "4X", "Active")]
    assert links[0].speed == "DDR" and links[0].rate_Gbps == 20         # 4X DDR: 4 × 5 Gb/s
    with pytest.raises(ValueError, match="iblinkinfo"):
        ibfabric.parse_iblinkinfo("nothing here")
