"""Worker functions for the launcher tests (importable, so spawn's child processes can load them)."""
import os
import time


def crash_on_one_hang_on_other(ctx):
    if ctx.rank == 1:
        raise ValueError("planted failure on rank 1")
    time.sleep(3600)  # rank 0 hangs: the launcher must kill it


def hang_on_rank(ctx, rank):
    if ctx.rank == rank:
        time.sleep(3600)
    return ctx.rank


def die_hard(ctx):
    if ctx.rank == 0:
        os._exit(7)  # no traceback: a segfault-like death
    time.sleep(3600)


def env_of(ctx):
    return {"rank": ctx.rank, "world": ctx.world_size, "backend": ctx.backend}
