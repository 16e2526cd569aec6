"""Error codes Mooring records for calls that ended on the host's side, defined once.

They are stored in a tool round's ``error`` like a server's JSON-RPC error, so they must never
collide with a code a server or the SDK uses: ``-32001`` is the SDK's request timeout (which
Mooring reads as *no answer*), ``-32602`` a server's "no such task". Mooring's own codes sit in
the implementation-defined range at its far end, where neither the SDK nor the specification
puts anything.
"""

from __future__ import annotations

from typing import Final

NOT_SENT_CODE: Final = -32090
"""The call never reached the server (Mooring stopped first, or the server was unreachable)."""

DENIED_CODE: Final = -32091
"""The call was refused before sending: by the user, a rule or a guard."""

UNKNOWN_TOOL_CODE: Final = -32092
"""The server does not offer the tool that was asked for; nothing was sent."""

HOST_CODES: Final = frozenset({NOT_SENT_CODE, DENIED_CODE, UNKNOWN_TOOL_CODE})
"""Every code Mooring itself records."""
