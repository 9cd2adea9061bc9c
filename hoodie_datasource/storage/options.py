"""Where credentials and endpoints come from, resolved once per table into ``StorageOptions``.

Users configure object stores the way their tools already do. From lowest to highest precedence:
an AWS profile (``AWS_PROFILE``, ``~/.aws/credentials`` and ``~/.aws/config``), the environment
(``AWS_ACCESS_KEY_ID``, ``AWS_SECRET_ACCESS_KEY``, ``AWS_SESSION_TOKEN``, ``AWS_REGION``,
``AWS_ENDPOINT_URL``, ``AWS_ALLOW_HTTP``; ``AZURE_STORAGE_ACCOUNT_NAME`` / ``_KEY`` /
``AZURE_STORAGE_CONNECTION_STRING``; ``GOOGLE_APPLICATION_CREDENTIALS``), the Hadoop keys a Spark job
already sets (``spark.hadoop.fs.s3a.endpoint``, ``...access.key``, ``...secret.key``,
``...path.style.access``, ``spark.hadoop.fs.azure.account.key.<account>...``), then the table's own
``hoodie.storage.*`` options. Secrets are held, never shown: ``repr`` and every message redact them.

HDFS takes its settings from the Hadoop configuration libhdfs loads (``core-site.xml``, ``hdfs-site.xml``
under ``HADOOP_CONF_DIR``); the Hadoop keys a Spark job sets (``spark.hadoop.dfs.*``, ``spark.hadoop.fs.*``)
and ``hoodie.storage.hdfs.conf.<hadoop key>`` override them, as Spark's own Hadoop client would.
"""

from __future__ import annotations

import configparser
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from hoodie_datasource.config.property import ConfigProperty, parse_bool
from hoodie_datasource.storage.uri import TableUri

S3_ENDPOINT = ConfigProperty("hoodie.storage.s3.endpoint", None, hudi=False, doc="S3 endpoint URL (an S3-compatible server)")
S3_REGION = ConfigProperty("hoodie.storage.s3.region", None, hudi=False, doc="S3 region")
S3_ACCESS_KEY = ConfigProperty("hoodie.storage.s3.access.key", None, hudi=False, doc="S3 access key id")
S3_SECRET_KEY = ConfigProperty("hoodie.storage.s3.secret.key", None, hudi=False, doc="S3 secret access key")
S3_SESSION_TOKEN = ConfigProperty("hoodie.storage.s3.session.token", None, hudi=False, doc="S3 session token")
S3_PATH_STYLE = ConfigProperty("hoodie.storage.s3.path.style.access", None, hudi=False, parser=parse_bool,
                               doc="address buckets by path (true) or by virtual host (false)")
AZURE_ACCOUNT_NAME = ConfigProperty("hoodie.storage.azure.account.name", None, hudi=False, doc="Azure storage account")
AZURE_ACCOUNT_KEY = ConfigProperty("hoodie.storage.azure.account.key", None, hudi=False, doc="Azure storage account key")
AZURE_CONNECTION_STRING = ConfigProperty("hoodie.storage.azure.connection.string", None, hudi=False,
                                         doc="Azure storage connection string")
AZURE_ENDPOINT = ConfigProperty("hoodie.storage.azure.endpoint", None, hudi=False, doc="Azure blob endpoint URL (Azurite)")
GCS_SERVICE_ACCOUNT = ConfigProperty("hoodie.storage.gcs.service.account.path", None, hudi=False,
                                     doc="path of a GCS service account JSON key")
ALLOW_HTTP = ConfigProperty("hoodie.storage.allow.http", None, hudi=False, parser=parse_bool,
                            doc="allow a plain-http endpoint (an emulator on loopback)")
HDFS_USER = ConfigProperty("hoodie.storage.hdfs.user", None, hudi=False,
                           doc="the user HDFS sees (else HADOOP_USER_NAME or the login user)")
HDFS_KERBEROS_TICKET_CACHE = ConfigProperty("hoodie.storage.hdfs.kerberos.ticket.cache.path", None, hudi=False,
                                            doc="path of the Kerberos ticket cache (kinit's) to connect with")
HDFS_CONF_PREFIX = "hoodie.storage.hdfs.conf."
"""``hoodie.storage.hdfs.conf.<hadoop key>``: one Hadoop configuration key for the HDFS client."""
UNSAFE_CONDITIONAL_CREATE = ConfigProperty(
    "hoodie.storage.conditional.create.unsafe", False, parser=parse_bool, hudi=False,
    doc="commit on a store that cannot create an object only if absent, by check-then-put: two racing "
        "writers may then silently overwrite each other's instant files")
STORAGE_PROPERTIES = (
    S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY, S3_SECRET_KEY, S3_SESSION_TOKEN, S3_PATH_STYLE, AZURE_ACCOUNT_NAME,
    AZURE_ACCOUNT_KEY, AZURE_CONNECTION_STRING, AZURE_ENDPOINT, GCS_SERVICE_ACCOUNT, ALLOW_HTTP,
    HDFS_USER, HDFS_KERBEROS_TICKET_CACHE, UNSAFE_CONDITIONAL_CREATE,
)
SECRET_KEYS = frozenset({"secret_access_key", "session_token", "account_key", "access_key", "sas_key", "token",
                         "service_account_key"})
# Hadoop keys whose values are secrets, after Hadoop's own hadoop.security.sensitive-config-keys
SECRET_HADOOP_KEY = re.compile(r"secret|passw|credential|token|key", re.IGNORECASE)
HADOOP_PREFIX = "spark.hadoop."
HDFS_HADOOP_PREFIXES = (f"{HADOOP_PREFIX}dfs.", f"{HADOOP_PREFIX}fs.")
ENV_PREFIX = "hoodie.storage.env."
"""An option ``hoodie.storage.env.<VARIABLE>`` carries one of the driver's ``STORAGE_ENV`` variables to
Spark's Python workers: they inherit the environment the JVM started with, not one set later in the
driver (``os.environ[...] = ...`` in a notebook), so the driver's value wins over the worker's."""
STORAGE_ENV = (
    "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
    "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ALLOW_HTTP", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
    "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE", "AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT_KEY",
    "AZURE_STORAGE_CONNECTION_STRING", "GOOGLE_APPLICATION_CREDENTIALS",
)


@dataclass(frozen=True)
class StorageOptions:
    """Settings of one table's store. ``config`` holds obstore's configuration keys (secrets too), or
    for HDFS the user and ticket cache; ``hadoop_conf`` the Hadoop keys given to the HDFS client."""

    config: tuple[tuple[str, str], ...] = ()
    allow_http: bool = False
    unsafe_conditional_create: bool = False
    hadoop_conf: tuple[tuple[str, str], ...] = ()

    def get(self, key: str) -> str | None:
        return dict(self.config).get(key)

    def __repr__(self) -> str:
        shown = {k: ("***" if k in SECRET_KEYS else v) for k, v in self.config}
        if self.hadoop_conf:
            shown["hadoop_conf"] = {k: ("***" if SECRET_HADOOP_KEY.search(k) else v) for k, v in self.hadoop_conf}
        return f"StorageOptions({shown}, allow_http={self.allow_http})"

    __str__ = __repr__


def _lower(options: Mapping[str, str]) -> dict[str, str]:
    return {k.lower(): v for k, v in options.items() if v is not None}


def _pick(options: dict[str, str], prop: ConfigProperty):
    raw = options.get(prop.key)
    return None if raw is None else prop.parse(prop.key, raw)


def _truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in ("true", "1", "yes")


def aws_profile(environ: Mapping[str, str]) -> dict[str, str]:
    """Keys of the AWS profile named by ``AWS_PROFILE`` (else ``default``), from the shared files."""
    name = environ.get("AWS_PROFILE") or environ.get("AWS_DEFAULT_PROFILE") or "default"
    home = os.path.expanduser("~")
    found: dict[str, str] = {}
    sources = ((environ.get("AWS_CONFIG_FILE") or os.path.join(home, ".aws", "config"),
                name if name == "default" else f"profile {name}"),
               (environ.get("AWS_SHARED_CREDENTIALS_FILE") or os.path.join(home, ".aws", "credentials"), name))
    for path, section in sources:
        parser = configparser.RawConfigParser()
        if parser.read(path) and parser.has_section(section):
            found.update(parser.items(section))
    return found


def environment_options(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's ``STORAGE_ENV`` variables as ``hoodie.storage.env.*`` options (to carry to workers)."""
    env = os.environ if environ is None else environ
    return {f"{ENV_PREFIX}{name.lower()}": env[name] for name in STORAGE_ENV if env.get(name)}


def resolve_storage_options(table: TableUri, options: Mapping[str, str] | None = None,
                            environ: Mapping[str, str] | None = None) -> StorageOptions:
    """The store settings for ``table`` from the profile, the environment, the Hadoop keys in
    ``options`` (``spark.hadoop.fs.*``) and the ``hoodie.storage.*`` options, later ones winning."""
    opts = _lower(options or {})
    env = dict(os.environ if environ is None else environ)
    env.update({k[len(ENV_PREFIX):].upper(): v for k, v in opts.items() if k.startswith(ENV_PREFIX)})
    unsafe = bool(_pick(opts, UNSAFE_CONDITIONAL_CREATE))
    allow_http = _pick(opts, ALLOW_HTTP)
    if table.backend == "s3":
        config, http = _s3(table, opts, env)
    elif table.backend == "azure":
        config, http = _azure(table, opts, env)
    elif table.backend == "gcs":
        config, http = _gcs(opts, env), False
    elif table.backend == "hdfs":
        config, http = {"user": _pick(opts, HDFS_USER), "kerb_ticket": _pick(opts, HDFS_KERBEROS_TICKET_CACHE)}, False
    else:
        config, http = {}, False
    hadoop_conf = _hdfs_conf(options or {}) if table.backend == "hdfs" else {}
    return StorageOptions(tuple(sorted((k, v) for k, v in config.items() if v is not None)),
                          http if allow_http is None else allow_http, unsafe, tuple(sorted(hadoop_conf.items())))


def _s3(table: TableUri, opts: dict[str, str], env: dict[str, str]) -> tuple[dict[str, str], bool]:
    profile = aws_profile(env) if not env.get("AWS_ACCESS_KEY_ID") else {}
    config = {
        "access_key_id": profile.get("aws_access_key_id"),
        "secret_access_key": profile.get("aws_secret_access_key"),
        "session_token": profile.get("aws_session_token"),
        "region": profile.get("region"),
        "endpoint": profile.get("endpoint_url"),
    }
    config.update({k: v for k, v in {
        "access_key_id": env.get("AWS_ACCESS_KEY_ID"),
        "secret_access_key": env.get("AWS_SECRET_ACCESS_KEY"),
        "session_token": env.get("AWS_SESSION_TOKEN"),
        "region": env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION"),
        "endpoint": env.get("AWS_ENDPOINT_URL_S3") or env.get("AWS_ENDPOINT_URL"),
    }.items() if v})
    http = _truthy(env.get("AWS_ALLOW_HTTP"))
    path_style: bool | None = None
    # Hadoop's S3A keys, per bucket first (fs.s3a.bucket.<bucket>.<key>), as S3AFileSystem reads them.
    for key, name in (("endpoint", "endpoint"), ("access.key", "access_key_id"), ("secret.key", "secret_access_key"),
                      ("session.token", "session_token"), ("endpoint.region", "region")):
        value = opts.get(f"{HADOOP_PREFIX}fs.s3a.bucket.{table.bucket}.{key}") or opts.get(f"{HADOOP_PREFIX}fs.s3a.{key}")
        if value:
            config[name] = value
    style = opts.get(f"{HADOOP_PREFIX}fs.s3a.path.style.access")
    if style is not None:
        path_style = _truthy(style)
    ssl = opts.get(f"{HADOOP_PREFIX}fs.s3a.connection.ssl.enabled")
    if ssl is not None and not _truthy(ssl):
        http = True
    for prop, name in ((S3_ENDPOINT, "endpoint"), (S3_REGION, "region"), (S3_ACCESS_KEY, "access_key_id"),
                       (S3_SECRET_KEY, "secret_access_key"), (S3_SESSION_TOKEN, "session_token")):
        value = _pick(opts, prop)
        if value:
            config[name] = value
    if _pick(opts, S3_PATH_STYLE) is not None:
        path_style = _pick(opts, S3_PATH_STYLE)
    endpoint = config.get("endpoint")
    if endpoint and "://" not in endpoint:  # Hadoop's fs.s3a.endpoint is often a bare host
        endpoint = config["endpoint"] = f"{'http' if http else 'https'}://{endpoint}"
    if endpoint and endpoint.startswith("http://"):
        http = True
    if path_style is not None:
        config["virtual_hosted_style_request"] = str(not path_style).lower()
    config["region"] = config.get("region") or "us-east-1"  # the key is there (None) when nothing set it
    return config, http


def _azure(table: TableUri, opts: dict[str, str], env: dict[str, str]) -> tuple[dict[str, str], bool]:
    config: dict[str, str | None] = {
        "account_name": table.account or env.get("AZURE_STORAGE_ACCOUNT_NAME"),
        "account_key": env.get("AZURE_STORAGE_ACCOUNT_KEY"),
    }
    connection = _pick(opts, AZURE_CONNECTION_STRING) or env.get("AZURE_STORAGE_CONNECTION_STRING")
    if connection:
        config.update(parse_connection_string(connection))
    account = config.get("account_name")
    for domain in ("dfs", "blob"):
        key = opts.get(f"{HADOOP_PREFIX}fs.azure.account.key.{account}.{domain}.core.windows.net")
        if key:
            config["account_key"] = key
    for prop, name in ((AZURE_ACCOUNT_NAME, "account_name"), (AZURE_ACCOUNT_KEY, "account_key"),
                       (AZURE_ENDPOINT, "endpoint")):
        value = _pick(opts, prop)
        if value:
            config[name] = value
    endpoint = config.get("endpoint")
    return config, bool(endpoint and endpoint.startswith("http://"))


def parse_connection_string(connection: str) -> dict[str, str]:
    """Account, key, SAS and blob endpoint from an Azure storage connection string."""
    parts = dict(p.split("=", 1) for p in connection.split(";") if "=" in p)
    found = {
        "account_name": parts.get("AccountName"),
        "account_key": parts.get("AccountKey"),
        "sas_key": parts.get("SharedAccessSignature"),
        "endpoint": parts.get("BlobEndpoint"),
    }
    return {k: v for k, v in found.items() if v}


def _gcs(opts: dict[str, str], env: dict[str, str]) -> dict[str, str]:
    path = _pick(opts, GCS_SERVICE_ACCOUNT) or env.get("GOOGLE_APPLICATION_CREDENTIALS")
    return {"service_account_path": path} if path else {}


def _hdfs_conf(options: Mapping[str, str]) -> dict[str, str]:
    """The Hadoop keys for the HDFS client: ``spark.hadoop.dfs.*`` and ``spark.hadoop.fs.*``, then
    ``hoodie.storage.hdfs.conf.*`` over them. Read from the options as written, not lower-cased: Hadoop's
    keys are case-sensitive (``fs.defaultFS``, ``dfs.ha.namenodes.<nameservice>``)."""
    given = [(k, v) for k, v in options.items() if v is not None]
    conf = {k[len(HADOOP_PREFIX):]: v for k, v in given if k.lower().startswith(HDFS_HADOOP_PREFIXES)}
    conf.update({k[len(HDFS_CONF_PREFIX):]: v for k, v in given if k.lower().startswith(HDFS_CONF_PREFIX)})
    return conf
