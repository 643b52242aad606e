"""helpers.core.procs: stopping what the book started, and naming the rank to blame on a timeout."""
import subprocess
import sys
import time

from helpers.core import procs


def test_stop_process_terminates_and_is_idempotent():
    p = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    procs.stop_process(p, timeout_s=10)
    assert p.poll() is not None
    procs.stop_process(p)                       # a second call is harmless
    procs.stop_process(None)


def test_timeout_message_blames_the_silent_rank_first():
    now = time.time()
    beats = {0: now, 1: now - 60, 2: now}
    blame, msg = procs.timeout_message(3, 30, got={0: 1}, beats=beats, stage={0: 2, 1: 1, 2: 1})
    assert blame == [1] and "stopped responding" in msg
    blame, msg = procs.timeout_message(2, 30, got={}, beats={0: 0, 1: 0}, stage={0: 0, 1: 1})
    assert blame == [0] and "never joined" in msg
    blame, msg = procs.timeout_message(2, 30, got={}, beats={0: 0, 1: 0}, stage={0: 1, 1: 1})
    assert blame == [0, 1] and "did not finish" in msg
