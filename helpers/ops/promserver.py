"""A real Prometheus server (Debian's ``prometheus``) started on 127.0.0.1 and a free port, scraping the book's
exporter, evaluating the book's alert rules, queried over its HTTP API, and stopped when the block ends (chapter 12).

    from helpers.ops import exporter, promserver
    ex = exporter.Exporter(simulated_gpus=1)
    with ex.serve() as url, promserver.running([url]) as prom:
        prom.wait_for_targets()
        prom.query("DCGM_FI_DEV_GPU_TEMP")         # → [{"metric": {...}, "value": [t, "30"]}]
    python -m helpers prom check                   # promtool check rules + test rules on the book's alerts
    scripts/services/prometheus.sh start|stop      # the same server for a shell session

Everything lives in a temporary folder (config, TSDB, log) removed on exit; the process is stopped by its PID in
``finally`` (SIGTERM, then SIGKILL after a timeout), so no server outlives the block, also when a test fails.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse
import urllib.request
from pathlib import Path

from helpers.core import launch, procs

DATA = Path(__file__).parent / "data"
RULES = DATA / "alerts.yml"
RULES_TEST = DATA / "alerts_test.yml"


def find(tool: str = "prometheus") -> str | None:
    return shutil.which(tool)


def config(targets: list[str], rules: Path | None = RULES, interval_s: float = 1.0) -> str:
    """A minimal prometheus.yml scraping ``targets`` (URLs of /metrics) as job "gpu-node"."""
    hosts = [urllib.parse.urlparse(t).netloc for t in targets]
    if not hosts or any(not h for h in hosts):
        raise ValueError(f"targets {targets!r}: give URLs such as http://127.0.0.1:9400/metrics")
    doc = {"global": {"scrape_interval": f"{interval_s:g}s", "evaluation_interval": f"{interval_s:g}s"},
           "scrape_configs": [{"job_name": "gpu-node", "static_configs": [{"targets": hosts}]}]}
    if rules is not None:
        doc["rule_files"] = [str(rules)]
    return json.dumps(doc)                       # JSON is YAML


class Prometheus:
    def __init__(self, url: str, proc: subprocess.Popen, log: Path):
        self.url, self.proc, self.log = url, proc, log

    def api(self, path: str, **params) -> dict:
        q = f"{self.url}/api/v1/{path}" + (f"?{urllib.parse.urlencode(params)}" if params else "")
        with urllib.request.urlopen(q, timeout=10) as r:
            body = json.loads(r.read())
        if body.get("status") != "success":
            raise RuntimeError(f"Prometheus {path}: {body}")
        return body["data"]

    def query(self, promql: str) -> list[dict]:
        """An instant query; raises on bad PromQL (Prometheus answers HTTP 400 with the parse error)."""
        try:
            return self.api("query", query=promql)["result"]
        except urllib.error.HTTPError as e:
            raise ValueError(f"PromQL {promql!r}: {json.loads(e.read()).get('error')}") from None

    def wait_for_targets(self, timeout_s: float = 20.0) -> list[dict]:
        """Until every target has been scraped successfully once (health "up")."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            active = self.api("targets")["activeTargets"]
            if active and all(t["health"] == "up" for t in active):
                return active
            time.sleep(0.2)
        raise TimeoutError(f"targets not up after {timeout_s} s: {self.api('targets')['activeTargets']}")

    def wait_for_alert(self, name: str, timeout_s: float = 20.0) -> dict:
        """Until alert ``name`` is firing; returns it."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for a in self.api("alerts")["alerts"]:
                if a["labels"].get("alertname") == name and a["state"] == "firing":
                    return a
            time.sleep(0.2)
        raise TimeoutError(f"alert {name} not firing after {timeout_s} s; alerts: {self.api('alerts')['alerts']}")


@contextlib.contextmanager
def running(targets: list[str], rules: Path | None = RULES, interval_s: float = 1.0, timeout_s: float = 20.0):
    """Start Prometheus on 127.0.0.1 (free port), yield a :class:`Prometheus`, stop it and delete its files."""
    binary = find()
    if binary is None:
        raise FileNotFoundError("prometheus not installed (Debian: apt-get install --no-install-recommends "
                                "prometheus); the chapter shows the recorded output instead")
    tmp = Path(tempfile.mkdtemp(prefix="prometheus-"))
    port = launch.free_port()
    (tmp / "prometheus.yml").write_text(config(targets, rules, interval_s))
    log = tmp / "prometheus.log"
    proc = None
    try:
        with open(log, "w") as logf:
            proc = subprocess.Popen([binary, f"--config.file={tmp / 'prometheus.yml'}",
                                     f"--storage.tsdb.path={tmp / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                                     "--web.enable-lifecycle", "--log.level=warn"],
                                    stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                    start_new_session=True)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + timeout_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"prometheus exited with {proc.returncode}: {log.read_text()[-800:]}")
            try:
                with urllib.request.urlopen(f"{url}/-/ready", timeout=1) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"prometheus not ready after {timeout_s} s: {log.read_text()[-800:]}")
            time.sleep(0.1)
        yield Prometheus(url, proc, log)
    finally:
        procs.stop_process(proc, timeout_s=10)
        shutil.rmtree(tmp, ignore_errors=True)


# promtool checks the book's rules in well under a second; past this it hangs (a broken install, a wrapper that
# waits on something) and is killed with its process group: one line naming the limit, exit 1 (inputs.ProgramFailed)
PROMTOOL_TIMEOUT_S = 20.0


def promtool(*args: str, timeout_s: float | None = None) -> tuple[int, str]:
    """Run promtool (``check rules``, ``test rules`` …) with a time limit (:data:`PROMTOOL_TIMEOUT_S`); (exit code,
    output). A hung promtool is killed and ``inputs.ProgramFailed`` says so; nothing it started stays behind."""
    tool = find("promtool")
    if tool is None:
        raise FileNotFoundError("promtool not installed (Debian package prometheus)")
    from helpers.core import inputs

    limit = PROMTOOL_TIMEOUT_S if timeout_s is None else timeout_s
    p = inputs.run_program([tool, *args], timeout_s=limit, cwd=DATA, max_bytes=16 * 2**20)
    return p.returncode, (p.stdout + p.stderr).strip()


def check_rules() -> list[tuple[str, int, str]]:
    """``promtool check rules`` and ``promtool test rules`` on the book's alert rules."""
    return [("check rules", *promtool("check", "rules", str(RULES))),
            ("test rules", *promtool("test", "rules", str(RULES_TEST)))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m helpers prom", description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("check", help="promtool check rules + test rules on helpers/ops/data/alerts.yml")
    args = ap.parse_args(argv)
    if args.cmd == "check":
        worst = 0
        for name, rc, out in check_rules():
            print(f"promtool {name}: {'ok' if rc == 0 else 'FAILED'}\n{out}")
            worst = max(worst, rc)
        return 1 if worst else 0
    return 0


if __name__ == "__main__":
    from helpers.core import cli

    sys.exit(cli.run(main))
