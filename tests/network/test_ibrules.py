"""helpers.network.ibrules: one rule per fault, in the order of severity of data/ib/faults.yaml; each fires on its
own sample scenario and none on the healthy fabric (chapter 03)."""
import pytest

from helpers.network import ibdiag, ibinventory, ibparse, ibrules


def test_one_rule_per_fault_in_severity_order():
    assert len(ibrules.RULES) == len(ibdiag.ORDER) == 8


@pytest.mark.parametrize("fault", list(ibdiag.ORDER))
def test_each_rule_fires_on_its_own_scenario(fault):
    rule = ibrules.RULES[ibdiag.ORDER.index(fault)]
    found = rule(ibparse.load_sample(fault), ibinventory.load_inventory())
    assert found and all(isinstance(f, ibrules.Finding) and f.fault == fault and f.evidence for f in found)


def test_no_rule_fires_on_the_healthy_fabric():
    snap, inv = ibparse.load_sample("healthy"), ibinventory.load_inventory()
    assert [f for rule in ibrules.RULES for f in rule(snap, inv)] == []


def test_iblinkinfo_down_polling_on_a_cabled_port_is_link_down():
    """iblinkinfo prints a dead port as `==(  Down/ Polling)==>  [  ] "" ( )` (the format of the real outputs in
    tests/data/real/iblinkinfo); an unused switch port looks the same, so only a port the inventory cables counts."""
    from helpers.network import ibdiag, ibfabric, ibinventory, ibparse

    inv = ibinventory.load_inventory()
    (lid, port), name = next(iter(inv.uplinks.items()))
    text = (f"Switch: 0x0c42a103008982a4 {inv.names[lid]}:\n"
            f"           {lid}   {port}[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n"
            f"           {lid}   77[  ] ==(                Down/ Polling)==>             [  ] \"\" ( )\n")
    links = ibfabric.parse_iblinkinfo(text)
    assert [(ln.state, ln.physical_state, ln.peer_lid) for ln in links] == [("Down", "Polling", None)] * 2
    snap = ibparse.load_sample("healthy")
    import dataclasses
    fs = ibdiag.diagnose(dataclasses.replace(snap, links=links), inv)
    down = [f for f in fs if f.fault == "link_down"]
    assert len(down) == 1 and down[0].component == name and "Polling" in down[0].evidence
