#!/usr/bin/env bash
# Reference measurements for chapters 18 (LLM training) and 19 (inference), recorded on the H200.
# Run from the repository root:   PY=python3 DEST=assets/measurements/h200 bash scripts/record/largemodels.sh
# Every file is written by a helpers CLI with --out, so it carries its provenance. About a minute on one H200.
# Needs only torch (CUDA). Chapters 14 and 26 need no GPU recording (their labs test correctness on the CPU).
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()

# ch18: naive attention vs SDPA forced to math / flash / memory-efficient, bf16, fwd+bwd time and peak memory
step "$PY" -m helpers attention --seq 1024,4096 --batch 4 --heads 16 --head-dim 64 --dtype bf16 --out "$DEST/attention.json"
# ch18: a tiny GPT (4 layers, d=512, T=256) trained 10 steps in bf16 autocast: tokens/s and MFU vs the datasheet peak
step "$PY" -m helpers gptmfu --steps 10 --batch 8,32 --seq-len 256 --d-model 512 --layers 4 --heads 8 --out "$DEST/gpt_mfu.json"
# ch19: static vs continuous batching on the GPU (real decode steps) beside the t(B) = a + bB model fitted there
step "$PY" -m helpers serving --requests 64 --batch 8,16,32 --max-new 64 --d-model 256 --out "$DEST/serving.json"
echo "largemodels.sh: done in $((SECONDS - t0)) s"
