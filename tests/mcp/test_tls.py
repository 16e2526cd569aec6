"""HTTP server connections verify TLS, with one context built once per process."""

from __future__ import annotations

import ssl
import threading

import pytest

from mooring.mcp import transport
from mooring.mcp.transport import tls_context


def test_connections_verify_certificates_and_hostnames_with_one_shared_context() -> None:
    context = tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname
    assert tls_context() is context  # a reconnect does not load the certificates again


def test_connections_opened_side_by_side_load_the_certificates_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Ten servers connect at once at launch, each building its client on a worker thread.
    monkeypatch.setattr(transport, "_tls", None)
    start = threading.Barrier(8)
    got: list[ssl.SSLContext] = []

    def connect() -> None:
        start.wait()
        got.append(tls_context())

    threads = [threading.Thread(target=connect) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(got) == 8
    assert len({id(context) for context in got}) == 1
