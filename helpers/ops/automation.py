"""Ansible from Python: the book's playbook (``data/ansible/site.yml``, role ``node_health``) run against localhost
with ansible-core, its outcome read from Ansible's JSON callback, and idempotency checked by running it twice
(chapter 27).

Ansible writes to ``~/.ansible`` unless told otherwise; every folder it uses here (home, temp, facts cache) is a
temporary one removed afterwards, and the inventory is written per run, so nothing of the reader's is touched.

    from helpers.ops import automation
    first = automation.run_playbook(report_dir=tmp, extra_vars={"expect_gpus": 0})
    second = automation.run_playbook(report_dir=tmp, extra_vars={"expect_gpus": 0})
    first.changed, second.changed         # e.g. 2 then 0: the second run changes nothing
    ansible-playbook -i inventory.ini helpers/ops/data/ansible/site.yml      # the same on a real cluster
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

PLAYBOOK = Path(__file__).parent / "data" / "ansible" / "site.yml"


@dataclass(frozen=True)
class PlaybookRun:
    ok: int
    changed: int
    failed: int
    skipped: int
    rc: int
    tasks: tuple[tuple[str, str], ...]      # (task name, "ok" / "changed" / "failed" / "skipped")
    message: str


_TASK = re.compile(r"^TASK \[(?P<name>.*)\] \*+$")
_STATE = re.compile(r"^(?P<state>ok|changed|failed|fatal|skipping): \[(?P<host>[^\]]+)\]")
_RECAP = re.compile(r"^(?P<host>\S+)\s*:\s*ok=(?P<ok>[0-9]+)\s+changed=(?P<changed>[0-9]+)\s+unreachable=[0-9]+\s+"
                    r"failed=(?P<failed>[0-9]+)\s+skipped=(?P<skipped>[0-9]+)")


def _failure_message(line: str) -> str:
    """The ``msg`` (or stderr) of a failed task's ``=> {json}``, else the line itself."""
    body = line.split("=>", 1)[-1].strip()
    try:
        d = json.loads(body)
    except ValueError:
        return body[:300]
    return str(d.get("msg") or d.get("stderr") or body)[:300]


def parse_output(stdout: str, rc: int = 0, stderr: str = "") -> PlaybookRun:
    """Ansible's default output: each ``TASK [...]`` header and the state line under it, then the PLAY RECAP."""
    tasks, recap, current, messages = [], None, None, []
    for line in stdout.splitlines():
        if m := _TASK.match(line):
            current = m["name"]
        elif (m := _STATE.match(line)) and current is not None:
            state = {"fatal": "failed", "skipping": "skipped"}.get(m["state"], m["state"])
            tasks.append((current, state))
            if state == "failed":
                messages.append(_failure_message(line))
            current = None
        elif m := _RECAP.match(line):
            recap = m
    if recap is None:
        raise RuntimeError(f"ansible-playbook printed no PLAY RECAP (rc {rc}): {(stderr or stdout)[-800:]}")
    return PlaybookRun(int(recap["ok"]), int(recap["changed"]), int(recap["failed"]), int(recap["skipped"]), rc,
                       tuple(tasks), "; ".join(messages))


def available() -> tuple[bool, str]:
    exe = shutil.which("ansible-playbook") or str(Path(sys.executable).with_name("ansible-playbook"))
    return (Path(exe).exists(), exe if Path(exe).exists() else
            "ansible-playbook not found (pip install ansible-core==2.19.*); the chapter shows the recorded output")


def run_playbook(report_dir: str | Path, extra_vars: dict | None = None, playbook: Path = PLAYBOOK,
                 check: bool = False, timeout_s: float = 180.0) -> PlaybookRun:
    """Run ``playbook`` on localhost (``ansible_connection=local``, this Python) and summarise the JSON callback."""
    ok, exe = available()
    if not ok:
        raise FileNotFoundError(exe)
    tmp = Path(tempfile.mkdtemp(prefix="ansible-"))
    try:
        inv = tmp / "inventory.ini"
        inv.write_text(f"[gpu_nodes]\nlocalhost ansible_connection=local ansible_python_interpreter={sys.executable}\n")
        vars_ = {"python": sys.executable, "report_dir": str(Path(report_dir).resolve()), **(extra_vars or {})}
        if vars_.get("kernel_log"):                        # modules run in a temporary folder: paths must be absolute
            vars_["kernel_log"] = str(Path(vars_["kernel_log"]).resolve())
        env = {**os.environ, "ANSIBLE_HOME": str(tmp / "home"), "ANSIBLE_LOCAL_TEMP": str(tmp / "local"),
               "ANSIBLE_REMOTE_TEMP": str(tmp / "remote"), "ANSIBLE_STDOUT_CALLBACK": "default",
               "ANSIBLE_RETRY_FILES_ENABLED": "0",
               "ANSIBLE_NOCOLOR": "1", "ANSIBLE_HOST_KEY_CHECKING": "0", "ANSIBLE_GATHER_SUBSET": "!all,min",
               "ANSIBLE_LOCALHOST_WARNING": "0", "ANSIBLE_INVENTORY_UNPARSED_WARNING": "0"}
        cmd = [exe, "-i", str(inv), str(playbook), "-e", json.dumps(vars_)] + (["--check"] if check else [])
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout_s,
                           cwd=Path(__file__).resolve().parents[2])
        return parse_output(p.stdout, p.returncode, p.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


TERRAFORM_DIR = Path(__file__).parent / "data" / "terraform"


def terraform_plan(variables: dict | None = None, timeout_s: float = 120.0) -> dict:
    """``init``, ``validate`` and ``plan`` the book's provider-free configuration with Terraform or OpenTofu
    (whichever is installed), offline, in a temporary copy; returns the planned outputs. Raises FileNotFoundError
    when neither tool is installed, ValueError when Terraform rejects the variables (e.g. its validation block)."""
    exe = shutil.which("tofu") or shutil.which("terraform")
    if exe is None:
        raise FileNotFoundError("neither OpenTofu (tofu) nor Terraform is installed; the chapter shows the plan text")
    tmp = Path(tempfile.mkdtemp(prefix="tf-"))
    try:
        shutil.copy(TERRAFORM_DIR / "main.tf", tmp / "main.tf")
        (tmp / "cli.tfrc").write_text("")
        env = {**os.environ, "TF_CLI_CONFIG_FILE": str(tmp / "cli.tfrc"), "TF_IN_AUTOMATION": "1",
               "TF_DATA_DIR": str(tmp / ".terraform"), "CHECKPOINT_DISABLE": "1"}
        args = [f"-var={k}={v}" for k, v in (variables or {}).items()]

        def run(*cmd: str) -> str:
            p = subprocess.run([exe, *cmd], cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout_s)
            if p.returncode != 0:
                msg = " ".join((p.stderr or p.stdout).split())[-600:]
                raise ValueError(f"{Path(exe).name} {cmd[0]} failed: {msg}")
            return p.stdout

        run("init", "-input=false", "-no-color", "-backend=false")
        valid = json.loads(run("validate", "-json", "-no-color"))
        run("plan", "-input=false", "-no-color", "-out=plan.bin", *args)
        plan = json.loads(run("show", "-json", "plan.bin"))
        outputs = {k: v.get("value") for k, v in plan.get("planned_values", {}).get("outputs", {}).items()}
        return {"tool": Path(exe).name, "valid": valid.get("valid", False),
                "resources": len(plan.get("resource_changes", [])), "outputs": outputs}
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
