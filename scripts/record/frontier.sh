#!/usr/bin/env bash
# Reference measurements for chapter 30 (trends), recorded on the H200.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/frontier.sh
# Every file is written by a helpers CLI with --out, so it carries its provenance; GPU records also carry the SM clock,
# power and throttle reasons NVML saw while they ran. Needs torch with CUDA and nvidia-ml-py; under a minute on one H200.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()

# ch30: state-vector simulator, complex64, 2-layer circuits; GPU for every size, host CPU rows up to 22 qubits
# (30 qubits = 8 GiB of state; the contraction needs about 3x that)
step "$PY" -m helpers qsim --qubits 12,16,20,22,24,26,28,30 --depth 2 --repeats 3 --out "$DEST/qsim.json"
# ch30: heat-equation stencil, fp32, 50 steps; GPU for every grid, host CPU rows up to 2048^2
step "$PY" -m helpers stencil --grid 512,1024,2048,4096,8192,16384 --steps 50 --repeats 3 --out "$DEST/stencil.json"

"$PY" - "$DEST/qsim.json" "$DEST/stencil.json" <<'PYEOF'
import json, sys
q, s = (json.load(open(p)) for p in sys.argv[1:3])
bad = [r for r in q["records"] if r["norm_error"] > 1e-3] + [r for r in s["records"] if r["max_rel_error"] > 1e-4]
for r in q["records"]:
    print(f"  qsim {r['device']:6s} n={r['qubits']:2d}: {r['time_per_gate_s'] * 1e6:9.1f} us/gate, {r['bw_GBps']:7.1f} GB/s")
for r in s["records"]:
    print(f"  stencil {r['device']:6s} {r['grid']:5d}^2: {r['points_per_s'] / 1e9:7.2f} Gupdates/s, {r['min_bw_GBps']:7.1f} GB/s")
if bad:
    sys.exit(f"{len(bad)} record(s) fail their correctness check")
PYEOF
echo "frontier.sh: done in $((SECONDS - t0)) s"
