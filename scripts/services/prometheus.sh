#!/usr/bin/env bash
# A Prometheus for a shell session (chapter 12): scrapes the book's exporter (simulated GPU on a laptop, real GPUs via
# NVML elsewhere), evaluates helpers/ops/data/alerts.yml, listens on 127.0.0.1 only.
#   scripts/services/prometheus.sh start      # prints the URLs; state in ${BOOK_RUN:-/tmp/book-services}
#   scripts/services/prometheus.sh stop       # stops exactly the processes it started (by PID)
# Notebooks and tests do not use this script: they start and stop their own server (helpers.ops.promserver.running).
set -euo pipefail
RUN="${BOOK_RUN:-/tmp/book-services}/prometheus"
PY="${PY:-python3}"
case "${1:-}" in
  start)
    command -v prometheus >/dev/null || { echo "prometheus not installed (apt-get install --no-install-recommends prometheus)"; exit 1; }
    [ -f "$RUN/prometheus.pid" ] && kill -0 "$(cat "$RUN/prometheus.pid")" 2>/dev/null && { echo "already running"; exit 0; }
    mkdir -p "$RUN"
    free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
    EXP_PORT=$(free_port); PROM_PORT=$(free_port)
    nohup "$PY" -c "
import time
from prometheus_client import CollectorRegistry, start_http_server
from helpers.ops import exporter
reg = CollectorRegistry(); ex = exporter.Exporter(simulated_gpus=0 if exporter.Exporter().nvml else 1); reg.register(ex)
start_http_server($EXP_PORT, addr='127.0.0.1', registry=reg)
while True: time.sleep(3600)" >"$RUN/exporter.log" 2>&1 &
    echo $! >"$RUN/exporter.pid"
    RULES=$("$PY" -c 'from helpers.ops import promserver; print(promserver.RULES)')
    printf 'global: {scrape_interval: 5s, evaluation_interval: 5s}\nrule_files: ["%s"]\nscrape_configs:\n  - job_name: gpu-node\n    static_configs: [{targets: ["127.0.0.1:%s"]}]\n' "$RULES" "$EXP_PORT" >"$RUN/prometheus.yml"
    nohup prometheus --config.file="$RUN/prometheus.yml" --storage.tsdb.path="$RUN/data" \
      --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn >"$RUN/prometheus.log" 2>&1 &
    echo $! >"$RUN/prometheus.pid"
    for _ in $(seq 50); do curl -sf "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1 && break; sleep 0.2; done
    echo "exporter:   http://127.0.0.1:$EXP_PORT/metrics"
    echo "prometheus: http://127.0.0.1:$PROM_PORT   (stop: $0 stop)"
    ;;
  stop)
    for name in prometheus exporter; do
      if [ -f "$RUN/$name.pid" ]; then kill "$(cat "$RUN/$name.pid")" 2>/dev/null || true; rm -f "$RUN/$name.pid"; fi
    done
    rm -rf "$RUN"; echo "stopped"
    ;;
  *) echo "usage: $0 start|stop"; exit 2 ;;
esac
