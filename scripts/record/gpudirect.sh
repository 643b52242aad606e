#!/usr/bin/env bash
# GPU <-> host "shared memory" for chapter 03 (issue 19), recorded on the H200 machine. From the repo root:
#   PY=python3 DEST=assets/measurements/h200 bash scripts/record/gpudirect.sh
# Needs torch and cupy (cupy-cuda13x on the H200 machine). Pageable vs pinned cudaMemcpy, mapped zero-copy reads and
# writes from a kernel, a device memcpy for reference, and P2P GPU0->GPU1 where the host has two GPUs; every transfer
# is checksum-checked, timed with CUDA events, and recorded with SM clock / power / throttle reasons (NVML).
# Well under a minute on one H200.
source "$(dirname "$0")/common.bash"     # strict mode, $PY/$DEST checked, step()
step "$PY" -m helpers gpudirect --sizes 1MiB,64MiB,1GiB --repeats 10 --out "$DEST/gpudirect.json"
N=$("$PY" -c "import torch; print(torch.cuda.device_count())")
if [ "$N" -ge 2 ]; then    # the same run on a multi-GPU host adds the P2P row; it goes beside the multi-GPU recordings
  mkdir -p "${DEST}x${N}"
  step "$PY" -m helpers gpudirect --sizes 64MiB,1GiB --repeats 10 --out "${DEST}x${N}/gpudirect.json"
fi
echo "gpudirect.sh: done in $((SECONDS - t0)) s"
