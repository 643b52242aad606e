"""chips.yaml and servers.yaml (chapter 02): every row sourced, figures consistent with NVIDIA's documents."""
import pytest

from helpers.figures import hardware


def test_every_chip_row_is_sourced_and_plausible():
    df = hardware.chips()
    assert {"V100 SXM2", "A100 SXM4 80GB", "H100 SXM", "H200 SXM", "B200 (HGX)"} <= set(df.index)
    assert df.source.str.startswith("https://").all()
    # whitepaper figures: GV100 21.1 B on 815 mm², GA100 54.2 B on 826 mm², GH100 80 B on 814 mm²
    assert df.loc["V100 SXM2", "transistors_billion"] == 21.1 and df.loc["A100 SXM4 80GB", "die_area_mm2"] == 826
    assert df.loc["H100 SXM", "density_MTr_per_mm2"] == pytest.approx(98.3, abs=0.1)
    assert df.loc["H200 SXM", "die"] == df.loc["H100 SXM", "die"] == "GH100"      # same die, new memory
    assert df.loc["B200 (HGX)", "dies"] == 2 and df.loc["B200 (HGX)", "transistors_billion"] == 208
    assert (df.sm_enabled.dropna() <= df.sm_full.dropna()).all()
    assert df.year.is_monotonic_increasing


def test_server_rows():
    df = hardware.servers()
    assert any("Apollo 6500" in s for s in df.index) and "DGX H100" in df.index
    assert df.source.str.startswith("https://").all()
    assert (df.gpus > 0).all() and set(df.kind) <= {"server", "board"}
    assert df.loc["DGX A100", "nvswitch"] == 6 and df.loc["DGX H100", "nvswitch"] == 4
    dgx = df[df.index.str.startswith("DGX")]
    assert dgx.max_power_kW.is_monotonic_increasing                      # 6.5 → 10.2 → 14.3 kW


def test_unsourced_rows_are_refused(tmp_path, monkeypatch):
    import helpers.figures.hardware as hw

    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "chips.yaml").write_text("- gpu: X\n  source: somewhere\n")
    monkeypatch.setattr(hw, "__file__", str(tmp_path / "hardware.py"))
    with pytest.raises(ValueError, match="no https source"):
        hw._yaml("chips.yaml")


def test_host_link_times():
    rows = hardware.host_link_times(141e9, 55.0)
    by = {r["link"].split(" ")[0]: r for r in rows}
    assert by["NVLink-C2C"]["time_s"] < by["PCIe,"]["time_s"]
    with pytest.raises(ValueError, match="size_bytes"):
        hardware.host_link_times(0, None)
