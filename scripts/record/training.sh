#!/usr/bin/env bash
# Reference measurements for chapters 06 (frameworks), 07 (parallelism) and 09 (memory), recorded on the H200.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/training.sh
# Every file is written by a helpers CLI with --out, so it carries its provenance. About a minute on one H200.
# World size 1 runs on the GPU with NCCL; two ranks on a one-GPU machine use Gloo on the host (NCCL needs one
# GPU per rank). With more GPUs, `--world-size 1,2,4` would put every rank on its own GPU.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()

# ch06: one process vs DDP vs FSDP (ZeRO-2 / ZeRO-3), losses and counted per-rank bytes vs ZeRO formulas
step "$PY" -m helpers dptrain --model mlp,gpt --world-size 1,2 --steps 5 --out "$DEST/dptrain.json"
# ch07: tensor-parallel MLP (hand-written f/g and DTensor) and a real 2-stage pipeline (GPipe, 1F1B)
step "$PY" -m helpers tensorpar --world-size 2 --out "$DEST/tensorpar.json"
step "$PY" -m helpers pipeline real --world-size 2 --schedule gpipe,1f1b --out "$DEST/pipeline.json"
# ch09: activation memory of a GPT block (h=4096, a=32, b=4, s=512..2048, bf16) with/without checkpointing
step "$PY" -m helpers actmem block --out "$DEST/actmem.json"
# ch09: fp32 / bf16 / fp16 autocast / pure bf16 memory and step time; fp8 GEMM vs bf16 GEMM
step "$PY" -m helpers actmem precision --out "$DEST/precision.json"
# ch09: caching-allocator statistics and the fragmentation demo (default and expandable_segments)
step "$PY" -m helpers allocator --out "$DEST/allocator.json"

# The chapter-09 acceptance check: measured activations within 15% of Korthikanti's formula.
"$PY" - "$DEST/actmem.json" <<'PYEOF'
import json, sys
doc = json.load(open(sys.argv[1]))
bad = [r for r in doc["records"] if not 0.85 <= r["ratio"] <= 1.15]
for r in doc["records"]:
    print(f"  s={r['seq_len']:5d} checkpoint={r['checkpoint']!s:5s} {r['method']}: measured/formula = {r['ratio']:.3f}")
if bad:
    sys.exit(f"activation memory off the formula by more than 15% in {len(bad)} record(s)")
PYEOF
echo "training.sh: done in $((SECONDS - t0)) s"
