"""Fake NVML and torch modules for detection tests: what a machine *would* answer, without the machine."""
from types import SimpleNamespace


class NVMLError(Exception):
    pass


class NVMLError_NotSupported(NVMLError):
    pass


class FakeNVML:
    """A pynvml look-alike. ``not_supported`` names fields that raise NotSupported (as on virtualised GPUs)."""
    NVMLError = NVMLError
    NVML_CLOCK_SM, NVML_CLOCK_MEM = 1, 2
    NVML_NVLINK_MAX_LINKS = 18

    def __init__(self, n=8, name="NVIDIA H100 80GB HBM3", nvlinks=18, not_supported=()):
        self.n, self.name, self.nvlinks, self.ns = n, name, nvlinks, set(not_supported)

    def _guard(self, field):
        if field in self.ns:
            raise NVMLError_NotSupported()

    def nvmlSystemGetDriverVersion(self):
        return "580.159.03"

    def nvmlSystemGetCudaDriverVersion_v2(self):
        return 13000

    def nvmlDeviceGetCount(self):
        return self.n

    def nvmlDeviceGetHandleByIndex(self, i):
        return i

    def nvmlDeviceGetName(self, h):
        return self.name

    def nvmlDeviceGetUUID(self, h):
        return f"GPU-fake-{h}"

    def nvmlDeviceGetCudaComputeCapability(self, h):
        return (9, 0)

    def nvmlDeviceGetMemoryInfo(self, h):
        return SimpleNamespace(total=80 * 2**30)

    def nvmlDeviceGetMaxClockInfo(self, h, which):
        self._guard("clocks")
        return 1980 if which == self.NVML_CLOCK_SM else 2619

    def nvmlDeviceGetPowerManagementLimit(self, h):
        self._guard("power")
        return 700_000

    def nvmlDeviceGetMigMode(self, h):
        self._guard("mig")
        return (0, 0)

    def nvmlDeviceGetPciInfo(self, h):
        return SimpleNamespace(busId=f"00000000:{0x18 + h:02X}:00.0")

    def nvmlDeviceGetCurrPcieLinkGeneration(self, h):
        self._guard("pcie")
        return 5

    def nvmlDeviceGetCurrPcieLinkWidth(self, h):
        self._guard("pcie")
        return 16

    def nvmlDeviceGetNvLinkState(self, h, link):
        self._guard("nvlink")
        return 1 if link < self.nvlinks else 0


def fake_torch(n_gpu=0, name="NVIDIA H100 80GB HBM3", cuda="13.0"):
    """A torch look-alike: a CPU build (n_gpu=0, cuda=None) or a CUDA build seeing ``n_gpu`` GPUs."""
    props = SimpleNamespace(name=name, major=9, minor=0, multi_processor_count=132, total_memory=80 * 2**30)
    cuda_ns = SimpleNamespace(is_available=lambda: n_gpu > 0, device_count=lambda: n_gpu,
                              get_device_properties=lambda i: props,
                              nccl=SimpleNamespace(version=lambda: (2, 28, 3)))
    return SimpleNamespace(__version__="2.11.0+cu130" if cuda else "2.13.0+cpu",
                           version=SimpleNamespace(cuda=cuda), cuda=cuda_ns)
