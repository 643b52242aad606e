"""Xid and syslog parsing on real kernel logs, pandas against grep/sed/awk (helpers.ops.logs)."""
from pathlib import Path

import pytest

from helpers.ops import logs

REAL = Path(__file__).parents[1] / "data" / "real"
XID = REAL / "dmesg-xid"


@pytest.mark.parametrize("fname,expected", [
    ("tinygrad-6947-xid31.txt", {("0000:01:00", 31): 2}),
    ("pytorch-51382-xid43-31.txt", {("0000:3d:00", 43): 4, ("0000:db:00", 31): 3}),
    ("chia-gigahorse-301-xid31-62-45.txt", {("0000:0a:00", 31): 1, ("0000:0a:00", 62): 1, ("0000:0a:00", 45): 8}),
    ("open-gpu-kernel-modules-1150-xid45.txt", {("0000:97:00", 45): 1, ("0000:ba:00", 45): 2,
                                                 ("0000:dc:00", 45): 2, ("0000:ed:00", 45): 2}),
    ("nvsentinel-155-fallen-off-bus.txt", {("0000:b3:00", 79): 1}),
])
def test_xid_counts(fname, expected):
    s = logs.xid_summary(logs.xid_events((XID / fname).read_text()))
    assert {(r.pci, r.xid): r.events for r in s.itertuples()} == expected


@pytest.mark.parametrize("path", sorted(XID.glob("*.txt")), ids=lambda p: p.name)
def test_shell_pipeline_agrees_with_pandas_on_numbered_xids(path):
    sh = logs.shell_xid_counts(path)
    if sh is None:
        pytest.skip("grep/sed/awk not available")
    ev = logs.xid_events(path.read_text())
    py = logs.xid_summary(ev[~ev.inferred])
    assert {(r.pci, r.xid): r.events for r in sh.itertuples()} == {(r.pci, r.xid): r.events for r in py.itertuples()}


def test_fields_and_actions():
    ev = logs.xid_events((XID / "tinygrad-6947-xid31.txt").read_text())
    assert list(ev.pid) == [14292, 14566] and set(ev.process) == {"python"}
    assert ev.time.iloc[0] == "22859.081860" and set(ev.action) == {"restart_job"}
    ev = logs.xid_events((XID / "pytorch-51382-xid43-31.txt").read_text())
    assert ev.time.iloc[0] == "Wed Jan 27 23:04:35 2021"
    ev = logs.xid_events((XID / "chia-gigahorse-301-xid31-62-45.txt").read_text())
    assert ev.pid.isna().sum() == 9                      # pid='<unknown>'
    ev = logs.xid_events((XID / "nvsentinel-155-fallen-off-bus.txt").read_text())
    assert ev.inferred.all() and set(ev.action) == {"drain_rma"}


def test_unknown_xid_is_not_guessed():
    ev = logs.xid_events("[ 1.0] NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed\n")
    assert ev.name.iloc[0].startswith("not in the book's table") and ev.action.iloc[0] == "inspect"


def test_syslog_real():
    df = logs.parse_syslog((REAL / "syslog" / "gpud-1209-journalctl-k.txt").read_text())
    assert len(df) == 9 and df.attrs["unparsed"] == 0
    assert df.program.value_counts().to_dict() == {"systemd": 5, "kernel": 4}
    assert (df[df.program == "systemd"].pid == 1).all()
    df = logs.parse_syslog((REAL / "syslog" / "open-gpu-kernel-modules-1151-rm-init-failed.txt").read_text())
    assert (df.host == "fedora").all() and df.message.str.contains("rm_init_adapter failed").sum() == 3


def test_only_ascii_digits_make_an_xid():
    """Issue 35: '٧٩' (Arabic-Indic 79) was read as Xid 79 and the node drained; a look-alike is no Xid."""
    for digits in ("\u0667\u0669", "\uff17\uff19", "\u0967\u096f"):       # Arabic-Indic, fullwidth, Devanagari
        line = f"[ 1.0] NVRM: Xid (PCI:0000:01:00): {digits}, pid=1, name=x\n"
        assert logs.xid_events(line).empty
    ev = logs.xid_events("[ 1.0] NVRM: Xid (PCI:0000:01:00): 79, pid=\u0661\u0662, name=x\n")
    assert list(ev.xid) == [79] and ev.pid.isna().all()             # the pid in look-alike digits is not read
    df = logs.parse_syslog("Jan \u0661\u0662 10:00:00 h kernel[\u0663]: x\n")
    assert df.empty and df.attrs["unparsed"] == 1                    # counted as unparsed, not read
