package org.apache.spark.sql.hoodie

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType}
import org.apache.spark.sql.connector.catalog.{MetadataColumn, SupportsMetadataColumns, SupportsRead, SupportsWrite, Table, TableCapability, TableCatalog, V1Table}
import org.apache.spark.sql.connector.catalog.TableCapability._
import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.{Expressions, NamedReference, SortOrder, Transform, Expression => V2Expression}
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.expressions.filter.{AlwaysTrue, Predicate}
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownFilters, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.connector.write.{BatchWrite, LogicalWriteInfo, LogicalWriteInfoImpl, RequiresDistributionAndOrdering, SupportsDynamicOverwrite, SupportsOverwriteV2, Write, WriteBuilder}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.execution.datasources.v2.python.{PythonScanBuilder, PythonWrite}
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.{DataType, StringType, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * A hoodie table of the session catalog: its catalog definition plus the options of one query.
 *
 * Reads and writes go to the Python data source with `options`: the location as `path`, the table's
 * OPTIONS, its hoodie TBLPROPERTIES and the query's own options (query type, instant, operation).
 */
class HoodieSqlTable(
    val catalogTable: CatalogTable,
    val options: Map[String, String],
    override val schema: StructType)
  extends Table with SupportsRead with SupportsWrite with SupportsMetadataColumns {

  override def name(): String = catalogTable.identifier.unquotedString

  override def capabilities(): util.Set[TableCapability] =
    util.EnumSet.of(BATCH_READ, BATCH_WRITE, TRUNCATE, OVERWRITE_DYNAMIC, OVERWRITE_BY_FILTER)

  override def partitioning(): Array[Transform] =
    catalogTable.partitionColumnNames.map(c => Expressions.identity(c): Transform).toArray

  override def properties(): util.Map[String, String] = {
    val props = V1Table.addV2TableProperties(catalogTable)
    val external = catalogTable.tableType == CatalogTableType.EXTERNAL
    (props + (TableCatalog.PROP_EXTERNAL -> external.toString)).asJava
  }

  override def metadataColumns(): Array[MetadataColumn] = HoodieSource.MetaColumns.map(HoodieMetaColumn).toArray

  /** The table with more per-query options (a query type, an instant, an operation). */
  def withOptions(extra: Map[String, String]): HoodieSqlTable = new HoodieSqlTable(catalogTable, options ++ extra, schema)

  /** The table as a write target whose rows carry extra columns (the MERGE delete marker). */
  def withWriteSchema(writeSchema: StructType): HoodieSqlTable = new HoodieSqlTable(catalogTable, options, writeSchema)

  /** The hoodie.properties of the table on storage. */
  lazy val storedProperties: Map[String, String] = HoodieSource.tableProperties(location)

  def location: String = catalogTable.location.toString

  def recordKeyFields: Seq[String] = HoodieSource.fields(storedProperties.get("hoodie.table.recordkey.fields"))

  def partitionFields: Seq[String] =
    HoodieSource.fields(storedProperties.get("hoodie.table.partition.fields")) ++ catalogTable.partitionColumnNames

  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder =
    new HoodieScanBuilder(schema, options ++ scanOptions.asCaseSensitiveMap().asScala)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new HoodieWriteBuilder(options, info, catalogTable.partitionColumnNames.toSet)
}

private case class HoodieMetaColumn(override val name: String) extends MetadataColumn {
  override def dataType(): DataType = StringType
  override def isNullable: Boolean = true
}

/**
 * Reads only the columns the query needs (the Python reader projects to the schema it is given), and
 * hands the Python reader the filters it can apply exactly (partition pruning, row-group skipping,
 * row filtering). Every build plans with a fresh Python data source, so no query reuses the reader
 * another query planned (which is what makes pushed filters unsafe on `format("hoodie")` alone).
 */
private class HoodieScanBuilder(schema: StructType, tableOptions: Map[String, String])
  extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownFilters {

  private val options = tableOptions + (HoodieSource.PushdownOption -> "true")
  private var required = schema
  private var pushed: Array[Filter] = Array.empty

  private def pythonBuilder(readSchema: StructType) =
    new PythonScanBuilder(HoodieSource.dataSource(), HoodieSource.Name, readSchema, HoodieSource.options(options))

  /** What the reader can read: the table's columns and its meta columns. */
  private val readable = StructType(schema.fields ++ HoodieSource.MetaColumns.map(StructField(_, StringType)))

  override def pushFilters(filters: Array[Filter]): Array[Filter] = {
    val rejected = pythonBuilder(readable).pushFilters(filters)
    pushed = filters.filterNot(rejected.contains)
    rejected
  }

  override def pushedFilters(): Array[Filter] = pushed

  override def pruneColumns(requiredSchema: StructType): Unit = {
    // count(*) needs rows but no column: read the narrowest thing there is, one column
    required = if (requiredSchema.isEmpty) StructType(schema.fields.take(1)) else requiredSchema
  }

  override def build(): Scan = {
    // the filters' columns are read too, even when the query does not return them
    val filterColumns = pushed.flatMap(_.references).toSet
    val extra = readable.fields.filter(f => filterColumns.contains(f.name) && !required.fieldNames.contains(f.name))
    val builder = pythonBuilder(StructType(required.fields ++ extra))
    if (pushed.nonEmpty) {
      val rejected = builder.pushFilters(pushed)
      if (rejected.nonEmpty) throw HoodieErrors(s"The hoodie reader took filters ${pushed.mkString(", ")} " +
        s"when planning but not ${rejected.mkString(", ")} when reading")
    }
    builder.build()
  }
}

/**
 * INSERT INTO appends with the table's operation (upsert when it has a primary key); INSERT OVERWRITE
 * replaces the table, or under dynamic partition overwrite (and for a static PARTITION clause) only the
 * partitions of the new rows.
 */
private class HoodieWriteBuilder(options: Map[String, String], info: LogicalWriteInfo, partitionColumns: Set[String])
  extends WriteBuilder with SupportsOverwriteV2 with SupportsDynamicOverwrite {

  private var overwrite = false
  private var operation: Option[String] = None

  override def truncate(): WriteBuilder = {
    overwrite = true
    this
  }

  /** Whole partitions only: `PARTITION (city = 'sf')`, not `REPLACE WHERE fare > 10`. */
  override def canOverwrite(predicates: Array[Predicate]): Boolean = predicates.forall {
    case _: AlwaysTrue => true
    case p => Set("=", "<=>").contains(p.name()) && (p.children().head match {
      case ref: NamedReference => ref.fieldNames().length == 1 && partitionColumns.contains(ref.fieldNames().head)
      case _ => false
    })
  }

  override def overwrite(predicates: Array[Predicate]): WriteBuilder = {
    overwrite = true
    if (!predicates.forall(_.isInstanceOf[AlwaysTrue])) operation = Some("insert_overwrite")
    this
  }

  override def overwriteDynamicPartitions(): WriteBuilder = {
    overwrite = true
    operation = Some("insert_overwrite")
    this
  }

  override def build(): Write = {
    // appends to a partitioned table: Spark clusters the rows by partition, and each task writes its partitions
    val clustered = !overwrite && partitionColumns.nonEmpty && HoodieSource.clusteredWrites
    val merged = options ++ info.options().asCaseSensitiveMap().asScala ++ operation.map(HoodieSource.OperationOption -> _) ++
      (if (clustered) Map(HoodieSource.ClusteredOption -> "true") else Map.empty)
    val writeInfo = LogicalWriteInfoImpl(
      info.queryId(), info.schema(), HoodieSource.options(merged), info.rowIdSchema(), info.metadataSchema())
    val write = new PythonWrite(HoodieSource.dataSource(), HoodieSource.Name, writeInfo, overwrite)
    if (clustered) new ClusteredWrite(write, partitionColumns.toSeq.sorted) else write
  }
}

/** A write whose input Spark clusters by the partition columns first. */
private class ClusteredWrite(delegate: Write, columns: Seq[String]) extends Write with RequiresDistributionAndOrdering {
  override def requiredDistribution(): Distribution =
    Distributions.clustered(columns.map(c => Expressions.column(c): V2Expression).toArray)
  override def requiredOrdering(): Array[SortOrder] = Array.empty
  override def description(): String = delegate.description()
  override def toBatch: BatchWrite = delegate.toBatch
  override def toStreaming: StreamingWrite = delegate.toStreaming
  override def supportedCustomMetrics(): Array[CustomMetric] = delegate.supportedCustomMetrics()
  override def reportDriverMetrics(): Array[CustomTaskMetric] = delegate.reportDriverMetrics()
}
