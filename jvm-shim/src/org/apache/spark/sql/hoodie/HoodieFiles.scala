package org.apache.spark.sql.hoodie

import scala.jdk.CollectionConverters._
import scala.util.Try

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.expressions.{And, AttributeReference, Expression, GreaterThan, In,
  LessThanOrEqual, Literal}
import org.apache.spark.sql.catalyst.expressions.variant.VariantExpressionEvalUtils
import org.apache.spark.sql.execution.datasources.{DataSourceStrategy, FileIndex, PartitionDirectory}
import org.apache.spark.sql.sources
import org.apache.spark.sql.types.{ArrayType, StructType}

/**
 * The files a hoodie read plans to read, listed by the Python source (`hoodie_datasource.read.planned_files`).
 * It comes back as the metadata of the schema the source infers with `hoodie.datasource.read.plan.files`
 * (`hoodie_datasource.spark.file_listing`): a call into Python beside the driver, with no Spark job, so
 * the table format stays in Python.
 */
object HoodieFiles {
  /** One file slice (of file group `partition/fileId`): its base file (absolute local path or full URI, and
   * bytes) when `native` (read as it is) or `changes` (read less the rows its log files replace, the Python
   * reader adding the log records that win), else a slice the Python reader merges. */
  case class Planned(group: String, path: String, size: Long, native: Boolean, changes: Boolean)

  /** What a read plans: its file slices, the newest completed write it shows, for an incremental pull the
   * commit time its rows come after (or, on a table that ranges pulls by completion time, `commits`: the commit
   * times of its rows), for a table on S3 the S3A settings that reach its store
   * (`hoodie_datasource.storage.s3a.s3a_identity`: `fs.s3a.*` keys), and the plan itself, opaque here, for the
   * Python reads of the same query ([[HoodieSource.PlanOption]]), of which `files` are all slices unless
   * data skipping left some out (not `whole`). */
  case class Listing(files: Seq[Planned], instant: String, begin: Option[String], s3a: Map[String, String],
                     plan: String, whole: Boolean = true, commits: Option[Seq[String]] = None) {
    /** The rows an incremental pull keeps, by their commit time `time`: those of the commits it picked, or
     * those committed after `begin` up to `instant`; None for other reads. */
    def commitFilter(time: Expression): Option[Expression] =
      commits.map(times => In(time, times.map(Literal(_)))).orElse(
        begin.map(b => And(GreaterThan(time, Literal(b)), LessThanOrEqual(time, Literal(instant)))))
  }

  /** A planned file's Hadoop path: local files are plain absolute paths, others full URIs. */
  def path(planned: String): Path = if (planned.startsWith("/")) new Path("file", null, planned) else new Path(planned)

  private val S3Spellings = Set("s3", "s3n")
  private val S3AFileSystemClass = "org.apache.hadoop.fs.s3a.S3AFileSystem"

  private def fileSystemClass(scheme: String, conf: Configuration): Option[Class[_]] =
    Try(FileSystem.getFileSystemClass(scheme, conf)).toOption

  /** How Spark's Hadoop file system reads the listed files, given one of them: `Right(respell)` (their names as
   * Spark opens them), or `Left(why not)`. Local files always; an object store with its Hadoop connector on the
   * classpath (hadoop-aws's S3A for `s3a://`; `s3://` and `s3n://` files, which Apache Hadoop has no file system
   * for unless `fs.s3.impl` names one, are opened as `s3a://`: S3A reads any bucket, from its `fs.s3a.*` settings).
   * S3A is made once per bucket from the session's Hadoop configuration and kept (Hadoop's `FileSystem.CACHE`),
   * so a read cannot hand it settings: Spark reads only when the configuration's settings for the bucket are
   * the table storage's (`listing.s3a`), else a read's `hoodie.storage.s3.*` options would reach our storage and
   * Spark would read the bucket of another endpoint, or with other credentials. */
  def sparkReads(planned: String, listing: Listing, conf: Configuration): Either[String, String => String] = {
    if (planned.startsWith("/")) return Right(identity)
    val uri = path(planned).toUri
    val scheme = uri.getScheme
    val candidates = scheme +: (if (S3Spellings.contains(scheme)) Seq("s3a") else Nil)
    candidates.flatMap(s => fileSystemClass(s, conf).map(s -> _)).headOption match {
      case None => Left(s"Spark's Hadoop file system cannot read $scheme:// files (no connector such as hadoop-aws " +
        "on the classpath)")
      case Some((readAs, fsClass)) =>
        val respell = (p: String) => if (readAs == scheme || p.isEmpty) p else readAs + p.substring(scheme.length)
        val differing = if (fsClass.getName != S3AFileSystemClass) Nil else s3aDiffers(uri.getAuthority, listing.s3a, conf)
        if (differing.isEmpty) Right(respell)
        else Left(s"Spark's S3A settings for bucket ${uri.getAuthority} are not those of the table's storage " +
          s"(${differing.mkString(", ")}; set them as spark.hadoop.fs.s3a.* or spark.hadoop.fs.s3a.bucket.<bucket>.* " +
          "when the session starts: Hadoop makes S3A once per bucket from the session's settings, so a read's " +
          "hoodie.storage.s3.* options and AWS_* variables set after the JVM started never reach it)")
    }
  }

  /** The keys of `expected` (`fs.s3a.*`) whose value S3A takes for `bucket` (its per-bucket key
   * `fs.s3a.bucket.<bucket>.*` over the global one, as `S3AUtils.propagateBucketOptions`) differs from it; "" is
   * unset. Endpoints compare with their scheme (a bare host is https unless `fs.s3a.connection.ssl.enabled`
   * is false) and without a trailing slash; path-style access is false unless set; without an access key S3A's
   * default provider chain takes the JVM's `AWS_ACCESS_KEY_ID` (`EnvironmentVariableCredentialsProvider`). */
  private def s3aDiffers(bucket: String, expected: Map[String, String], conf: Configuration): Seq[String] = {
    def setting(key: String): String =
      Option(conf.getTrimmed(s"fs.s3a.bucket.$bucket.${key.stripPrefix("fs.s3a.")}"))
        .orElse(Option(conf.getTrimmed(key))).getOrElse("")
    val ssl = !setting("fs.s3a.connection.ssl.enabled").equalsIgnoreCase("false")
    def endpoint(value: String): String =
      if (value.isEmpty) "" else ((if (value.contains("://")) value else (if (ssl) "https://" else "http://") + value)
        .stripSuffix("/").toLowerCase)
    def same(key: String, value: String): Boolean = key match {
      case "fs.s3a.endpoint" => endpoint(setting(key)) == endpoint(value)
      case "fs.s3a.path.style.access" => setting(key).equalsIgnoreCase("true") == value.equalsIgnoreCase("true")
      case "fs.s3a.access.key" => Some(setting(key)).filter(_.nonEmpty).orElse(sys.env.get("AWS_ACCESS_KEY_ID"))
        .getOrElse("") == value
      case _ => setting(key) == value
    }
    expected.keys.toSeq.sorted.filterNot(key => same(key, expected(key)))
  }

  def list(options: Map[String, String]): Listing = {
    val schema = HoodieSource.inferSchema(options + (HoodieSource.PlanFilesOption -> "true"))
    val m = schema.fields.head.metadata
    if (m.getLong("count") == 0) return Listing(Nil, "", None, Map.empty, "")
    val (ids, paths, sizes, native, changes) = (m.getStringArray("group"), m.getStringArray("path"),
      m.getLongArray("size"), m.getBooleanArray("native"), m.getBooleanArray("changes"))
    val s3a = if (m.contains("s3a.keys")) m.getStringArray("s3a.keys").zip(m.getStringArray("s3a.values")).toMap
      else Map.empty[String, String]
    // an empty list would read back from the metadata JSON as an array of longs: none picked is a count of 0
    val commits = if (!m.contains("commits.count")) None
      else if (m.getLong("commits.count") == 0) Some(Nil) else Some(m.getStringArray("commits").toSeq)
    Listing(ids.indices.map(i => Planned(ids(i), paths(i), sizes(i), native(i), changes(i))), m.getString("instant"),
      Option(m.getString("begin")).filter(_.nonEmpty), s3a, m.getString("plan"), m.getLong("skipped") == 0, commits)
  }

  private val FilterLeaves = Set("EqualTo", "EqualNullSafe", "GreaterThan", "GreaterThanOrEqual", "LessThan",
    "LessThanOrEqual", "In", "IsNull", "IsNotNull", "StringStartsWith", "StringEndsWith", "StringContains")

  /** `conditions` on a relation of `output`, as the listing takes them ([[HoodieSource.QueryFiltersOption]]): the
   * ones Spark translates to data source filters (`DataSourceStrategy.translateFilter`, top-level columns), as a
   * JSON list of `And`, `Or` and `Not` trees whose leaves Spark serializes as for Python data sources
   * (`UserDefinedPythonDataSourceFilterPushdownRunner`: name, column path, value as a variant of the column's type),
   * so PySpark reads them back as the filters it pushes. None when none translates. */
  def queryFilters(conditions: Seq[Expression], output: Seq[AttributeReference]): Option[String] = {
    val types = output.map(a => a.name -> a.dataType).toMap
    def node(fields: (String, AnyRef)*): AnyRef = fields.toMap.asJava
    def tree(filter: sources.Filter): Option[AnyRef] = filter match {
      case sources.And(left, right) => for (l <- tree(left); r <- tree(right)) yield node("name" -> "And",
        "children" -> Seq(l, r).asJava)
      case sources.Or(left, right) => for (l <- tree(left); r <- tree(right)) yield node("name" -> "Or",
        "children" -> Seq(l, r).asJava)
      case sources.Not(child) => tree(child).map(c => node("name" -> "Not", "child" -> c))
      case leaf: Product if FilterLeaves(leaf.getClass.getSimpleName) =>
        val name = leaf.getClass.getSimpleName
        val column = leaf.productElement(0).toString
        types.get(column).flatMap { dataType =>
          val value: Option[Option[AnyRef]] = if (leaf.productArity < 2) Some(None) else Try {
            val variant = VariantExpressionEvalUtils.castToVariant(
              CatalystTypeConverters.convertToCatalyst(leaf.productElement(1)),
              if (name == "In") ArrayType(dataType) else dataType)
            val encode = java.util.Base64.getEncoder
            Some(node("value" -> encode.encodeToString(variant.getValue),
              "metadata" -> encode.encodeToString(variant.getMetadata)))
          }.toOption
          value.map(v => node(Seq[(String, AnyRef)]("name" -> name, "columnPath" -> Seq(column).asJava,
            "isNegated" -> java.lang.Boolean.FALSE) ++ v.map("value" -> _): _*))
        }
      case _ => None
    }
    val filters = conditions.flatMap(c => DataSourceStrategy.translateFilter(c, supportNestedPredicatePushdown = false))
      .flatMap(tree)
    if (filters.isEmpty) None else Some(new ObjectMapper().writeValueAsString(filters.asJava))
  }
}

/** Exactly the planned base files, with the sizes the listing measured (no file system calls here). A file's
 * modification time is its ordinal among `files`, in milliseconds: the scan's `_metadata.file_modification_time`
 * names the file by a long (no parquet reader looks at it). */
private class HoodieFileIndex(files: Seq[HoodieFiles.Planned]) extends FileIndex {
  private val statuses: Array[FileStatus] = files.zipWithIndex.map { case (f, ordinal) =>
    new FileStatus(f.size, false, 1, 0L, ordinal.toLong, HoodieFiles.path(f.path))
  }.toArray

  override def rootPaths: Seq[Path] = statuses.map(_.getPath.getParent).distinct.toSeq

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, statuses))

  override def inputFiles: Array[String] = statuses.map(_.getPath.toString)

  override def refresh(): Unit = ()

  override def sizeInBytes: Long = statuses.map(_.getLen).sum

  override def partitionSchema: StructType = StructType(Nil)
}
