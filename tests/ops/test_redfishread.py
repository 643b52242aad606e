"""Redfish Power, ComputerSystem and Processor, read on DMTF's public mockup (tests/data/real/redfish)."""
import json
from pathlib import Path

import pytest

from helpers.ops import redfishread

REAL = Path(__file__).resolve().parents[1] / "data" / "real" / "redfish"


def _doc(name):
    return json.loads((REAL / f"dmtf-mockup-rackmount1-{name}.json").read_text())


def test_kinds():
    assert [redfishread.kind(_doc(n)) for n in ("thermal", "power", "system", "processor-cpu1", "processor-fpga1")] == \
        ["thermal", "power", "system", "processor", "processor"]
    assert redfishread.kind({"Members": []}) is None


def test_power_supply_warning():
    pw = redfishread.parse_power(_doc("power"))
    assert pw.consumed_W == 344 and len(pw.supplies) == 1
    assert (pw.supplies[0].name, pw.supplies[0].health, pw.supplies[0].output_W) == ("Power Supply Bay", "Warning", 325)


def test_system_summary():
    s = redfishread.parse_system(_doc("system"))
    assert (s.name, s.power_state, s.health, s.health_rollup, s.processors, s.memory_GiB) == \
        ("web483", "On", "OK", "OK", 2, 96)


def test_processors():
    cpu, fpga = redfishread.parse_processor(_doc("processor-cpu1")), redfishread.parse_processor(_doc("processor-fpga1"))
    assert (cpu.type, cpu.health, cpu.state) == ("CPU", "OK", "Enabled")
    assert (fpga.type, fpga.model) == ("FPGA", "Stratix 10")
    with pytest.raises(ValueError, match="Processor"):
        redfishread.parse_processor(_doc("power"))
