#!/usr/bin/env bash
# Chapters 04, 11, 23 — storage IO, DataLoader sweep, copy/compute overlap and codecs on the H200 machine.
# Run by `make record-h200` (scripts/record.py) from the repo root with $PY and $DEST set. ≈ 60–80 s.
# There is no fio on that machine: scripts/bench_io.py would only print "skipped", so it is not run here.
set -euo pipefail
: "${PY:?set PY to the python to use}" "${DEST:?set DEST to the output folder}"
export BOOK_QUIET=1
WORK=$(mktemp -d /tmp/storage-record.XXXXXX)
trap 'rm -rf "$WORK"' EXIT

# Local disk under /tmp: 1 GiB file (page cache is dropped per test with posix_fadvise), threads up to 64.
$PY -m helpers iobench --path "$WORK" --size 1GiB --runtime 1.5 --threads 1,2,4,8,16,32,64 --out "$DEST/iobench.json"
# Same tests on tmpfs (/dev/shm): "in-memory storage" for chapter 23.
$PY -m helpers iobench --path /dev/shm --size 512MiB --runtime 0.5 --threads 1,4,16 --out "$DEST/iobench_shm.json" \
    || echo "note: /dev/shm refused (see the line above); iobench_shm.json not recorded"
# DataLoader: 16 cores, so sweep workers further; pin_memory and the host→GPU copy of every batch.
$PY -m helpers dataload --dir "$WORK" --samples 4096 --formats files,shard,zshard --workers 0,4,16 \
    --batch 256 --pin 0,1 --out "$DEST/dataload.json"
# Same with a simulated 2 ms per-sample remote-storage latency (where workers matter most).
$PY -m helpers dataload --dir "$WORK" --samples 2048 --formats shard --workers 0,4,16 --batch 64 --pin 1 \
    --latency-ms 2 --out "$DEST/dataload_latency.json"
# Host→device copies overlapped with compute on a second stream (double-buffered prefetcher).
$PY -m helpers prefetch --batch 64MiB --batches 16 --out "$DEST/prefetch.json"
# Codecs on weights, checkpoints and text; read + decompress vs raw read on local disk.
$PY -m helpers compress --dir "$WORK" --out "$DEST/compress.json"
