"""Blackwell and after: the low-precision peaks table (chapter 30), read from ``data/low_precision_peaks.yaml``."""
from __future__ import annotations

from pathlib import Path

import yaml

DATA = Path(__file__).resolve().parent / "data" / "low_precision_peaks.yaml"


def peaks():
    """The table as a DataFrame, with each precision's speed-up over the H200 row's FP8 figure."""
    import pandas as pd

    rows = yaml.safe_load(DATA.read_text())
    for r in rows:
        if not str(r.get("source", "")).startswith("http"):
            raise ValueError(f"{DATA.name}: row {r.get('system')!r} has no source URL")
    df = pd.DataFrame(rows).set_index("system")
    h200_fp8 = df.loc["H200 SXM", "fp8_tflops"]
    for p in ("fp8", "fp6", "fp4"):
        df[f"{p}_vs_H200_fp8"] = df[f"{p}_tflops"] / h200_fp8
    return df
