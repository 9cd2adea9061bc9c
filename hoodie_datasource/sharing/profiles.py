"""A recipient's profile file (PROTOCOL.md "Profile File Format"): what the server's owner hands the recipient,
and the client opens (``delta_sharing.SharingClient(profile)``)."""

from __future__ import annotations

import json
from typing import Any

from hoodie_datasource.sharing.config import SharingConfig


def profile(config: SharingConfig, recipient: str, endpoint: str | None = None) -> dict[str, Any]:
    """The profile of ``recipient``; ``endpoint`` is the server's URL as recipients reach it (by default the
    configured host, port and endpoint over http)."""
    who = config.recipient(recipient)
    url = endpoint or f"http://{config.host}:{config.port}{config.endpoint}"
    body: dict[str, Any] = {"shareCredentialsVersion": 1, "endpoint": url.rstrip("/"), "bearerToken": who.bearer_token}
    if who.expiration_time is not None:
        body["expirationTime"] = who.expiration_time.isoformat().replace("+00:00", "Z")
    return body


def write_profile(config: SharingConfig, recipient: str, path: str, endpoint: str | None = None) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(profile(config, recipient, endpoint), handle, indent=2)
        handle.write("\n")
