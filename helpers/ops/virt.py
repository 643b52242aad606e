"""PCIe passthrough: IOMMU groups read from real ``lspci``/sysfs output, and the libvirt domain of a guest that owns
a GPU end to end, generated and validated against libvirt's own schema (chapter 05, "A tenant owns a GPU").

A device can be handed to a guest (VFIO) only together with every other device of its IOMMU group, because the IOMMU
cannot isolate DMA between them. PCI bridges in the group stay with the host (``vfio-pci`` ignores them). So a GPU is
*passable* when its group holds only functions of the same card (GPU, its audio, USB, UCSI) and bridges.

    from helpers.ops import virt
    groups = virt.parse_iommu_groups(open("groups.txt").read())   # output of the usual sysfs loop (see below)
    virt.passthrough_check(groups, "01:00.0")                      # → Check(passable=True, devices=[...], ...)
    xml = virt.domain_xml("tenant-a", ["0000:01:00.0", "0000:01:00.1"], memory_GiB=64, vcpus=16)
    virt.validate_domain(xml)                                      # virt-xml-validate (libvirt's RNG schema)

The loop that prints the groups (as in most passthrough guides)::

    for g in $(find /sys/kernel/iommu_groups/* -maxdepth 0 -type d | sort -V); do
      echo "IOMMU Group ${g##*/}:"; for d in $g/devices/*; do echo -e "\\t$(lspci -nns ${d##*/})"; done; done
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class PCIDevice:
    group: int
    bdf: str              # bus:device.function, e.g. "01:00.0" (domain 0000 implied when absent)
    class_name: str       # "VGA compatible controller"
    class_code: str       # "0300"
    description: str
    vendor_device: str    # "10de:2482"

    @property
    def is_bridge(self) -> bool:
        return self.class_code.startswith("06")      # 0600 host bridge, 0604 PCI bridge, 0601 ISA bridge …

    @property
    def is_gpu(self) -> bool:
        return self.class_code in ("0300", "0302") and self.vendor_device.startswith("10de:")

    @property
    def slot(self) -> str:
        return self.bdf.rsplit(".", 1)[0]             # "01:00": all functions of one card


@dataclass(frozen=True)
class Check:
    gpu: str
    group: int
    passable: bool
    devices_to_guest: tuple[str, ...]
    host_bridges: tuple[str, ...]
    blockers: tuple[str, ...]
    reason: str


_DEV = re.compile(r"(?:(?P<dom>[0-9a-f]{4}):)?(?P<bdf>[0-9a-f]{2}:[0-9a-f]{2}\.[0-7])\s+(?P<cls>[^\[]+?)\s*\[(?P<code>[0-9a-f]{4})\]:?"
                  r"\s*(?P<desc>.*?)\s*\[(?P<vd>[0-9a-f]{4}:[0-9a-f]{4})\](?:\s*\(rev [0-9a-f]+\))?\s*$", re.I)
_GROUP_HEAD = re.compile(r"^IOMMU Group\s+([0-9]+)\s*:?\s*(.*)$")


def parse_iommu_groups(text: str) -> dict[int, list[PCIDevice]]:
    """Groups from either common form: ``IOMMU Group 1:`` followed by indented ``lspci -nns`` lines, or one line
    per device ``IOMMU Group 1 01:00.0 VGA compatible controller [0300]: …``."""
    groups: dict[int, list[PCIDevice]] = {}
    current = None
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line:
            continue
        head = _GROUP_HEAD.match(line)
        if head:
            current = int(head.group(1))
            groups.setdefault(current, [])
            line = head.group(2).strip()
            if not line:
                continue
        if current is None:
            raise ValueError(f"line {n}: a device before any 'IOMMU Group N' header: {raw!r}")
        m = _DEV.match(line)
        if not m:
            raise ValueError(f"line {n}: not an lspci -nns device line: {raw!r}")
        groups[current].append(PCIDevice(current, m["bdf"].lower(), m["cls"].strip(), m["code"].lower(),
                                         m["desc"].strip(), m["vd"].lower()))
    if not groups:
        raise ValueError("no 'IOMMU Group' lines found: give the output of the sysfs loop in this module's docstring")
    return groups


def read_sysfs_groups(root: str = "/sys/kernel/iommu_groups") -> dict[int, list[str]] | None:
    """This machine's groups (group → PCI addresses), or None when the IOMMU is off or absent (a container, a VM)."""
    base = Path(root)
    if not base.is_dir() or not any(base.iterdir()):
        return None
    return {int(g.name): sorted(d.name for d in (g / "devices").iterdir()) for g in base.iterdir() if g.name.isdigit()}


def passthrough_check(groups: dict[int, list[PCIDevice]], gpu_bdf: str) -> Check:
    """Can the GPU at ``gpu_bdf`` be handed to a guest, and which devices must go with it?"""
    gpu_bdf = gpu_bdf.lower().removeprefix("0000:")
    for gid, devs in groups.items():
        gpu = next((d for d in devs if d.bdf == gpu_bdf), None)
        if gpu is None:
            continue
        bridges = tuple(d.bdf for d in devs if d.is_bridge)
        same_card = tuple(d.bdf for d in devs if not d.is_bridge and d.slot == gpu.slot)
        blockers = tuple(f"{d.bdf} {d.class_name}" for d in devs if not d.is_bridge and d.slot != gpu.slot)
        if blockers:
            why = (f"group {gid} also holds {len(blockers)} device(s) of other cards; they would have to leave the "
                   "host too (or an ACS override / another slot is needed)")
        else:
            why = f"group {gid} holds only the card's {len(same_card)} function(s)" + (
                f" and {len(bridges)} bridge(s) that stay with the host" if bridges else "")
        return Check(gpu_bdf, gid, not blockers, same_card, bridges, blockers, why)
    raise ValueError(f"no device {gpu_bdf!r} in the groups; present: {sorted(d.bdf for v in groups.values() for d in v)}")


def domain_xml(name: str, pci_addresses: list[str], memory_GiB: int = 16, vcpus: int = 8,
               disk: str = "/var/lib/libvirt/images/tenant.qcow2") -> str:
    """A KVM guest (q35, OVMF/UEFI, host CPU, hugepages) that owns the listed PCI functions through VFIO."""
    if not re.fullmatch(r"[A-Za-z0-9_.-]{1,64}", name):
        raise ValueError(f"domain name {name!r}: use letters, digits, '_', '.', '-' (1–64 characters)")
    if memory_GiB < 1 or vcpus < 1:
        raise ValueError(f"memory_GiB={memory_GiB}, vcpus={vcpus}: both must be ≥ 1")
    dom = ET.Element("domain", type="kvm")
    ET.SubElement(dom, "name").text = name
    ET.SubElement(dom, "memory", unit="GiB").text = str(memory_GiB)
    mb = ET.SubElement(dom, "memoryBacking")
    ET.SubElement(mb, "hugepages")
    ET.SubElement(dom, "vcpu", placement="static").text = str(vcpus)
    os_ = ET.SubElement(dom, "os", firmware="efi")
    ET.SubElement(os_, "type", arch="x86_64", machine="q35").text = "hvm"
    feats = ET.SubElement(dom, "features")
    ET.SubElement(feats, "acpi")
    ET.SubElement(feats, "apic")
    ET.SubElement(feats, "ioapic", driver="kvm")
    ET.SubElement(dom, "cpu", mode="host-passthrough", check="none", migratable="off")
    devs = ET.SubElement(dom, "devices")
    d = ET.SubElement(devs, "disk", type="file", device="disk")
    ET.SubElement(d, "driver", name="qemu", type="qcow2")
    ET.SubElement(d, "source", file=disk)
    ET.SubElement(d, "target", dev="vda", bus="virtio")
    for addr in pci_addresses:
        m = re.fullmatch(r"(?:([0-9a-f]{4}):)?([0-9a-f]{2}):([0-9a-f]{2})\.([0-7])", addr.lower())
        if not m:
            raise ValueError(f"PCI address {addr!r}: give domain:bus:slot.function, e.g. 0000:01:00.0")
        hd = ET.SubElement(devs, "hostdev", mode="subsystem", type="pci", managed="yes")
        ET.SubElement(hd, "driver", name="vfio")
        src = ET.SubElement(hd, "source")
        ET.SubElement(src, "address", domain=f"0x{m[1] or '0000'}", bus=f"0x{m[2]}", slot=f"0x{m[3]}",
                      function=f"0x{m[4]}")
    ET.SubElement(devs, "memballoon", model="none")      # a balloon would take pages the GPU DMAs into
    ET.indent(dom)
    return ET.tostring(dom, encoding="unicode") + "\n"


def validate_domain(xml: str, timeout_s: float = 30.0) -> tuple[bool | None, str]:
    """Validate a domain against libvirt's RNG schema with ``virt-xml-validate``: (True/False, message), or
    (None, why) when libvirt's tools are not installed (Debian: libvirt-clients)."""
    tool = shutil.which("virt-xml-validate")
    if tool is None:
        return None, "virt-xml-validate not found (apt-get install libvirt-clients); schema check skipped"
    fd, path = tempfile.mkstemp(suffix=".xml", prefix="domain-")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(xml)
        p = subprocess.run([tool, path, "domain"], capture_output=True, text=True, timeout=timeout_s)
        msg = (p.stdout + p.stderr).strip().replace(path, "<domain.xml>")
        return p.returncode == 0, msg
    finally:
        os.unlink(path)
