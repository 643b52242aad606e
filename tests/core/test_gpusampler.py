"""helpers.core.gpusampler: NVML sampling that degrades to an empty result with a reason."""
import pytest

from helpers.core import gpusampler


def test_no_gpu_gives_reason_not_error():
    with gpusampler.Sampler(interval_s=0.005) as s:
        pass
    sm = s.summary()
    assert set(sm) >= {"sm_clock_MHz_median", "power_W_median", "throttle_reasons", "samples", "sampler_note"}
    if sm["samples"] == 0:
        assert sm["sampler_note"] and sm["sm_clock_MHz_median"] is None


def test_reason_names():
    assert gpusampler.reason_names(0) == []
    assert gpusampler.reason_names(0x4 | 0x1) == ["gpu_idle", "sw_power_cap"]
    assert gpusampler.reason_names(0x400) == ["0x400"]
    with pytest.raises(ValueError, match="mask=-1"):
        gpusampler.reason_names(-1)
    with pytest.raises(ValueError, match="interval_s=0"):
        gpusampler.Sampler(interval_s=0)


def test_summary_of_recorded_samples():
    s = gpusampler.Sampler()
    s.samples = [gpusampler.Sample(0.0, 1980, 400.0, 50, 0x0), gpusampler.Sample(0.1, 1500, 700.0, 60, 0x4),
                 gpusampler.Sample(0.2, 1600, 690.0, 61, 0x4)]
    sm = s.summary()
    assert sm["sm_clock_MHz_median"] == 1600 and sm["sm_clock_MHz_min"] == 1500
    assert sm["power_W_max"] == 700.0 and sm["throttle_reasons"] == ["sw_power_cap"] and sm["samples"] == 3


def test_gemm_sustained_records_carry_sampler_fields():
    from helpers.compute import bench, gemm

    recs = gemm.measure(dtypes=("fp32",), shapes=((64, 64, 64),), device="cpu", budget_s=0.01, sustain_s=0.02)
    assert [r.method for r in recs] == ["mamf", "plain", "sustained"]
    s = recs[-1]
    assert s.calls_per_timing >= 1 and s.tflops == pytest.approx(s.flop / s.time_s / 1e12)
    assert s.sm_clock_MHz_median is None and "CPU run" in s.sampler_note
    rows = {r["what"]: r for r in bench.summary(recs)}
    assert "GEMM fp32 sustained" in rows and rows["GEMM fp32"]["sm_clock_MHz"] is None
    with pytest.raises(ValueError, match="sustain_s=-1"):
        gemm.measure(dtypes=("fp32",), shapes=((64, 64, 64),), device="cpu", sustain_s=-1)


class _Field:
    def __init__(self, ret, mw):
        self.nvmlReturn = ret
        self.value = type("V", (), {"uiVal": mw})()


class _FakeNvml:
    """NVML with the instantaneous power field (186) answering ``instant_ret`` and the ~1 s average at 111 W."""
    NVML_CLOCK_SM, NVML_TEMPERATURE_GPU = 0, 0

    def __init__(self, instant_ret):
        self.instant_ret = instant_ret

    def nvmlDeviceGetFieldValues(self, h, ids):
        assert ids == [186]
        return [_Field(self.instant_ret, 654_321)]

    def nvmlDeviceGetPowerUsage(self, h):
        return 111_000

    def nvmlDeviceGetClockInfo(self, h, which):
        return 1980

    def nvmlDeviceGetTemperature(self, h, which):
        return 50

    def nvmlDeviceGetCurrentClocksEventReasons(self, h):
        return 0


@pytest.mark.parametrize("ret, want_W, source", [(0, 654.321, "instant"), (3, 111.0, "average")])
def test_instant_power_field_preferred_over_the_one_second_average(ret, want_W, source):
    s = gpusampler.Sampler()
    s._nvml, s._handle = _FakeNvml(ret), object()
    s.samples = [s._read() for _ in range(3)]
    sm = s.summary()
    assert sm["power_W_median"] == pytest.approx(want_W) and sm["power_source"] == source
    # an averaged reading over a window shorter than ~1 s mixes in the idle around the run: not valid
    assert sm["power_valid"] is (source == "instant")
