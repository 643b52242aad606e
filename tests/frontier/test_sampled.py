"""helpers.frontier.sampled: on a CPU the timing is plain and the record says there was no GPU clock."""
import torch

from helpers.frontier import sampled


def test_cpu_run_says_no_clock():
    t, info = sampled.time_sampled(lambda: sum(range(100)), torch.device("cpu"), warmup=0, repeats=2)
    assert t.repeats == 2 and t.clock == "perf_counter"
    assert info["sm_clock_MHz_median"] is None and "CPU run" in info["sampler_note"]
