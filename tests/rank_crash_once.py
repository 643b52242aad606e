"""A worker module that fails to load in the first rank that imports it, when ``BOOK_TEST_CRASH_ONCE`` names a flag
file: that rank dies before it can join the process group, and the others wait at the rendezvous for it (the
launcher must stop them at once and name the rank's error). Without the variable it is an ordinary module."""
import os

_flag = os.environ.get("BOOK_TEST_CRASH_ONCE")
if _flag:
    try:
        os.close(os.open(_flag, os.O_CREAT | os.O_EXCL | os.O_WRONLY))   # only the first importer crashes
    except FileExistsError:
        pass
    else:
        raise ImportError("planted import failure in one rank")


def rank_of(ctx):
    return ctx.rank
