#!/usr/bin/env bash
# Real inputs from the H200 machine for the readers of issue 10 (chapters 01–04): the text nvidia-smi,
# nvidia-smi -q and nvidia-smi topo -m print there, kept raw with what helpers.core.smiparse / topology read from it.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/realinputs.sh
# A few seconds; needs only the NVIDIA driver's nvidia-smi (no extra packages).
set -euo pipefail
: "${PY:?set PY to the python of the book environment (e.g. python3)}"
: "${DEST:?set DEST (e.g. assets/measurements/h200)}"
mkdir -p "$DEST"
t0=$SECONDS
echo "== nvidia-smi text outputs"
"$PY" -m helpers smiparse --out "$DEST/nvidia_smi_text.json"
# The readers must accept what this machine printed: fail loudly if one refused its own machine's output.
"$PY" - "$DEST/nvidia_smi_text.json" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
bad = [r for r in doc["records"] if r["parsed"].startswith("reader refused") or r["returncode_error"]]
for r in doc["records"]:
    print(f"  {r['command']:22s} {r['parsed']}")
if bad:
    sys.exit(f"{len(bad)} nvidia-smi output(s) not read: {[r['command'] for r in bad]}")
PYEOF
echo "realinputs.sh: done in $((SECONDS - t0)) s"
