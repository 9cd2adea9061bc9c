"""The server's ASGI middleware: a bound on request bodies (413 past ``MAX_BODY_BYTES``, whether the body
announces its length or streams it) and one structured access-log line per request (JSON: method, path, status,
milliseconds, recipient, client address). The log never holds a bearer token (headers are not logged) nor a file
token (the path of a file URL is logged as ``/files/<token>``)."""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Any

from hoodie_datasource.sharing.protocol import error_body

logger = logging.getLogger("hoodie_datasource.sharing.access")

MAX_BODY_BYTES = 1 << 20
_FILE_PATH = re.compile(r"/files/[^/]*")


class _TooLarge(Exception):
    pass


async def _send_json(send, status: int, body: dict[str, str]) -> None:
    payload = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(payload)).encode())]})
    await send({"type": "http.response.body", "body": payload})


class AccessLogMiddleware:
    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        status = {"code": 500}

        async def sending(message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        length = dict(scope.get("headers") or ()).get(b"content-length")
        try:
            if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
                raise _TooLarge()
            received = 0

            async def receiving():
                nonlocal received
                message = await receive()
                received += len(message.get("body", b""))
                if received > MAX_BODY_BYTES:
                    raise _TooLarge()
                return message

            await self.app(scope, receiving, sending)
        except _TooLarge:
            status["code"] = 413
            await _send_json(send, 413, error_body(
                "INVALID_PARAMETER_VALUE", f"The request body is larger than {MAX_BODY_BYTES} bytes"))
        finally:
            client = scope.get("client") or ("", 0)
            logger.info(json.dumps({
                "method": scope["method"], "path": _FILE_PATH.sub("/files/<token>", scope["path"]),
                "status": status["code"], "ms": round((time.monotonic() - started) * 1000, 1),
                "recipient": (scope.get("state") or {}).get("recipient"), "client": client[0]}))
