#!/usr/bin/env bash
# Reference power measurements for chapter 16 (power and cooling), recorded on the H200.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/power.sh
# Every file is written by a helpers CLI with --out, so it carries its provenance. About 1 minute on one H200.
# The book only READS power, clocks and throttle reasons through NVML; it never changes clocks or power limits.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()

# ch16: idle baseline, a bf16 8192³ GEMM loop (reaches the 700 W cap; SM clocks fall) and a transformer training
# step (energy per step and per token), each 15 s with NVML sampled every 50 ms
step "$PY" -m helpers powertrace --workload idle,gemm,train --seconds 15 --interval 0.05 --out "$DEST/power.json"

"$PY" - "$DEST/power.json" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["records"]:
    print(f"  {r['workload']:6s} {r['power_source']:5s} mean {r['mean_power_W']} W, max {r['max_power_W']} W, "
          f"SM {r['mean_sm_clock_MHz']} MHz, {r['energy_per_step_J']} J/step, throttle: {r['throttle_reasons']}")
if any(r["energy_J"] is None for r in doc["records"]):
    sys.exit("power.sh: NVML gave no power readings on this machine")
PYEOF
echo "power.sh: done in $((SECONDS - t0)) s"
