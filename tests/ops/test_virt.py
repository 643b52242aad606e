"""IOMMU groups from real outputs, passthrough readiness, libvirt domain XML (helpers.ops.virt), GPU sharing model."""
from pathlib import Path

import pytest

from helpers.ops import sharing, virt

REAL = Path(__file__).parents[1] / "data" / "real" / "iommu-groups"


def test_grouped_form_rtx3070ti():
    g = virt.parse_iommu_groups((REAL / "sgpupt-28-rtx3070ti.txt").read_text())
    assert sorted(g) == [0, 1, 2] and len(g[1]) == 3
    c = virt.passthrough_check(g, "0000:01:00.0")
    assert c.passable and c.devices_to_guest == ("01:00.0", "01:00.1") and c.host_bridges == ("00:01.0",)


def test_four_function_card_goes_whole():
    g = virt.parse_iommu_groups((REAL / "ultimate-macos-kvm-213-gtx1660.txt").read_text())
    c = virt.passthrough_check(g, "01:00.0")
    assert c.group == 2 and c.passable and len(c.devices_to_guest) == 4


def test_one_line_form_and_a_mixed_group():
    g = virt.parse_iommu_groups((REAL / "mobilepassthrough-7-gtx765m.txt").read_text())
    assert [d.class_code for d in g[1]] == ["0604", "0302", "0403"]
    assert virt.passthrough_check(g, "01:00.0").passable
    assert len(g[11]) == 3


def test_book_written_group_with_a_nic_is_blocked():
    # book-written sample (not a real output): a GPU sharing its group with another card's NIC
    text = ("IOMMU Group 7:\n\t00:03.0 PCI bridge [0604]: Intel Corporation Device [8086:2f08] (rev 02)\n"
            "\t04:00.0 3D controller [0302]: NVIDIA Corporation GH100 [H100 SXM5 80GB] [10de:2330] (rev a1)\n"
            "\t05:00.0 Ethernet controller [0200]: Mellanox Technologies MT2910 Family [ConnectX-7] [15b3:1021]\n")
    c = virt.passthrough_check(virt.parse_iommu_groups(text), "04:00.0")
    assert not c.passable and c.blockers == ("05:00.0 Ethernet controller",)


def test_bad_inputs():
    with pytest.raises(ValueError, match="IOMMU Group"):
        virt.parse_iommu_groups("nothing here\n")
    with pytest.raises(ValueError, match="no device"):
        virt.passthrough_check(virt.parse_iommu_groups((REAL / "sgpupt-28-rtx3070ti.txt").read_text()), "09:00.0")
    with pytest.raises(ValueError, match="PCI address"):
        virt.domain_xml("t", ["01:00"])
    with pytest.raises(ValueError, match="domain name"):
        virt.domain_xml("bad name", [])


def test_domain_xml_validates_against_libvirts_schema():
    xml = virt.domain_xml("tenant-a", ["0000:01:00.0", "0000:01:00.1"], memory_GiB=64, vcpus=16)
    assert xml.count("<hostdev ") == 2 and "bus=\"0x01\"" in xml
    ok, msg = virt.validate_domain(xml)
    if ok is None:
        pytest.skip(msg)
    assert ok, msg
    bad, msg = virt.validate_domain(xml.replace("<vcpu", "<vcpus").replace("</vcpu>", "</vcpus>"))
    assert bad is False and "vcpus" in msg


def test_sharing_isolation():
    busy, quiet = sharing.compare(seed=0), sharing.compare(seed=0, noisy=False)
    by = {r.mode: r for r in busy}
    q = {r.mode: r for r in quiet}
    # MIG and fixed share: the neighbour changes nothing for tenant 0; time-slicing: it does
    assert by["mig"].p99_ms == q["mig"].p99_ms and by["fixed-share"].p99_ms == q["fixed-share"].p99_ms
    assert by["time-slicing"].p99_ms > q["time-slicing"].p99_ms
    assert all(r.requests == busy[0].requests for r in busy)
    with pytest.raises(ValueError, match="mode"):
        sharing.simulate("mps")
