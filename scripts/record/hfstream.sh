#!/usr/bin/env bash
# Chapter 11, Lab 8 — Hugging Face `datasets` streaming vs the memory-mapped shard, on the H200 machine's HOST CPU
# (16 cores; no GPU is involved: the loader runs in the main process). Run from the repo root with $PY and $DEST set,
# e.g. `PY=python3 DEST=assets/measurements/h200 bash scripts/record/hfstream.sh`. ≈ 15 s.
# That machine has no network and no `datasets`: install the wheels kept in .whl/ first (WHL=.whl, default), e.g.
#   $PY -m pip install --no-index --find-links .whl datasets==5.2.0
set -euo pipefail
: "${PY:?set PY to the python to use}" "${DEST:?set DEST to the output folder}"
export BOOK_QUIET=1 HF_DATASETS_OFFLINE=1 HF_HUB_OFFLINE=1
WHL=${WHL:-.whl}
if ! "$PY" -c "import datasets" 2>/dev/null; then
    if [ -d "$WHL" ]; then
        "$PY" -m pip install -q --no-index --find-links "$WHL" datasets==5.2.0 \
            || { echo "hfstream.sh: could not install datasets from $WHL; h200/hfstream not recorded"; exit 0; }
    else
        echo "hfstream.sh: no datasets and no $WHL folder of wheels; h200/hfstream not recorded"; exit 0
    fi
fi
mkdir -p "$DEST"
WORK=$(mktemp -d /tmp/hfstream-record.XXXXXX)
trap 'rm -rf "$WORK"' EXIT
# 8,192 images in 8 Parquet and 8 Arrow shards, one epoch each through DataLoader(num_workers=0), batch 64.
$PY -m helpers hfstream --dir "$WORK" --samples 8192 --shards 8 --batch 64 --repeats 3 --out "$DEST/hfstream.json"
