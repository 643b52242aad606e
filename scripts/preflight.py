"""The programs outside Python that `make test` calls, checked before anything runs.

    python scripts/preflight.py            # lists what is missing (a note: those tests then skip, saying why)
    CI=true python scripts/preflight.py    # fails naming every missing program and the Debian package to install

Each program is here because a test or a chapter's lab runs it for real on 127.0.0.1; without it that test skips
and that lab takes its recorded path. On a laptop that is fine; in CI a skipped test is a test that did not run, so
CI fails up front instead (`.ci/run` installs them all on a bare Debian machine).
"""
from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

# program -> (Debian package, who needs it)
PROGRAMS: dict[str, tuple[str, str]] = {
    "fio": ("fio", "ch04/ch23 IO labs, tests/storage/test_fio.py"),
    "iperf3": ("iperf3", "ch15 loopback lab, tests/network/test_iperf.py"),
    "prometheus": ("prometheus", "ch12 scrape lab, tests/ops/test_prom.py"),
    "promtool": ("prometheus", "ch12 alert-rule tests, tests/ops/test_prom.py"),
    "munged": ("munge", "ch13 Slurm cluster on localhost, tests/ops/test_slurm.py"),
    "slurmctld": ("slurm-wlm", "ch13 Slurm cluster on localhost, tests/ops/test_slurm.py"),
    "slurmd": ("slurm-wlm", "ch13 Slurm cluster on localhost, tests/ops/test_slurm.py"),
    "sbatch": ("slurm-wlm", "ch13 Slurm cluster on localhost, tests/ops/test_slurm.py"),
    "ipmitool": ("ipmitool", "ch12 BMC lab"),
    "virt-xml-validate": ("libvirt-clients", "ch05 domain XML against libvirt's schema, tests/ops/test_virt.py"),
    "xmllint": ("libxml2-utils", "virt-xml-validate runs it, tests/ops/test_virt.py"),
    "chromium": ("chromium", "make browsercheck"),
}


def find(program: str) -> str | None:
    """On PATH, or in /usr/sbin (daemons, not on a normal user's PATH)."""
    return shutil.which(program) or (f"/usr/sbin/{program}" if Path(f"/usr/sbin/{program}").exists() else None)


def missing() -> dict[str, tuple[str, str]]:
    return {p: v for p, v in PROGRAMS.items() if find(p) is None}


def main() -> int:
    gone = missing()
    strict = os.environ.get("CI", "").lower() in ("1", "true", "yes")
    if not gone:
        print(f"preflight: all {len(PROGRAMS)} external programs found")
        return 0
    for p, (pkg, who) in gone.items():
        print(f"preflight: {p} not found (Debian package {pkg}; needed by {who})", file=sys.stderr)
    pkgs = " ".join(sorted({pkg for pkg, _ in gone.values()}))
    if strict:
        print(f"preflight: CI=true, so this fails: apt-get install -y --no-install-recommends {pkgs}  "
              "(.ci/run does this)", file=sys.stderr)
        return 1
    print(f"preflight: the tests that need them will skip, saying why (apt-get install {pkgs} to run them)",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
