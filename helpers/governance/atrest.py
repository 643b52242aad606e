"""Encryption at rest: a checkpoint sealed with AES-256-GCM, chunk by chunk, with its throughput measured (chapter 20).

AES-GCM is authenticated encryption: decryption fails (``InvalidTag``) if a single bit of ciphertext, nonce or
associated data changed. A whole multi-GB checkpoint cannot be one GCM message in practice (one call needs it all in
memory, and NIST SP 800-38D caps a message at 2^39 - 256 bits, about 64 GiB), so the file is cut into chunks, each
sealed with its own 96-bit nonce and with associated data binding (file id, chunk index, chunk count): a chunk moved,
dropped, duplicated or taken from another file fails to open. The naive version (one GCM call) is kept for the test.
"""
from __future__ import annotations

import os
import struct
from dataclasses import dataclass

CHUNK = 4 * 2**20
HEADER = struct.Struct(">16sQQ")      # file id, chunk index, chunk count (the associated data)


def new_key() -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM.generate_key(bit_length=256)


def seal_naive(key: bytes, data: bytes) -> bytes:
    """One GCM message: nonce || ciphertext+tag."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    nonce = os.urandom(12)
    return nonce + AESGCM(key).encrypt(nonce, data, None)


def open_naive(key: bytes, blob: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    return AESGCM(key).decrypt(blob[:12], blob[12:], None)


def seal(key: bytes, data: bytes, chunk: int = CHUNK, file_id: bytes | None = None) -> list[tuple[bytes, bytes]]:
    """Chunked: [(associated data, nonce || ciphertext+tag)] — the AD travels in the clear, authenticated."""
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    if chunk < 1:
        raise ValueError(f"chunk={chunk}: must be >= 1 byte")
    aead, fid = AESGCM(key), file_id or os.urandom(16)
    n = max(1, -(-len(data) // chunk))
    out = []
    for i in range(n):
        ad, nonce = HEADER.pack(fid, i, n), os.urandom(12)
        out.append((ad, nonce + aead.encrypt(nonce, data[i * chunk:(i + 1) * chunk], ad)))
    return out


def open_sealed(key: bytes, chunks: list[tuple[bytes, bytes]]) -> bytes:
    """Decrypt and check order and completeness; raises ValueError naming the first bad chunk."""
    from cryptography.exceptions import InvalidTag
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

    aead, parts, fid0 = AESGCM(key), [], None
    for pos, (ad, blob) in enumerate(chunks):
        fid, i, n = HEADER.unpack(ad)
        fid0 = fid0 or fid
        if n != len(chunks):
            raise ValueError(f"chunk {pos}: the file was sealed as {n} chunks but {len(chunks)} were given: "
                             "chunks dropped or added")
        if fid != fid0 or i != pos:
            raise ValueError(f"chunk {pos}: header says chunk {i} of file {fid.hex()[:8]}: reordered or from "
                             "another file")
        try:
            parts.append(aead.decrypt(blob[:12], blob[12:], ad))
        except InvalidTag:
            raise ValueError(f"chunk {pos}: authentication failed (ciphertext or header modified)") from None
    return b"".join(parts)


@dataclass(frozen=True)
class CryptoBench:
    operation: str
    size_bytes: int
    time_s: float
    bw_GBps: float


def bench(size_bytes: int = 64 * 2**20, repeats: int = 3) -> list[CryptoBench]:
    """Seal and open ``size_bytes`` of random data (a stand-in for a checkpoint shard) on this CPU."""
    from helpers.core import timing

    key, data = new_key(), os.urandom(size_bytes)
    sealed = seal(key, data)
    out = []
    for op, fn in (("seal", lambda: seal(key, data)), ("open", lambda: open_sealed(key, sealed))):
        t = timing.time_fn(fn, warmup=1, repeats=repeats)
        out.append(CryptoBench(op, size_bytes, t.median_s, size_bytes / t.median_s / 1e9))
    return out
