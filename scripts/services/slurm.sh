#!/usr/bin/env bash
# A private one-node Slurm for a shell session (chapters 13 and 27), the same one the notebooks start from Python
# (helpers.ops.slurm.cluster): munged, slurmctld and slurmd on 127.0.0.1, everything in one temporary folder.
#   scripts/services/slurm.sh start     # prints `export SLURM_CONF=…`: paste it, then sbatch / srun / squeue
#   scripts/services/slurm.sh stop      # cancels the jobs and stops the daemons it started (by PID)
set -euo pipefail
RUN="${BOOK_RUN:-/tmp/book-services}/slurm"
PY="${PY:-python3}"
case "${1:-}" in
  start)
    [ -f "$RUN/holder.pid" ] && kill -0 "$(cat "$RUN/holder.pid")" 2>/dev/null && { cat "$RUN/env"; exit 0; }
    mkdir -p "$RUN"
    nohup "$PY" -c "
import signal, sys, time
from helpers.ops import slurm
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
with slurm.cluster(cpus=${CPUS:-8}, gpus=${GPUS:-0}) as c:
    open('$RUN/env', 'w').write(f'export SLURM_CONF={c.env[\"SLURM_CONF\"]}\n')
    while True: time.sleep(1)" >"$RUN/holder.log" 2>&1 &
    echo $! >"$RUN/holder.pid"
    for _ in $(seq 150); do [ -s "$RUN/env" ] && break; sleep 0.2; done
    [ -s "$RUN/env" ] || { echo "slurm did not start:"; tail -5 "$RUN/holder.log"; exit 1; }
    cat "$RUN/env"
    ;;
  stop)
    if [ -f "$RUN/holder.pid" ]; then
      pid=$(cat "$RUN/holder.pid"); kill "$pid" 2>/dev/null || true
      for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
    fi
    rm -rf "$RUN"; echo "stopped"
    ;;
  *) echo "usage: $0 start|stop"; exit 2 ;;
esac
