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
