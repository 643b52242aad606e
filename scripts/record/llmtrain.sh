#!/usr/bin/env bash
# Chapter 18: a Llama-style decoder trained at real scale on one GPU: step time, tokens/s, MFU, memory, clocks.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/llmtrain.sh
# Every step appends its records to one document, $DEST/llm_train.json (kind llm_train, provenance per run).
# Random tokens on the GPU (speed does not depend on them; the chapter's real loss curve is the CPU's, on the
# book's text). About 5–7 minutes on one H200, torch.compile included (one block and the head are compiled).
# A configuration that fails or runs out of memory is a record saying so; the sweep goes on.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()
OUT="$DEST/llm_train.json"
# SMOKE=1: the same steps with the tiny model for a few steps (checks the script on a CPU; not a measurement)
B1=llama-1b; B3=llama-3b; SHAPE=(--seq-len 2048 --batch 8); SHAPE3=(--seq-len 2048 --batch 4)
[[ "${SMOKE:-0}" == 1 ]] && { B1=tiny; B3=tiny; SHAPE=(--seq-len 32 --batch 2); SHAPE3=("${SHAPE[@]}"); }
M=(-m helpers llmtrain --config "$B1" "${SHAPE[@]}" --steps 20 --warmup 3)
failed=0
run() { step "$PY" "${M[@]}" "$@" || { echo "   (a configuration failed: see its record)"; failed=1; }; }

# torch.compile × SDPA backend, bf16 mixed precision (fp32 master weights + autocast) — the MFU headline
run --compile 1 --sdpa flash,cudnn --precision bf16-mixed --out "$OUT"
# pure bf16 (weights, gradients and AdamW state in bf16), compiled
run --compile 1 --sdpa flash --precision bf16-pure --append --out "$OUT"
# eager, every SDPA backend (math materialises the T×T scores), and pure bf16
run --compile 0 --sdpa flash,cudnn,efficient,math --precision bf16-mixed --append --out "$OUT"
run --compile 0 --sdpa flash --precision bf16-pure --append --out "$OUT"
# activation checkpointing per block (MFU counts model FLOPs only, so it drops by about the recomputed forward)
run --compile 1 --sdpa flash --precision bf16-mixed --checkpoint 1 --append --out "$OUT"
# fp8 through torchao.float8 (a `skipped` record where torchao is not installed)
run --compile 1 --sdpa flash --precision fp8-mixed --append --out "$OUT"
# the 3B model once, at the best setting, micro-batch 4 (8k tokens per step) to stay inside 141 GB
M=(-m helpers llmtrain --config "$B3" "${SHAPE3[@]}" --steps 10 --warmup 3)
run --compile 1 --sdpa flash --precision bf16-mixed --append --out "$OUT"
# where the step's time goes: forward / backward / optimizer / data and kernel time by kind
M=(-m helpers llmtrain --config "$B1" "${SHAPE[@]}" --steps 10 --warmup 3)
run --compile 1 --sdpa flash --precision bf16-mixed --profile --append --out "$OUT"

# The issue-25 goal: >= 0.55 MFU for a >= 0.9 B model in bf16 mixed precision (printed, not enforced).
"$PY" - "$OUT" <<'PYEOF'
import json, sys
recs = json.load(open(sys.argv[1]))["records"]
for r in recs:
    tail = f"{r['tokens_per_s']:>9,.0f} tok/s  MFU {r['mfu']:.3f}  {r['peak_memory_GiB']} GiB" \
        if r["status"] == "ok" else r["status"][:90]
    print(f"  {r['config']:10s} {r['precision']:10s} compile={r['compile']!s:5s} {r['sdpa']:9s} "
          f"ckpt={r['checkpoint']!s:5s} b={r['batch']:<3d} {tail}")
best = max((r["mfu"] for r in recs if r["status"] == "ok" and r["precision"] == "bf16-mixed"
            and r["params"] >= 0.9e9), default=None)
print(f"best bf16-mixed MFU of a >= 0.9 B model: {best} (goal 0.55)")
PYEOF
echo "llmtrain.sh: done in $((SECONDS - t0)) s"
exit $failed
