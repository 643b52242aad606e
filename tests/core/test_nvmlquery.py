"""helpers.core.nvmlquery: one NVML field at a time, so a NotSupported field is named instead of raised."""
from types import SimpleNamespace

from helpers.core import nvmlquery


class NVMLError_NotSupported(Exception):
    pass


def _fake_nvml():
    def unsupported(*_):
        raise NVMLError_NotSupported()

    mem = SimpleNamespace(total=141 * 2**30)
    return SimpleNamespace(
        nvmlSystemGetDriverVersion=lambda: b"570.86", nvmlSystemGetCudaDriverVersion_v2=lambda: 12080,
        nvmlDeviceGetCount=lambda: 1, nvmlDeviceGetHandleByIndex=lambda i: f"h{i}",
        nvmlDeviceGetName=lambda h: b"NVIDIA H200", nvmlDeviceGetUUID=lambda h: "GPU-1",
        nvmlDeviceGetCudaComputeCapability=lambda h: (9, 0), nvmlDeviceGetMemoryInfo=lambda h: mem,
        NVML_CLOCK_SM=0, NVML_CLOCK_MEM=1, nvmlDeviceGetMaxClockInfo=lambda h, c: 1980 if c == 0 else 2619,
        nvmlDeviceGetPowerManagementLimit=unsupported, nvmlDeviceGetMigMode=lambda h: (0, 0),
        nvmlDeviceGetPciInfo=lambda h: SimpleNamespace(busId=b"00000000:19:00.0"),
        nvmlDeviceGetCurrPcieLinkGeneration=lambda h: 5, nvmlDeviceGetCurrPcieLinkWidth=lambda h: 16,
        NVML_NVLINK_MAX_LINKS=18, nvmlDeviceGetNvLinkState=lambda h, link: 1)


def test_fields_are_asked_one_by_one():
    gpus, sysinfo = nvmlquery.nvml_gpus(_fake_nvml())
    assert sysinfo == {"driver_version": "570.86", "cuda_driver_version": "12.8"}
    g = gpus[0]
    assert g["name"] == "NVIDIA H200" and g["compute_capability"] == "9.0" and g["nvlink_links_active"] == 18
    assert g["mig_mode"] == "disabled" and g["pcie_gen"] == 5
    assert g["_unavailable"] == {"power_limit_W": "NotSupported"}       # named, not raised
    assert nvmlquery.ask(int, "x")[1] == "ValueError" and nvmlquery.text(b"a") == "a"


def test_load_nvml_returns_the_module_or_a_reason():
    mod, why = nvmlquery.load_nvml()
    assert (mod is None) == (why is not None)
