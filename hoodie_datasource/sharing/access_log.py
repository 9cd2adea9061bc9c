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


async def _bounded_body(scope, receive):
    """The request's body read whole (``_TooLarge`` past ``MAX_BODY_BYTES``, announced or streamed), replayed to
    the app: the bound holds before any parser sees a byte."""
    length = dict(scope.get("headers") or ()).get(b"content-length")
    if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
        raise _TooLarge()
    if scope["method"] in ("GET", "HEAD") and length is None:
        return receive
    chunks, size, more = [], 0, True
    while more:
        message = await receive()
        if message["type"] != "http.request":
            return receive
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > MAX_BODY_BYTES:
            raise _TooLarge()
        more = message.get("more_body", False)
    replayed = False

    async def replay():
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": b"".join(chunks), "more_body": False}
        return await receive()

    return replay


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

        try:
            receive = await _bounded_body(scope, receive)
            await self.app(scope, receive, sending)
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
