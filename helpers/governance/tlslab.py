"""Encryption in transit: TLS and mutual TLS on a localhost server with the book's own CA (chapter 20).

``make_pki`` creates a certificate authority, a server certificate for 127.0.0.1 / localhost and a client certificate,
all with ``cryptography`` (EC P-256, valid one day) in a temporary folder. ``serve`` runs a one-thread TLS echo
server bound to 127.0.0.1 on a free port; with ``mutual=True`` it requires a client certificate signed by the CA
(``ssl.CERT_REQUIRED``). ``probe`` tries one connection and reports what happened. The server stops in ``finally``.
"""
from __future__ import annotations

import datetime as dt
import ipaddress
import socket
import ssl
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path


def _cert(subject_cn: str, issuer_cert, issuer_key, key, ca: bool = False, server: bool = False):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject_cn)])
    now = dt.datetime.now(dt.timezone.utc)
    b = (x509.CertificateBuilder().subject_name(name)
         .issuer_name(issuer_cert.subject if issuer_cert is not None else name)
         .public_key(key.public_key()).serial_number(x509.random_serial_number())
         .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + dt.timedelta(days=1))
         .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
    if server:
        b = b.add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                         x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
    if not ca:
        b = b.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH if server
                                                   else ExtendedKeyUsageOID.CLIENT_AUTH]), False)
    return b.sign(issuer_key or key, hashes.SHA256())


def make_pki(folder: str | Path, ca_name: str = "book-ca") -> dict[str, Path]:
    """CA, server and client key+certificate as PEM files in ``folder``; returns their paths."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    folder = Path(folder)
    keys = {n: ec.generate_private_key(ec.SECP256R1()) for n in ("ca", "server", "client")}
    ca = _cert(ca_name, None, None, keys["ca"], ca=True)
    certs = {"ca": ca, "server": _cert("localhost", ca, keys["ca"], keys["server"], server=True),
             "client": _cert("trainer-17", ca, keys["ca"], keys["client"])}
    paths = {}
    for n in certs:
        paths[f"{n}_cert"] = folder / f"{n}.crt"
        paths[f"{n}_cert"].write_bytes(certs[n].public_bytes(serialization.Encoding.PEM))
        paths[f"{n}_key"] = folder / f"{n}.key"
        paths[f"{n}_key"].write_bytes(keys[n].private_bytes(serialization.Encoding.PEM,
                                                             serialization.PrivateFormat.PKCS8,
                                                             serialization.NoEncryption()))
        paths[f"{n}_key"].chmod(0o600)
    return paths


@contextmanager
def serve(pki: dict[str, Path], mutual: bool = False, timeout_s: float = 10.0):
    """A TLS echo server on 127.0.0.1:<free port>; yields the port. Answers "hello <client CN or anonymous>"."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(pki["server_cert"], pki["server_key"])
    if mutual:
        ctx.verify_mode = ssl.CERT_REQUIRED
        ctx.load_verify_locations(pki["ca_cert"])
    sock = socket.create_server(("127.0.0.1", 0))
    sock.settimeout(0.2)
    stop = threading.Event()

    def loop():
        while not stop.is_set():
            try:
                conn, _ = sock.accept()
            except (TimeoutError, socket.timeout):
                continue
            except OSError:
                return
            conn.settimeout(timeout_s)
            try:
                with ctx.wrap_socket(conn, server_side=True) as tls:
                    peer = tls.getpeercert()
                    cn = dict(x[0] for x in peer["subject"])["commonName"] if peer else "anonymous"
                    tls.recv(64)
                    tls.sendall(f"hello {cn} over {tls.version()}".encode())
            except (ssl.SSLError, OSError):
                conn.close()

    th = threading.Thread(target=loop, daemon=True)
    th.start()
    try:
        yield sock.getsockname()[1]
    finally:
        stop.set()
        sock.close()
        th.join(timeout_s)


@dataclass(frozen=True)
class Probe:
    case: str
    connected: bool
    reply_or_error: str


def probe(case: str, port: int, ca_cert: Path | None, client: tuple[Path, Path] | None = None,
          timeout_s: float = 5.0) -> Probe:
    """One client connection: verify the server against ``ca_cert`` (None = the system CAs), optionally present a
    client certificate; returns what the server answered or the error class and message."""
    ctx = ssl.create_default_context(cafile=str(ca_cert) if ca_cert else None)
    if client:
        ctx.load_cert_chain(*client)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=timeout_s) as raw:
            with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                tls.sendall(b"hi")
                data = tls.recv(128)
                if not data:
                    return Probe(case, False, "server closed the connection")
                return Probe(case, True, data.decode())
    except (ssl.SSLError, ConnectionError, OSError) as e:
        msg = getattr(e, "reason", None) or str(e).split("(_ssl")[0]
        return Probe(case, False, f"{type(e).__name__}: {msg}")
