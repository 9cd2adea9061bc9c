"""Hadoop's S3A settings (``fs.s3a.*``) of a table's resolved S3 storage options: what Spark's own S3A file
system (hadoop-aws's ``S3AFileSystem``) is set to when it reaches the store our storage reaches.

Why: the jvm-shim hands base files to Spark's parquet scan, which opens ``s3a://`` files through S3A. Hadoop
makes that file system once per bucket from the session's Hadoop configuration and keeps it for the JVM's
life (``FileSystem.CACHE``, keyed by scheme, bucket and user, not by settings), so a read cannot give it
settings of its own: a read's ``hoodie.storage.s3.*`` options, or ``AWS_*`` variables the driver exported
after the JVM started, reach our storage and never Spark's. So the shim compares ``s3a_identity`` of the
table with the Hadoop configuration's settings for the bucket, and Spark reads the files only where they
agree; elsewhere our reader reads them. Hudi users set these keys already (``spark.hadoop.fs.s3a.*`` when
the session starts), and our storage reads those keys too, so for them the two agree.
"""

from __future__ import annotations

from hoodie_datasource.storage.options import StorageOptions

ENDPOINT = "fs.s3a.endpoint"
PATH_STYLE = "fs.s3a.path.style.access"
SSL = "fs.s3a.connection.ssl.enabled"
REGION = "fs.s3a.endpoint.region"
ACCESS_KEY = "fs.s3a.access.key"
SECRET_KEY = "fs.s3a.secret.key"
SESSION_TOKEN = "fs.s3a.session.token"


def s3a_settings(options: StorageOptions) -> dict[str, str]:
    """The ``fs.s3a.*`` keys (secrets too) that set S3A to the store and credentials of ``options``.

    obstore addresses buckets by path unless told otherwise (``virtual_hosted_style_request``), S3A by
    host name (``bucket.endpoint``, which an S3 emulator on loopback does not answer): with an endpoint,
    path-style access is set to ours."""
    config = dict(options.config)
    endpoint = config.get("endpoint")
    settings = {REGION: config.get("region"), ACCESS_KEY: config.get("access_key_id"),
                SECRET_KEY: config.get("secret_access_key"), SESSION_TOKEN: config.get("session_token")}
    if endpoint:
        settings[ENDPOINT] = endpoint
        settings[SSL] = str(not endpoint.startswith("http://")).lower()
        settings[PATH_STYLE] = str(config.get("virtual_hosted_style_request") != "true").lower()
    return {key: value for key, value in settings.items() if value}


def s3a_identity(options: StorageOptions) -> dict[str, str]:
    """What decides the store and the account S3A reaches: its endpoint ("" for AWS itself), its addressing
    when an endpoint is set, and the access key id ("" for the default provider chain: the JVM's
    environment, profile or instance role). The region is left out (S3A finds an AWS bucket's region itself,
    where ours defaults to us-east-1), and so is the secret: the access key names the credentials."""
    settings = s3a_settings(options)
    identity = {ENDPOINT: settings.get(ENDPOINT, ""), ACCESS_KEY: settings.get(ACCESS_KEY, "")}
    if PATH_STYLE in settings:
        identity[PATH_STYLE] = settings[PATH_STYLE]
    return identity

