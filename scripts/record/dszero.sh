#!/usr/bin/env bash
# Reference run for chapter 06, Lab 6: DeepSpeed ZeRO stages 0-3 on the H200 machine, bytes measured per rank.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/dszero.sh
# World size 1 runs on the GPU with NCCL (DeepSpeed's CUDA accelerator); world size 2 runs two Gloo ranks on the
# host CPU (one GPU cannot host two NCCL ranks), DeepSpeed's CPU accelerator. About 30 s in all.
# DeepSpeed is not on the H200 image: its wheel (pure Python, built here from the sdist) and the small packages it
# needs travel in $WHEELS (default .whl/: deepspeed-0.19.8-py3-none-any.whl, hjson, py-cpuinfo, ninja, einops,
# tqdm, msgpack, pydantic, pydantic-core, annotated-types, typing-inspection, typing-extensions; cp312 where binary).
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()
WHEELS="${WHEELS:-.whl}"

if ! "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('deepspeed') is None)"; then
    [ -f "$WHEELS/deepspeed-0.19.8-py3-none-any.whl" ] || { echo "no deepspeed wheel in $WHEELS" >&2; exit 1; }
    step "$PY" -m pip install --no-index --find-links "$WHEELS" deepspeed==0.19.8
fi
"$PY" -c "import deepspeed, torch; print('deepspeed', deepspeed.__version__, '| torch', torch.__version__)"

# ch06 Lab 6: ZeRO-0/1/2/3 under deepspeed.initialize, same losses, measured bytes vs the ZeRO formula
step "$PY" -m helpers dszero --world-size 1,2 --stages 0,1,2,3 --steps 3 --out "$DEST/dszero.json"

"$PY" - "$DEST/dszero.json" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
for r in doc["records"]:
    print(f"  ws={r['world_size']} {r['backend']:5s} {r['device']:7s} stage {r['stage']} rank {r['rank']}: "
          f"measured {r['measured_bytes']} B, formula+master {r['zero_formula_master_bytes']} B, "
          f"loss gap {r['max_loss_diff_vs_stage0']:.1e}")
bad = [r for r in doc["records"] if not r["max_loss_diff_vs_stage0"] < 1e-5]
if bad or {r["backend"] for r in doc["records"]} != {"nccl", "gloo"}:
    sys.exit("dszero: stages disagree on the losses, or one backend did not run")
PYEOF
echo "dszero.sh: done in $((SECONDS - t0)) s"
