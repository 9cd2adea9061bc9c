package org.apache.spark.sql.hoodie

import java.util

import scala.jdk.CollectionConverters._
import scala.util.Try

import org.apache.spark.sql.{classic, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{AttributeReference, Expression, GetStructField, Predicate,
  PredicateHelper, UnixMillis}
import org.apache.spark.sql.catalyst.plans.logical.{Filter, LocalRelation, LogicalPlan, Project, Union}
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.execution.datasources.{FileFormat, HadoopFsRelation, LogicalRelation}
import org.apache.spark.sql.execution.datasources.parquet.ParquetFileFormat
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.execution.datasources.v2.python.{PythonDataSourceCreationResult, PythonTable}
import org.apache.spark.sql.types.{DataType, DoubleType, FloatType, LongType, StringType, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * Plans every hoodie read: `spark.read.format("hoodie")` DataFrames and SQL tables alike.
 *
 * With `spark.hoodie.read.native` (the default), the Python source first lists the files its plan reads
 * ([[HoodieFiles]]); base files that hold their rows as they are (copy-on-write, read-optimized, and
 * merge-on-read slices without log files) are read by Spark's own parquet scan, and only the slices that
 * need log blocks merged are read by the Python reader, pinned to the instant the listing saw, handed the
 * plan the listing made (so it plans nothing again) and restricted to those file groups; the two are unioned. An incremental pull reads its base files with
 * Spark's scan under a `_hoodie_commit_time` range filter (row groups outside it are skipped).
 * Otherwise (`spark.hoodie.read.native=false`), every row is read by the Python reader: a
 * `format("hoodie")` relation gets a read-only [[HoodieReadTable]] with the [[HoodieScanBuilder]] of SQL
 * tables (so it prunes columns and takes filters) and SQL tables keep their own scans.
 *
 * PySpark plans `format("hoodie")` as a relation over its `PythonTable`, whose scan reads every column
 * and whose Python reader is planned once and reused by every later query on the DataFrame (so it cannot
 * take filters). This optimizer rule runs before Spark pushes projections and filters into scans, keeps
 * the relation's output attributes, and plans afresh for each execution; the analyzed plan stays what
 * PySpark or the catalog built (the DataFrame's schema, cache lookups, the analysis of a write).
 * Writes are never touched: a write command holds its target relation as its `table`, not as a child,
 * and the rule only visits children, so only relations that are read (a write's query too) are planned.
 */
case class HoodieReads(session: SparkSession) extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = {
    lazy val floatPredicates = HoodieReads.comparesFloats(plan)
    // each relation where it is read, with the conditions of the filter on it there (a relation may be read in
    // two places, a CTE's inlined twice, only one of them filtered); the plans put in its place hold no relation
    // this rule plans
    plan.transformDown {
      case filter @ Filter(condition, relation: DataSourceV2Relation) =>
        filter.copy(child = planned(relation, floatPredicates, HoodieReads.Conjuncts.of(condition)))
      case relation: DataSourceV2Relation => planned(relation, floatPredicates, Nil)
    }
  }

  private def planned(relation: DataSourceV2Relation, floatPredicates: => Boolean,
                      conditions: Seq[Expression]): LogicalPlan = HoodieReads.read(relation) match {
    case Some((readable, options)) if HoodieSource.nativeReads(session) =>
      native(relation, readable, options, floatPredicates, conditions)
    case Some((readable, options)) if relation.table.isInstanceOf[PythonTable] =>
      relation.copy(table = new HoodieReadTable(relation.table.name(), readable, options))
    case _ => relation
  }

  /** `conditions`: those of the filter on the relation, which the listing skips file slices by (its plan, kept
   * for later queries on the relation, is the whole one). */
  private def native(relation: DataSourceV2Relation, readable: StructType, options: Map[String, String],
                     floatPredicates: => Boolean, conditions: Seq[Expression]): LogicalPlan = {
    val previous = Option(HoodieReads.lastPlans.get(relation.table)).collect {
      case (made, plan) if made == options => HoodieSource.PlanOption -> plan
    }.orElse(HoodieReads.plannedSource(relation.table).map(HoodieSource.PlannedSourceOption -> _))
    val filters = HoodieFiles.queryFilters(conditions, relation.output).map(HoodieSource.QueryFiltersOption -> _)
    val listed = HoodieFiles.list(options ++ previous ++ filters)
    if (listed.plan.nonEmpty) HoodieReads.lastPlans.put(relation.table, (options, listed.plan))
    if (listed.files.isEmpty) return LocalRelation(relation.output)
    val hadoopConf = session.asInstanceOf[classic.SparkSession].sessionState.newHadoopConf()
    val (spark, listing) = listed.files.find(f => f.native || f.changes)
        .map(base => HoodieFiles.sparkReads(base.path, listed, hadoopConf)) match {
      case Some(Left(whyNot)) =>
        HoodieReads.log.info(s"hoodie read of ${relation.table.name()}: $whyNot, so the Python reader reads all its files")
        (false, listed)
      case Some(Right(respell)) => (true, listed.copy(files = listed.files.map(f => f.copy(path = respell(f.path)))))
      case None => (true, listed)
    }
    val parquet = if (spark) listing.files.filter(_.native) else Nil
    val changed = if (spark) listing.files.filter(f => !f.native && f.changes) else Nil
    val merged = if (spark) listing.files.filter(f => !f.native && !f.changes) else listing.files
    val pinned = options + (HoodieSource.PlanInstantOption -> listing.instant) + (HoodieSource.PlanOption -> listing.plan)
    val python = (files: Seq[HoodieFiles.Planned], output: Seq[AttributeReference], extra: Map[String, String],
                  columns: StructType) => {
      // the replaced rows' scan always gets its groups: their order gives each base file its ordinal; so does a
      // read of a listing that left file slices of the plan out
      val groups = if (files.size == listing.files.size && listing.whole && !extra.contains(HoodieSource.LogChangesOption))
        Map.empty[String, String] else Map(HoodieSource.FileGroupsOption -> files.map(_.group).mkString("\n"))
      relation.copy(table = new HoodieReadTable(relation.table.name(), columns, pinned ++ groups ++ extra),
        output = output)
    }
    val positions = Seq(AttributeReference(HoodieSource.ReplacedFileColumn, LongType)(),
      AttributeReference(HoodieSource.ReplacedRowColumn, LongType)())
    val parts = Seq[(Boolean, Seq[AttributeReference] => LogicalPlan)](
      parquet.nonEmpty -> (output => parquetScan(output, parquet, listing, floatPredicates)),
      // the replaced rows are no table columns: their scan reads exactly them
      changed.nonEmpty -> (output => lessReplaced(output, changed, listing, floatPredicates, python(changed, positions,
        Map(HoodieSource.LogChangesOption -> "replaced"), StructType(positions.map(a => StructField(a.name, a.dataType)))))),
      changed.nonEmpty -> (output => python(changed, output, Map(HoodieSource.LogChangesOption -> "rows"), readable)),
      merged.nonEmpty -> (output => python(merged, output, Map.empty, readable))
    ).collect { case (true, part) => part }
    val plans = parts.head(relation.output) +: parts.tail.map(part => part(relation.output.map(_.newInstance())))
    if (plans.size == 1) plans.head else Union(plans)
  }

  /** Spark's parquet scan of the base files of slices with log changes, less the base rows the Python reader
   * says they replace (`replaced`: each named by its base file's ordinal among `files` and its row index), by a
   * filter on what Spark's scan knows without decoding a column: the ordinal [[HoodieFileIndex]] gives each file
   * as its modification time (`_metadata.file_modification_time`, in milliseconds) and `_metadata.row_index`
   * (0-based, in file order). The key columns are read only when the query needs them.
   *
   * The replaced rows are read here, while the query is planned (a Spark job of the Python reader's tasks, as
   * the listing before it is a call into Python), and broadcast as a bitmap per file ([[HoodieKeptRow]]): a
   * scanned row is then looked up with one array read. A broadcast anti join on `ordinal << 32 | row` did the
   * same through a hash map of every replaced row, probed by every scanned row (at 20M rows with 200k replaced,
   * 4.4 CPU s of a 22 CPU s snapshot, where the plain scan took 12.8). */
  private def lessReplaced(output: Seq[AttributeReference], files: Seq[HoodieFiles.Planned],
                           listing: HoodieFiles.Listing, floatPredicates: Boolean, replaced: LogicalPlan): LogicalPlan = {
    val spark = session.asInstanceOf[classic.SparkSession]
    val found = classic.Dataset.ofRows(spark, replaced).collect()
    val scan = parquetScan(output, files, listing, floatPredicates, positions = !found.isEmpty)
    if (found.isEmpty) return Project(output, scan)  // logs that only insert: every base row is kept
    val bitmaps = HoodieKeptRow.bitmaps(found.map(_.getLong(0)), found.map(_.getLong(1)))
    val metadata = scan.output.last  // the file metadata struct parquetScan adds
    val fields = metadata.dataType.asInstanceOf[StructType]
    val field = (name: String) => GetStructField(metadata, fields.fieldIndex(name), Some(name))
    val kept = HoodieKeptRow(UnixMillis(field(FileFormat.FILE_MODIFICATION_TIME)), field(ParquetFileFormat.ROW_INDEX),
      spark.sparkContext.broadcast(bitmaps))
    Project(output, Filter(kept, scan))
  }

  /** Spark's parquet scan of exactly these base files, as the relation's columns (by name); with `positions`,
   * followed by the file metadata struct (`_metadata`: file name, row index, ...).
   *
   * When the query compares floating-point values (`floatPredicates`) and the scan reads such a column, parquet-mr
   * skips no row group by its min/max statistics or column indexes: pyarrow's writer leaves NaN out of them, so a
   * row group holding NaN would be skipped for `d = NaN` or `d > max`, which Spark (NaN above every value) keeps.
   * Our base files carry no min/max for a chunk with NaN since (`storage.parquet.statistics_columns`), but those
   * of earlier versions do. Dictionary filtering stays: it compares the stored values, NaN included. */
  private def parquetScan(output: Seq[AttributeReference], files: Seq[HoodieFiles.Planned],
                          listing: HoodieFiles.Listing, floatPredicates: Boolean,
                          positions: Boolean = false): LogicalPlan = {
    val commitTime = output.find(_.name == HoodieSource.CommitTimeColumn)
    val filtered = listing.begin.isDefined || listing.commits.isDefined
    val read = if (filtered && commitTime.isEmpty) {
      output :+ AttributeReference(HoodieSource.CommitTimeColumn, StringType)()
    } else output
    // no partition columns: hoodie base files hold them, so Spark takes none from the paths
    val dataSchema = StructType(read.map(a => StructField(a.name, a.dataType, a.nullable)))
    val spark = session.asInstanceOf[classic.SparkSession]
    val boundsOff = floatPredicates && dataSchema.existsRecursively(HoodieReads.isFloating)
    val hadoopOptions = if (boundsOff) HoodieReads.NoStatisticsFiltering else Map.empty[String, String]
    val relation = HadoopFsRelation(new HoodieFileIndex(files), StructType(Nil), dataSchema, None,
      new ParquetFileFormat(), hadoopOptions)(spark)
    // the file metadata struct, made here: `withMetadataColumns` adds none to the output of a SQL table,
    // whose meta columns Spark takes for the relation's metadata columns
    val metadata = if (positions) Seq(relation.fileFormat.createFileMetadataCol()) else Nil
    val scan = LogicalRelation(relation, read ++ metadata, None, isStreaming = false, None)
    read.find(_.name == HoodieSource.CommitTimeColumn).flatMap(listing.commitFilter) match {
      case None => scan
      case Some(kept) => Project(output ++ scan.output.drop(read.size), Filter(kept, scan))
    }
  }
}

object HoodieReads {
  private val log = org.slf4j.LoggerFactory.getLogger(classOf[HoodieReads])

  /** The plan the last listing of a relation's read made, and the options it was made with, by the relation's
   * table (a DataFrame keeps its relation, so each action plans afresh from the same one): the next listing of
   * the same read takes it when the table has had no write since, checked by one listing of the timeline.
   * Weakly held: it goes with the relation. */
  private val lastPlans =
    java.util.Collections.synchronizedMap(new java.util.WeakHashMap[Table, (Map[String, String], String)]())

  /** The Python data source PySpark made for a `format("hoodie")` DataFrame, as Spark keeps it (pickled after its
   * `schema()` planned the read, in the relation's `PythonDataSourceV2`, to make the reader from), in base64: the
   * first listing of the DataFrame takes its plan. None for SQL tables, and where Spark's private fields (read by
   * reflection) are not as in Spark 4. */
  private def plannedSource(table: Table): Option[String] = table match {
    case python: PythonTable => Try {
      def field(owner: AnyRef, name: String): AnyRef = {
        val f = owner.getClass.getDeclaredField(name)
        f.setAccessible(true)
        f.get(owner)
      }
      val made = field(field(python, "ds"), "dataSourceInPython").asInstanceOf[PythonDataSourceCreationResult]
      java.util.Base64.getEncoder.encodeToString(made.dataSource)
    }.toOption
    case _ => None
  }

  /** parquet-mr's reader options (a scan's relation options reach its Hadoop configuration) turning off its
   * row-group filtering by min/max statistics and by column indexes (`ParquetInputFormat`). */
  private val NoStatisticsFiltering = Map("parquet.filter.stats.enabled" -> "false",
    "parquet.filter.columnindex.enabled" -> "false")

  private object Conjuncts extends PredicateHelper {
    def of(condition: Expression): Seq[Expression] = splitConjunctivePredicates(condition)
  }

  private def isFloating(dataType: DataType): Boolean = dataType == FloatType || dataType == DoubleType

  /** Some predicate of the plan compares a floating-point value (a column, a struct field, an expression):
   * Spark may push it into a parquet scan. */
  private def comparesFloats(plan: LogicalPlan): Boolean = plan.exists(_.expressions.exists(_.exists {
    case predicate: Predicate => predicate.children.exists(child => isFloating(child.dataType))
    case _ => false
  }))

  /** The columns a hoodie relation can read (meta columns included) and the options of its read (over
   * the session's `SET hoodie.*` options, as Hudi's reads take them); None for relations of other sources. */
  private def read(relation: DataSourceV2Relation): Option[(StructType, Map[String, String])] = {
    val options = relation.options.asCaseSensitiveMap().asScala.toMap
    if (options.keySet.exists(_.equalsIgnoreCase(HoodieCall.ProcedureOption))) return None  // a CALL's result
    relation.table match {
      case python: PythonTable if python.name().equalsIgnoreCase(HoodieSource.Name) =>
        Some((python.schema(), HoodieSource.overlay(HoodieSource.sessionOptions(), options)))
      case sql: HoodieSqlTable => Some((sql.readableSchema, sql.readOptions ++ options))
      case _ => None
    }
  }
}

/**
 * A hoodie table for reading only, by the Python reader: the columns it can read (meta columns as
 * ordinary columns) and the options of the read (path, query type, instants, whatever the user gave,
 * and the pin of a natively planned read).
 */
private class HoodieReadTable(tableName: String, readable: StructType, options: Map[String, String])
  extends Table with SupportsRead {
  override def name(): String = tableName

  override def schema(): StructType = readable

  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ)

  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder =
    new HoodieScanBuilder(readable, options ++ scanOptions.asCaseSensitiveMap().asScala)
}
