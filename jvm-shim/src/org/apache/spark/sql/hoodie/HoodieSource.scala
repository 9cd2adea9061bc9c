package org.apache.spark.sql.hoodie

import java.util.Properties

import scala.jdk.CollectionConverters._
import scala.util.{Try, Using}

import org.apache.hadoop.fs.{FileSystem, Path}

import org.apache.spark.sql.{classic, SparkSession}
import org.apache.spark.sql.execution.datasources.v2.python.PythonDataSourceV2
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/** How the shim reaches the Python data source `hoodie`, which owns everything about the format. */
object HoodieSource {
  val Name = "hoodie"

  /** Columns every hoodie table row carries; SQL exposes them as metadata columns, not in `SELECT *`. */
  val CommitTimeColumn = "_hoodie_commit_time"
  val RecordKeyColumn = "_hoodie_record_key"
  val PartitionPathColumn = "_hoodie_partition_path"
  val MetaColumns: Seq[String] =
    Seq(CommitTimeColumn, "_hoodie_commit_seqno", RecordKeyColumn, PartitionPathColumn, "_hoodie_file_name")

  /** Input column that marks rows to delete in an upsert; the Python writer never stores it. */
  val DeleteMarkerColumn = "_hoodie_is_delete"

  val OperationOption = "hoodie.datasource.write.operation"
  val QueryOption = "hoodie.datasource.query.type"
  val AsOfOption = "as.of.instant"
  /** Tells the Python source to take pushed filters (safe here: each scan has a fresh source). */
  val PushdownOption = "hoodie.datasource.read.filter.pushdown"
  /** Tells the Python source to list the files its read plan reads ([[HoodieFiles]]), not to read rows. */
  val PlanFilesOption = "hoodie.datasource.read.plan.files"
  /** The conditions of the query's filter on the relation a file listing is for ([[HoodieFiles.queryFilters]]):
   * the listing leaves out the file slices their column ranges rule out (data skipping). */
  val QueryFiltersOption = "hoodie.datasource.read.plan.filters"
  /** Pins a Python read to the instant its file listing saw. */
  val PlanInstantOption = "hoodie.datasource.read.plan.instant"
  /** The table and plan a listing was made from ([[HoodieFiles.Listing]]`.plan`), handed back to the Python
   * source so it does not plan the read again (`hoodie_datasource.spark.file_listing.carried_plan`). */
  val PlanOption = "hoodie.datasource.read.plan"
  /** The data source PySpark made for a `format("hoodie")` DataFrame, pickled after its `schema()` planned the
   * read (base64): the first listing of the DataFrame takes that plan. */
  val PlannedSourceOption = "hoodie.datasource.read.plan.source"
  /** Restricts a Python read to these file groups (`partition/fileId`, one per line). */
  val FileGroupsOption = "hoodie.datasource.read.plan.file.groups"
  /** Tells the Python source to read the log changes of its file slices: `rows` (the log records that win)
   * or `replaced` (base file ordinal, the file group's position in `FileGroupsOption`, and row index, of the base
   * rows they replace). */
  val LogChangesOption = "hoodie.datasource.read.plan.log.changes"
  /** The replaced rows' columns (`hoodie_datasource.spark.shim_options`). */
  val ReplacedFileColumn = "_hoodie_file_ordinal"
  val ReplacedRowColumn = "_hoodie_row_index"
  /** Tells the Python source to commit these columns (a `StructType` as JSON) as the table's schema first. */
  val AlterSchemaOption = "hoodie.datasource.write.alter.schema"
  /** Tells the Python source to return the table's `hoodie.properties` as schema metadata. */
  val TablePropertiesOption = "hoodie.datasource.read.table.properties"
  /** Tells the Python writer that Spark clustered the rows by the table's partition columns. */
  val ClusteredOption = "hoodie.datasource.write.input.clustered"
  /** The values of an INSERT OVERWRITE's static `PARTITION (...)` clause (JSON: column to value) for the Python writer. */
  val StaticPartitionOption = "hoodie.datasource.write.static.partition"

  /** `spark.hoodie.sql.clusteredWrites` (default true): partitioned appends cluster their input by partition
   * and write in the tasks; false stages the rows and writes them in the commit (as without the shim). */
  def clusteredWrites: Boolean =
    SparkSession.active.conf.get("spark.hoodie.sql.clusteredWrites", "true").equalsIgnoreCase("true")

  /** `spark.hoodie.read.native` (default true): Spark's parquet scan reads base files that need no merge. */
  def nativeReads(session: SparkSession): Boolean =
    session.conf.get("spark.hoodie.read.native", "true").equalsIgnoreCase("true")

  /** Hudi's SQL table properties (besides `hoodie.*` keys) that are options of the table. */
  val SqlTableProperties: Set[String] =
    Set("primarykey", "precombinefield", "type", "payloadclass")

  /** The session's Hadoop object-store keys: the Python source reads a table's endpoint and credentials from them. */
  private val HadoopStorageKeys = Seq("spark.hadoop.fs.s3a.", "spark.hadoop.fs.azure.")

  /** The session's Hadoop object-store keys (`spark.hadoop.fs.s3a.*`, `spark.hadoop.fs.azure.*`): every call into
   * the Python source carries them, since it runs without a session to ask for the table's endpoint and credentials. */
  def storageOptions(): Map[String, String] =
    SparkSession.active.conf.getAll.filter { case (k, _) => HadoopStorageKeys.exists(k.toLowerCase.startsWith) }

  /** The session's `SET hoodie.*` options, which reach every SQL read and write as in Hudi's SQL, and its
   * Hadoop object-store keys. */
  def sessionOptions(): Map[String, String] =
    SparkSession.active.conf.getAll.filter { case (k, _) => k.toLowerCase.startsWith("hoodie.") } ++ storageOptions()

  /** What defines the table (Hudi's `overridingOpts` in `ProvidesHoodieConfig`): the catalog's, never a session's. */
  private val TableDefining = Set("path", "hoodie.datasource.write.recordkey.field", "hoodie.datasource.write.partitionpath.field",
    "hoodie.datasource.write.precombine.field", "hoodie.datasource.write.table.type", "hoodie.datasource.write.storage.type",
    "hoodie.datasource.write.table.name", "hoodie.datasource.write.hive_style_partitioning",
    "hoodie.datasource.write.partitionpath.urlencode", "hoodie.datasource.write.keygenerator.class")

  /** Session options a SQL write takes: all but the table-defining ones (and `hoodie.table.*` table configs). */
  def sessionWriteOptions(): Map[String, String] = sessionOptions().filter { case (k, _) =>
    val key = k.toLowerCase
    !TableDefining.contains(key) && !key.startsWith("hoodie.table.")
  }

  /** `top` over `base`, keys compared case-insensitively (Spark's option maps are case-insensitive). */
  def overlay(base: Map[String, String], top: Map[String, String]): Map[String, String] = {
    val lowered = top.keySet.map(_.toLowerCase)
    base.filter { case (k, _) => !lowered.contains(k.toLowerCase) } ++ top
  }

  def isHoodie(provider: Option[String]): Boolean = provider.exists(_.equalsIgnoreCase(Name))

  /** A fresh Python data source: each scan or write gets its own, so no read plan is reused across queries. */
  def dataSource(): PythonDataSourceV2 = {
    val ds = new PythonDataSourceV2()
    ds.setShortName(Name)
    ds
  }

  def options(map: Map[String, String]): CaseInsensitiveStringMap = new CaseInsensitiveStringMap(map.asJava)

  /** The schema the Python source infers with these options (its errors message first: [[HoodieErrors.fromPython]]). */
  def inferSchema(opts: Map[String, String]): StructType =
    HoodieErrors.fromPython(dataSource().inferSchema(options(overlay(storageOptions(), opts))))

  /** The columns of the table at `path` as the Python source reads them, without the meta columns. */
  def dataSchema(path: String): StructType =
    StructType(inferSchema(Map("path" -> path)).filterNot(f => MetaColumns.contains(f.name)))

  /** Schemes whose Hadoop file system takes its settings where the table's storage takes them: local files,
   * and HDFS (our HDFS storage loads the same Hadoop configuration). */
  private val HadoopConfigured = Set("file", "hdfs", "viewfs")

  /** Hadoop's file system of `location` when it reads the table as the table's storage does, else None: then
   * the Python source, which reads every store the table format supports, answers. Not object stores even with
   * their connector on the classpath (hadoop-aws's S3A): a table's storage may take their endpoint and
   * credentials from its options or the environment, which a file system Hadoop made for the bucket from the
   * session's settings (and keeps for the JVM's life) never sees, and a listing that failed there would read
   * as a location without a table. */
  def hadoopFileSystem(location: String): Option[FileSystem] = {
    val path = new Path(location)
    if (!HadoopConfigured.contains(Option(path.toUri.getScheme).getOrElse("file"))) return None
    val conf = SparkSession.active.asInstanceOf[classic.SparkSession].sessionState.newHadoopConf()
    Try(path.getFileSystem(conf)).toOption
  }

  /** `.hoodie/hoodie.properties` of the table at `location`, empty when there is no table there yet. */
  def tableProperties(location: String): Map[String, String] = hadoopFileSystem(location) match {
    case Some(fs) =>
      val file = new Path(new Path(location, ".hoodie"), "hoodie.properties")
      if (!Try(fs.getFileStatus(file).isFile).getOrElse(false)) Map.empty
      else {
        val props = new Properties()
        Using.resource(fs.open(file))(props.load)
        props.asScala.toMap
      }
    case None =>
      val m = inferSchema(Map("path" -> location, TablePropertiesOption -> "true")).fields.head.metadata
      if (m.getLong("count") == 0) Map.empty
      else m.getStringArray("keys").zip(m.getStringArray("values")).toMap
  }

  /** Fields of a comma separated field list property (`city:SIMPLE` names the field `city`). */
  def fields(value: Option[String]): Seq[String] =
    value.toSeq.flatMap(_.split(",")).map(_.trim.split(":")(0)).filter(_.nonEmpty)
}
