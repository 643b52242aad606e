#!/usr/bin/env bash
# Chapter 19/21 reference run: decode of a Llama-3-8B-shaped model (random bf16 weights) on one H200 against the
# HBM bound (issue 25 item 2). Run from the repository root:
#   PY=python3 DEST=assets/measurements/h200 bash scripts/record/llmserve.sh
#   PARTS=gemv PY=python3 DEST=assets/measurements/h200 bash scripts/record/llmserve.sh   # add only part 5
# Parts, each a helpers CLI with --out (provenance), merged into $DEST/llm_decode.json at the end:
#   1. batch 1, context 1024: eager vs CUDA graph vs CUDA graph of torch.compile'd layer pieces
#   2. batch 1..256 at context 1024 with the graphs: the roofline over batch (eager too, for the overhead)
#   3. paged KV cache, continuous batching, Poisson arrivals at three rates: TTFT / TPOT p50 and p99
#   4. prefill of 512 and 2048 tokens: MFU
#   5. gemv: each weight shape (wqkv, wo, w13, w2, LM head) alone at M = 1, 64, 256 rows (records kind llm_gemv)
# About 5-7 minutes on one H200 (most of it torch.compile and the load runs; part 5 under a minute).
# PARTS="decode load gemv" (the default) writes a fresh llm_decode.json; PARTS=gemv replaces only the llm_gemv
# records of the existing one and appends its provenance.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()
PARTS="${PARTS:-decode load gemv}"
parts="$DEST/llm_decode.parts"
mkdir -p "$parts"
rm -f "$parts"/*.json
M=(--model llama3-8b)
case " $PARTS " in *" decode "*)
step "$PY" -m helpers llmserve "${M[@]}" --paths eager,graph,graph-compiled,graph-flash --batch 1,8,32,64,128,256 \
    --context 1024 --steps 50 --prefill 512,2048 --out "$parts/decode.json" ;; esac
case " $PARTS " in *" load "*)
step "$PY" -m helpers llmserve "${M[@]}" --paths paged --rates 4,16,48 --requests 120 --prompt-len 512 \
    --max-new 128 --max-batch 64 --prefill 512 --out "$parts/load.json" ;; esac
case " $PARTS " in *" gemv "*)
step "$PY" -m helpers llmserve "${M[@]}" --paths gemv --batch 1,64,256 --prefill 0 --out "$parts/gemv.json" ;; esac

"$PY" - "$parts" "$DEST/llm_decode.json" "$PARTS" <<'PYEOF'
import json, sys, pathlib
from helpers.core import records
ran, dest = set(sys.argv[3].split()), pathlib.Path(sys.argv[2])
parts = [json.loads(p.read_text()) for p in sorted(pathlib.Path(sys.argv[1]).glob("*.json"))]
if {"decode", "load"} <= ran:                              # a fresh document
    doc = dict(parts[0])
    doc["records"], doc["parts_provenance"] = [], []
elif ran == {"gemv"} and dest.exists():                    # the matrix products added to the recorded decode
    doc = json.loads(dest.read_text())
    doc["records"] = [r for r in doc["records"] if r["kind"] != "llm_gemv"]
    doc["parts_provenance"] = [p for p in doc["parts_provenance"] if "--paths gemv" not in p["command"]]
else:
    sys.exit(f"PARTS={sys.argv[3]!r}: run decode and load together, or gemv alone beside an existing {dest}")
doc["records"] += [r for p in parts for r in p["records"]]
doc["parts_provenance"] += [p["provenance"] for p in parts]
records.save(doc, dest)
for r in doc["records"]:
    if r["kind"] == "llm_gemv":
        print(f"  gemv {r['weight']:8s} B={r['batch']:4d}: {r['time_us']:9.1f} us  {r['achieved_GBps']:6.0f} GB/s  "
              f"{r['fraction_of_bw']:.2f} of {r['bw_GBps']:.0f} GB/s  "
              f"{r['achieved_TFLOPs']:6.1f} TFLOP/s")
    elif r["kind"] == "llm_decode" and r["path"] != "paged":
        f = r["fraction_of_hbm_bound"]
        print(f"  {r['path']:15s} B={r['batch']:4d} ctx={r['context']}: "
              + (f"{r['tokens_per_s']:9.0f} tok/s  {f:.2f} of the HBM bound" if f else r["note"]))
    elif r["kind"] == "llm_decode":
        print(f"  paged rate={r['rate_per_s']}/s: {r['tokens_per_s']:.0f} tok/s, TTFT p50/p99 "
              f"{r['ttft_ms_p50']:.0f}/{r['ttft_ms_p99']:.0f} ms, TPOT p50/p99 {r['tpot_ms_p50']:.1f}/{r['tpot_ms_p99']:.1f} ms")
    else:
        print(f"  prefill {r['prompt_len']}: {r['tokens_per_s']:.0f} tok/s, MFU {r['mfu']:.2f}")
PYEOF
echo "llmserve.sh: done in $((SECONDS - t0)) s"
