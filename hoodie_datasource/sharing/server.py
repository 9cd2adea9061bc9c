"""Running the app: uvicorn (the ASGI server Starlette's authors keep), its own access log off (``access_log``
logs each request without tokens), a graceful shutdown on SIGTERM/SIGINT: the listening socket closes, requests
in flight finish for up to ``GRACEFUL_SHUTDOWN_S``, then the process ends."""

from __future__ import annotations

import logging

import uvicorn

from hoodie_datasource.sharing.app import create_app
from hoodie_datasource.sharing.config import SharingConfig

GRACEFUL_SHUTDOWN_S = 10
# idle keep-alive connections are kept this long: clients read a response's files one after another on pooled
# connections, and one the server closes just as a client reuses it fails that read (uvicorn's default is 5 s)
KEEP_ALIVE_S = 75


def make_server(config: SharingConfig, host: str | None = None, port: int | None = None) -> uvicorn.Server:
    """A server of ``config`` (``host`` and ``port`` override the configured ones; port 0 picks a free one)."""
    settings = uvicorn.Config(create_app(config), host=host or config.host,
                              port=config.port if port is None else port, access_log=False, log_config=None,
                              timeout_graceful_shutdown=GRACEFUL_SHUTDOWN_S, timeout_keep_alive=KEEP_ALIVE_S,
                              lifespan="off")
    return uvicorn.Server(settings)


def serve(config: SharingConfig) -> None:
    logging.getLogger(__name__).info("hoodie-sharing on http://%s:%d%s, %d shares", config.host, config.port,
                                     config.endpoint, len(config.shares))
    make_server(config).run()
