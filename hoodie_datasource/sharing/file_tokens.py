"""File URLs of local tables: ``{endpoint}/files/{token}``, the token the only variable part of the URL, so the
signature covers all of it.

A token is ``base64url(payload) "." base64url(HMAC-SHA256(secret, payload))`` with the payload
``{"t": table id, "p": path relative to the table, "e": expiry in epoch ms}``: opaque to the recipient (it proves
nothing and grants nothing beyond that one file until ``e``), never carrying the bearer token, and checked by any
server holding the same secret. A token altered, signed with another secret, naming a table the server does not
share, or past its expiry is refused with 403 (``SharingForbiddenError``); the path it names is still confined
to its table's folder when served (``storage.inside_table``, symlinks resolved).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from dataclasses import dataclass

from hoodie_datasource.errors import SharingForbiddenError

MAX_TOKEN_CHARS = 4096
_ENCODER = json.JSONEncoder(separators=(",", ":"))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@dataclass(frozen=True)
class FileGrant:
    table_id: str
    path: str
    expires_ms: int


@dataclass(frozen=True)
class FileTokens:
    secret: bytes

    def _mac(self, payload: bytes) -> bytes:
        return hmac.digest(self.secret, payload, hashlib.sha256)

    def sign(self, grant: FileGrant) -> str:
        payload = _ENCODER.encode({"e": grant.expires_ms, "p": grant.path, "t": grant.table_id}).encode()
        return f"{_b64(payload)}.{_b64(self._mac(payload))}"

    def verify(self, token: str, now_ms: int) -> FileGrant:
        """The grant of a token this server's secret signed, not past its expiry."""
        try:
            payload_part, mac_part = token.split(".")
            payload, mac = _unb64(payload_part), _unb64(mac_part)
        except (ValueError, binascii.Error):
            raise SharingForbiddenError("The file URL is not one this server issued") from None
        if len(token) > MAX_TOKEN_CHARS or not hmac.compare_digest(mac, self._mac(payload)):
            raise SharingForbiddenError("The file URL is not one this server issued (its signature does not match)")
        fields = json.loads(payload)
        grant = FileGrant(str(fields["t"]), str(fields["p"]), int(fields["e"]))
        if now_ms >= grant.expires_ms:
            raise SharingForbiddenError("The file URL has expired: query the table again for a fresh one")
        return grant
