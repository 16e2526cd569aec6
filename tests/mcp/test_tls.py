"""HTTP server connections verify TLS, with one context built once per process."""

from __future__ import annotations

import ssl

from mooring.mcp.transport import tls_context


def test_connections_verify_certificates_and_hostnames_with_one_shared_context() -> None:
    context = tls_context()
    assert context.verify_mode is ssl.CERT_REQUIRED
    assert context.check_hostname
    assert tls_context() is context  # a reconnect does not load the certificates again
