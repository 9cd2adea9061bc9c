"""What the server's routes share: the configuration, one ``TableService`` per shared table, the footer statistics,
the file tokens; and the checks every request goes through: whose bearer token it carries, which shares that
recipient may see, which local file a file token grants."""

from __future__ import annotations

import datetime as dt
import hmac
import os
import threading
import time

from starlette.requests import Request

from hoodie_datasource.errors import (
    SharingForbiddenError,
    SharingNotFoundError,
    SharingUnauthenticatedError,
    StorageError,
)
from hoodie_datasource.sharing.config import Recipient, Share, SharedTable, SharingConfig
from hoodie_datasource.sharing.file_stats import FooterStats
from hoodie_datasource.sharing.file_tokens import FileGrant, FileTokens
from hoodie_datasource.sharing.protocol import FileEntry
from hoodie_datasource.sharing.table_service import TableService
from hoodie_datasource.storage.local import LocalStorage


class SharingServer:
    """What the routes share: the configuration, one ``TableService`` per table, the footer statistics."""

    def __init__(self, config: SharingConfig) -> None:
        self.config = config
        self.tokens = FileTokens(config.file_token_secret)
        self.stats = FooterStats()
        self._services: dict[str, TableService] = {}
        self._lock = threading.Lock()

    def service(self, table: SharedTable) -> TableService:
        with self._lock:
            if table.id not in self._services:
                self._services[table.id] = TableService(
                    table, self.stats, self.config.cache_max_bytes, self.config.pre_signed_url_timeout_seconds * 1000)
            return self._services[table.id]

    def authenticate(self, authorization: str | None) -> Recipient:
        if not self.config.recipients:
            return Recipient("anonymous", "")
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token:
            raise SharingUnauthenticatedError("The request carries no bearer token (Authorization: Bearer ...)")
        # every token compared in constant time, so the time taken tells nothing of which one nearly matched
        found = [r for r in self.config.recipients if hmac.compare_digest(r.bearer_token.encode(), token.encode())]
        if not found:
            raise SharingUnauthenticatedError("The bearer token is not valid")
        recipient = found[0]
        if recipient.expiration_time is not None and recipient.expiration_time <= dt.datetime.now(dt.timezone.utc):
            raise SharingUnauthenticatedError("The bearer token has expired")
        return recipient

    def share(self, recipient: Recipient, name: str) -> Share:
        share = self.config.share(name)
        if share is None or not recipient.may_see(share.name):
            raise SharingNotFoundError(f"Share {name!r} does not exist or is not shared with you")
        return share

    def table(self, recipient: Recipient, share: str, schema: str, name: str) -> SharedTable:
        found = self.share(recipient, share)
        for sc in found.schemas:
            if sc.name.lower() == schema.lower():
                for table in sc.tables:
                    if table.name.lower() == name.lower():
                        return table
                raise SharingNotFoundError(f"Table {name!r} does not exist in {found.name}.{sc.name}")
        raise SharingNotFoundError(f"Schema {schema!r} does not exist in share {found.name}")

    def file_line(self, request: Request, table: SharedTable, service: TableService, kind: str, entry: FileEntry,
                  version: int | None = None, timestamp_ms: int | None = None) -> str:
        """The response line of a file, its URL the store's pre-signed one or this server's file endpoint's."""
        timeout = self.config.pre_signed_url_timeout_seconds
        expires = int(time.time() * 1000) + timeout * 1000
        url = service.storage.signed_url(entry.rel, timeout)
        if url is None:
            token = self.tokens.sign(FileGrant(table.id, entry.rel, expires))
            url = f"{str(request.base_url).rstrip('/')}{self.config.endpoint}/files/{token}"
        return entry.line(kind, url, expires, version, timestamp_ms)

    def local_file(self, token: str) -> str:
        """The local path a file token grants, confined to its table's folder (symlinks resolved)."""
        grant = self.tokens.verify(token, int(time.time() * 1000))
        table = self.config.table_by_id(grant.table_id)
        if table is None:
            raise SharingForbiddenError("The file URL names a table this server does not share")
        storage = self.service(table).storage
        if not isinstance(storage, LocalStorage):
            raise SharingForbiddenError("The file URL names a table on an object store: its URLs are pre-signed")
        try:
            path = storage.path(grant.path)
        except StorageError:
            raise SharingForbiddenError("The file URL names a file outside its table") from None
        root = os.path.realpath(storage.root)
        real = os.path.realpath(path)
        if os.path.commonpath([root, real]) != root:
            raise SharingForbiddenError("The file URL names a file outside its table")
        if not os.path.isfile(real):
            raise SharingNotFoundError("The file is gone: query the table again")
        return real
