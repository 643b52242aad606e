"""qsim and stencil refuse sizes the machine cannot hold before the first run (issue 28 item 5)."""
import pytest

from helpers.core import cli, resources
from helpers.frontier import statevector, stencil

GiB = 2**30


@pytest.fixture
def sixteen_gib(monkeypatch):
    monkeypatch.setattr(resources, "available_memory_bytes", lambda: 16 * GiB)


def test_qsim_30_qubits_refused_8_runs(sixteen_gib, capsys):
    assert statevector.peak_bytes(30) == 32 * GiB                     # 4 × 2^30 amplitudes × 8 B
    assert cli.run(statevector.main, ["--qubits", "8,30", "--device", "cpu"]) == 2
    err = capsys.readouterr().err
    assert "30-qubit state vector" in err and "needs 32.0 GiB" in err and "lower --qubits" in err
    assert capsys.readouterr().out == ""                                # nothing ran before the refusal
    assert cli.run(statevector.main, ["--qubits", "8", "--depth", "1", "--repeats", "1", "--device", "cpu",
                                      "--json"]) == 0


def test_stencil_grid_32768_refused_64_runs(sixteen_gib, capsys):
    host, dev = stencil.peak_bytes(32768, "float32")
    assert host == 32 * GiB and dev == 12 * GiB
    assert cli.run(stencil.main, ["--grid", "32768", "--device", "cpu"]) == 2
    assert "32768 x 32768 grid" in capsys.readouterr().err
    assert cli.run(stencil.main, ["--grid", "64", "--steps", "2", "--repeats", "1", "--device", "cpu",
                                  "--json"]) == 0
