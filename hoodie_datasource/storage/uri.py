"""Table URIs: which backend a URI names, and its bucket (or container) and key prefix.

A URI with a scheme this library cannot serve is refused by name: it must never be taken for a local
path (``s3://b/t`` once became a directory named ``s3:`` under the working directory). ``s3a://`` and
``s3n://`` name the same table as ``s3://`` (Hadoop's spellings); Azure accepts ``az://container/p``,
``abfs[s]://container@account.dfs.core.windows.net/p`` and ``wasb[s]://container@account.blob.core.windows.net/p``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from hoodie_datasource.errors import UnsupportedStorageError

BACKEND_BY_SCHEME = {
    "file": "local",
    "s3": "s3", "s3a": "s3", "s3n": "s3",
    "az": "azure", "azure": "azure", "abfs": "azure", "abfss": "azure", "wasb": "azure", "wasbs": "azure",
    "gs": "gcs", "gcs": "gcs",
    "hdfs": "hdfs", "viewfs": "hdfs",
}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):")


@dataclass(frozen=True)
class TableUri:
    backend: str  # local | s3 | azure | gcs | hdfs
    scheme: str  # as written, lower-cased
    bucket: str  # bucket or container ("" for local files)
    key: str  # the table's prefix inside the bucket, no leading or trailing '/'
    account: str | None = None  # the Azure storage account named in the host, if any
    host: str = ""  # the authority as written (hdfs namenode, "" for fs.defaultFS; Azure host)

    @property
    def uri(self) -> str:
        """The normalized base URI (``s3a://`` and ``s3n://`` become ``s3://``)."""
        scheme = "s3" if self.backend == "s3" else self.scheme
        authority = self.host or self.bucket
        return f"{scheme}://{authority}/{self.key}" if self.key else f"{scheme}://{authority}"


def scheme_of(uri: str) -> str | None:
    match = _SCHEME.match(uri)
    return match.group(1).lower() if match else None


def parse_table_uri(uri: str) -> TableUri:
    """Parse a table URI; a plain path or ``file:`` URI is local. Raises UnsupportedStorageError."""
    scheme = scheme_of(uri)
    if scheme is None or scheme == "file":
        return TableUri("local", "file", "", uri)
    backend = BACKEND_BY_SCHEME.get(scheme)
    if backend is None:
        supported = ", ".join(f"{s}://" for s in BACKEND_BY_SCHEME if s != "file")
        raise UnsupportedStorageError(
            f"Unsupported table URI {uri!r}: the scheme {scheme!r} names no storage this library can use; "
            f"use a local path or file:// URI, or one of {supported}")
    parts = urlsplit(uri)
    key = parts.path.strip("/")
    host = parts.netloc
    if backend == "hdfs":  # hdfs:///path names the cluster of fs.defaultFS
        return TableUri(backend, scheme, "", key, None, host)
    if not host:
        raise UnsupportedStorageError(f"Table URI {uri!r} names no bucket or container: write {scheme}://<bucket>/<path>")
    if backend == "azure" and "@" in host:
        container, _, domain = host.partition("@")
        account = domain.split(".", 1)[0] or None
        return TableUri(backend, scheme, container, key, account, host)
    return TableUri(backend, scheme, host, key)
