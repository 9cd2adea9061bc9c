"""The Delta Sharing REST server: every endpoint the official Python client 1.x calls (PROTOCOL.md "REST APIs"),
the file endpoint of local tables' URLs, and ``/health``.

FastAPI on Starlette: the routes declare their parameters and body, so malformed input is refused before any
handler runs (400, ``{errorCode, message}`` as the protocol wants every error), and the OpenAPI document it
serves (``/openapi.json``) is what the fuzzing tests feed schemathesis. Handlers that read a table are plain
functions, run on Starlette's thread pool, so the event loop keeps serving while a footer is read or a
merge-on-read slice is merged.
"""

from __future__ import annotations

import logging
from typing import Annotated

from fastapi import Depends, FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException

from hoodie_datasource.errors import (
    HoodieError,
    ReadWindowError,
    SharingNotFoundError,
    SharingRequestError,
    TableNotFoundError,
)
from hoodie_datasource.sharing.access_log import AccessLogMiddleware
from hoodie_datasource.sharing.config import Recipient, Share, SharedTable, SharingConfig
from hoodie_datasource.sharing.pagination import page
from hoodie_datasource.sharing.partitions import partition_columns
from hoodie_datasource.sharing.protocol import (
    NDJSON,
    PROTOCOL_LINE,
    VERSION_HEADER,
    error_body,
    metadata_line,
)
from hoodie_datasource.sharing.server_state import SharingServer
from hoodie_datasource.sharing.table_service import TableService, TableState

logger = logging.getLogger(__name__)

MAX_LONG = 2**63 - 1
Version = Annotated[int | None, Query(ge=0, le=MAX_LONG)]
PageSize = Annotated[int | None, Query(alias="maxResults", ge=0, le=2**31 - 1)]
PageToken = Annotated[str | None, Query(alias="pageToken", max_length=256)]


class QueryRequest(BaseModel):
    """The body of a query (PROTOCOL.md "Request Body"); hints are best effort, and ignored here."""

    model_config = ConfigDict(extra="ignore")
    predicateHints: list[str] | None = None
    jsonPredicateHints: str | None = None
    limitHint: int | None = Field(None, ge=0, le=MAX_LONG)
    version: int | None = Field(None, ge=0, le=MAX_LONG)
    timestamp: str | None = Field(None, max_length=64)
    startingVersion: int | None = Field(None, ge=0, le=MAX_LONG)
    endingVersion: int | None = Field(None, ge=0, le=MAX_LONG)


_BEARER = HTTPBearer(auto_error=False, description="The recipient's bearer token, from its profile file")


def _recipient(request: Request, _credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_BEARER)]
               ) -> Recipient:
    """The recipient the request's bearer token names (401 otherwise), remembered for the access log. (The
    ``HTTPBearer`` dependency puts the scheme in the OpenAPI document; the header is checked here.)"""
    found = request.app.state.server.authenticate(request.headers.get("authorization"))
    request.state.recipient = found.name
    return found


Auth = Annotated[Recipient, Depends(_recipient)]


def _ndjson(lines: list[str], version: int) -> Response:
    return Response("".join(lines), media_type=NDJSON, headers={VERSION_HEADER: str(version)})


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(error_body(code, message), status_code=status)


def _check_history(table: SharedTable, asked: str) -> None:
    if not table.history_shared:
        raise SharingRequestError(f"Reading table {table.share}.{table.schema}.{table.name} by {asked} is not "
                                  "supported because history sharing is not enabled on it (historyShared)")


def _shared_version(table: SharedTable, version: int, state: TableState) -> int:
    state.versions.instant(version)  # exists
    if version < table.start_version:
        raise SharingRequestError(f"Version {version} is not shared: the share starts at version {table.start_version}")
    return version


def create_app(config: SharingConfig) -> FastAPI:
    server = SharingServer(config)
    app = FastAPI(title="hoodie-sharing", version="1", description="Delta Sharing server for hoodie tables")
    app.state.server = server
    prefix = config.endpoint

    @app.exception_handler(SharingRequestError)
    async def _sharing_error(_request, exc: SharingRequestError):
        return _error(exc.status, exc.error_code, str(exc))

    @app.exception_handler(ReadWindowError)
    async def _window_error(_request, exc: ReadWindowError):
        return _error(400, "INVALID_PARAMETER_VALUE", str(exc))

    @app.exception_handler(TableNotFoundError)
    async def _no_table(_request, exc: TableNotFoundError):
        return _error(404, "RESOURCE_DOES_NOT_EXIST", str(exc))

    @app.exception_handler(HoodieError)
    async def _hoodie_error(_request, exc: HoodieError):
        logger.error("%s: %s", type(exc).__name__, exc)
        return _error(500, "INTERNAL_ERROR", f"{type(exc).__name__}: {exc}")

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request, exc: RequestValidationError):
        problems = "; ".join(f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg')}" for e in exc.errors()[:5])
        return _error(400, "INVALID_PARAMETER_VALUE", f"The request is malformed: {problems}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(_request, exc: StarletteHTTPException):
        code = ("RESOURCE_DOES_NOT_EXIST" if exc.status_code == 404 else
                "INVALID_PARAMETER_VALUE" if exc.status_code < 500 else "INTERNAL_ERROR")
        return _error(exc.status_code, code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(_request, exc: Exception):
        logger.exception("unexpected error")
        return _error(500, "INTERNAL_ERROR", f"Internal error: {type(exc).__name__}")

    @app.get("/health")
    def health() -> dict[str, str]:
        return {"status": "ok"}

    @app.get(f"{prefix}/shares")
    def list_shares(who: Auth, max_results: PageSize = None, page_token: PageToken = None):
        shares = [s for s in config.shares if who.may_see(s.name)]
        items, token = page(shares, max_results, page_token)
        return _listing([{"name": s.name, "id": s.id} for s in items], token)

    @app.get(f"{prefix}/shares/{{share}}")
    def get_share(who: Auth, share: str):
        found = server.share(who, share)
        return {"share": {"name": found.name, "id": found.id}}

    @app.get(f"{prefix}/shares/{{share}}/schemas")
    def list_schemas(who: Auth, share: str, max_results: PageSize = None, page_token: PageToken = None):
        found = server.share(who, share)
        items, token = page(found.schemas, max_results, page_token)
        return _listing([{"name": s.name, "share": found.name} for s in items], token)

    @app.get(f"{prefix}/shares/{{share}}/schemas/{{schema}}/tables")
    def list_tables(who: Auth, share: str, schema: str, max_results: PageSize = None, page_token: PageToken = None):
        found = server.share(who, share)
        schemas = [s for s in found.schemas if s.name.lower() == schema.lower()]
        if not schemas:
            raise SharingNotFoundError(f"Schema {schema!r} does not exist in share {found.name}")
        items, token = page(schemas[0].tables, max_results, page_token)
        return _listing([_table_item(t, found) for t in items], token)

    @app.get(f"{prefix}/shares/{{share}}/all-tables")
    def list_all_tables(who: Auth, share: str, max_results: PageSize = None, page_token: PageToken = None):
        found = server.share(who, share)
        items, token = page([t for s in found.schemas for t in s.tables], max_results, page_token)
        return _listing([_table_item(t, found) for t in items], token)

    def _version_response(who: Recipient, share: str, schema: str, table: str, starting_timestamp: str | None):
        shared = server.table(who, share, schema, table)
        state = server.service(shared).state()
        if starting_timestamp is not None:
            _check_history(shared, "startingTimestamp")
            version = _shared_version(shared, state.versions.at_or_after(starting_timestamp), state)
        else:
            version = _latest(state, shared)
        return Response(status_code=200, headers={VERSION_HEADER: str(version)})

    @app.get(f"{prefix}/shares/{{share}}/schemas/{{schema}}/tables/{{table}}/version")
    def table_version(who: Auth, share: str, schema: str, table: str,
                      starting_timestamp: Annotated[str | None, Query(alias="startingTimestamp", max_length=64)] = None):
        return _version_response(who, share, schema, table, starting_timestamp)

    @app.head(f"{prefix}/shares/{{share}}/schemas/{{schema}}/tables/{{table}}")
    def table_version_head(who: Auth, share: str, schema: str, table: str):
        return _version_response(who, share, schema, table, None)

    @app.get(f"{prefix}/shares/{{share}}/schemas/{{schema}}/tables/{{table}}/metadata")
    def table_metadata(who: Auth, share: str, schema: str, table: str):
        shared = server.table(who, share, schema, table)
        state = server.service(shared).state()
        version = _latest(state, shared)
        return _ndjson([PROTOCOL_LINE, _metadata(shared, state, version)], version)

    @app.post(f"{prefix}/shares/{{share}}/schemas/{{schema}}/tables/{{table}}/query")
    def query_table(who: Auth, share: str, schema: str, table: str, request: Request,
                    body: QueryRequest | None = None):
        body = body or QueryRequest()
        shared = server.table(who, share, schema, table)
        service = server.service(shared)
        state = service.state()
        if body.startingVersion is not None:
            return _data_changes(server, request, shared, service, state, body)
        if body.version is not None and body.timestamp is not None:
            raise SharingRequestError("Give version or timestamp, not both")
        pinned = body.version is not None or body.timestamp is not None
        if body.version is not None:
            _check_history(shared, "version")
            version = _shared_version(shared, body.version, state)
        elif body.timestamp is not None:
            _check_history(shared, "timestamp")
            version = _shared_version(shared, state.versions.at_or_before(body.timestamp), state)
        else:
            version = _latest(state, shared)
        files = service.snapshot(state, version)
        stamp = state.versions.timestamp_ms(version) if pinned else None
        lines = [PROTOCOL_LINE, _metadata(shared, state, version, pinned)]
        lines += [server.file_line(request, shared, service, "file", f, version if pinned else None, stamp)
                  for f in files]
        return _ndjson(lines, version)

    @app.get(f"{prefix}/shares/{{share}}/schemas/{{schema}}/tables/{{table}}/changes")
    def table_changes(who: Auth, share: str, schema: str, table: str, request: Request,
                      starting_version: Annotated[Version, Query(alias="startingVersion")] = None,
                      starting_timestamp: Annotated[str | None, Query(alias="startingTimestamp", max_length=64)] = None,
                      ending_version: Annotated[Version, Query(alias="endingVersion")] = None,
                      ending_timestamp: Annotated[str | None, Query(alias="endingTimestamp", max_length=64)] = None,
                      include_historical_metadata: Annotated[str | None, Query(alias="includeHistoricalMetadata",
                                                                               max_length=8)] = None):
        shared = server.table(who, share, schema, table)
        _check_history(shared, "change data feed")
        service = server.service(shared)
        state = service.state()
        versions = state.versions
        if (starting_version is None) == (starting_timestamp is None):
            raise SharingRequestError("Give exactly one of startingVersion and startingTimestamp")
        if ending_version is not None and ending_timestamp is not None:
            raise SharingRequestError("Give endingVersion or endingTimestamp, not both")
        start = starting_version if starting_version is not None else versions.at_or_after(starting_timestamp)
        if ending_version is not None:
            end = ending_version
        elif ending_timestamp is not None:
            end = versions.at_or_before(ending_timestamp)
        else:
            end = _latest(state, shared)
        _shared_version(shared, start, state)
        _shared_version(shared, end, state)
        if end < start:
            raise SharingRequestError(f"endingVersion {end} is before startingVersion {start}")
        lines = [PROTOCOL_LINE, _metadata(shared, state, versions.latest)]
        lines += [server.file_line(request, shared, service, "cdf", f, version, versions.timestamp_ms(version))
                  for version, f in service.changes(state, start, end)]
        return _ndjson(lines, start)

    @app.get(f"{prefix}/files/{{token}}")
    def read_file(token: Annotated[str, Path(max_length=4096)]):
        """A file of a local table, by the token of its URL (no bearer token: the URL is the grant); ranges too."""
        return FileResponse(server.local_file(token), media_type="application/octet-stream")

    @app.head(f"{prefix}/files/{{token}}")
    def file_size(token: Annotated[str, Path(max_length=4096)]):
        return FileResponse(server.local_file(token), media_type="application/octet-stream")

    app.add_middleware(AccessLogMiddleware)
    return app


def _data_changes(server: SharingServer, request: Request, table: SharedTable, service: TableService,
                  state: TableState, body: QueryRequest) -> Response:
    """A query with ``startingVersion`` (the streaming sources' request): for each version from it to
    ``endingVersion`` (the latest by default), ``add`` the files the version's snapshot has that the one before
    it had not, and ``remove`` those it no longer has, as Delta's add and remove actions; replaying them over the
    snapshot before ``startingVersion`` gives each version's snapshot. A version that changed no row (a compaction,
    a clustering) gives none, as Delta leaves out actions with ``dataChange=false``: a stream reads no row twice."""
    _check_history(table, "startingVersion")
    if body.version is not None or body.timestamp is not None:
        raise SharingRequestError("Give startingVersion without version or timestamp")
    start = _shared_version(table, body.startingVersion, state)
    end = _shared_version(table, _latest(state, table) if body.endingVersion is None else body.endingVersion, state)
    if end < start:
        raise SharingRequestError(f"endingVersion {end} is before startingVersion {start}")
    lines = [PROTOCOL_LINE, _metadata(table, state, state.versions.latest)]
    before = {f.rel: f for f in service.snapshot(state, start - 1)} if start else {}
    for version in range(start, end + 1):
        now = {f.rel: f for f in service.snapshot(state, version)}
        if not state.changes_data(version):
            before = now
            continue
        stamp = state.versions.timestamp_ms(version)
        lines += [server.file_line(request, table, service, "add", now[rel], version, stamp)
                  for rel in now.keys() - before.keys()]
        lines += [server.file_line(request, table, service, "remove", before[rel], version, stamp)
                  for rel in before.keys() - now.keys()]
        before = now
    return _ndjson(lines, start)


def _latest(state: TableState, table: SharedTable) -> int:
    if state.versions.latest < 0:
        raise SharingNotFoundError(f"Table {table.share}.{table.schema}.{table.name} has no committed version yet")
    return state.versions.latest


def _metadata(table: SharedTable, state: TableState, version: int, with_version: bool = False) -> str:
    schema = state.data_schema(version)
    return metadata_line(table.id, table.name, schema, partition_columns(state.table.config, schema),
                         table.history_shared, version if with_version else None)


def _table_item(table: SharedTable, share: Share) -> dict[str, str]:
    return {"name": table.name, "schema": table.schema, "share": share.name, "shareId": share.id, "id": table.id}


def _listing(items: list[dict], token: str | None) -> dict:
    body: dict = {"items": items}
    if token is not None:
        body["nextPageToken"] = token
    return body
