#!/usr/bin/env bash
# Reference results for chapters 15 and 28: GEMM ceiling per dtype (MAMF method), STREAM memory bandwidth,
# host<->device copies and an HPL-style fp64 solve, as % of the H200 datasheet; about 60 s on one H200.
# Run by `make record-h200` on the H200 machine with $PY and $DEST set.
set -euo pipefail
$PY -m helpers bench all --out "$DEST/bench.json"
# the headline ratios (GEMM vs plain torch.matmul of the same shapes, in the same run) for the lead's log
$PY - "$DEST/bench.json" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for row in doc["summary"]:
    pct = "" if row["pct_of_peak"] is None else f"  {row['pct_of_peak']:.1f} % of peak"
    ratio = "" if row["ratio_to_plain"] is None else f"  ×{row['ratio_to_plain']:.3f} of plain matmul"
    print(f"{row['what']:<22} {row['detail']:<34} {row['value']:10.1f} {row['unit']}{pct}{ratio}")
print("skipped:", doc["skipped"] or "nothing")
PY
