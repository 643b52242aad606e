"""helpers.network.ibinventory: the book's sample fabric as an inventory, port names, and the width and rate
inferred from a fabric's own ports when there is no fabric.yaml (chapter 03)."""
from helpers.network import ibinventory, ibparse


def test_sample_fabric_inventory():
    inv = ibinventory.load_inventory()
    assert (inv.switches, inv.cas, inv.rate_Gbps, inv.width) == (4, 9, 400.0, "4X")
    assert inv.names[4] == "leaf01" and inv.names[6] == "gpu01/U1" and inv.names[7] == "gpu01/U2"
    assert inv.peer_leaf[("gpu01", "mlx5_0")] == ("leaf01", 1)
    assert inv.uplinks[(4, 19)] == "leaf01/P19 → spine02/P1"
    assert ibinventory.port_name(inv, 4, 19) == "leaf01/P19"
    assert ibinventory.port_name(inv, 99, 1) == "lid 99/P1"


def test_majority_ignores_blanks():
    assert ibinventory.majority([0, "", None, 200, 200, 400]) == 200
    assert ibinventory.majority(["", 0, None]) is None


def test_inferred_inventory_knows_width_and_rate_only():
    inv = ibinventory.infer_inventory(ibparse.load_sample("healthy"))
    assert (inv.rate_Gbps, inv.width) == (400.0, "4X")
    assert (inv.switches, inv.cas, inv.names, inv.peer_leaf, inv.uplinks) == (0, 0, {}, {}, {})


def test_inventory_values_are_checked(tmp_path):
    """Issue 35: a NaN rate or an empty string where a name or number belongs was taken as is."""
    import pytest

    text = (ibparse.DATA / "fabric.yaml").read_text()
    for old, new, words in (("rate_Gbps: 400", "rate_Gbps: .nan", "rate_Gbps: 'nan' is not a finite number"),
                            ("rate_Gbps: 400", "rate_Gbps: 0", "rate_Gbps: '0' is zero"),
                            ("{name: spine01,", '{name: "",', r"switches\[0\]: name '' is not a name"),
                            ("host: gpu01,", 'host: "",', r"cas\[1\]: host '' is not a name"),
                            ("lid: 6,", 'lid: "",', r"cas\[1\]: lid: '' is not an integer"),
                            ("leaf_port: 17, spine: spine01, spine_port: 1}", "leaf_port: 17, spine: spine01, "
                             "spine_port: \u0661}", r"uplinks\[0\]: spine_port: '\u0661' is not an integer"),
                            ("width: 4X", "width: ''", "width '' is not a name")):
        assert old in text
        (tmp_path / "f.yaml").write_text(text.replace(old, new, 1))
        with pytest.raises(ValueError, match=words):
            ibinventory.load_inventory(tmp_path / "f.yaml")
