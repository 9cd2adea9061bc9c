package org.apache.spark.sql.hoodie

import java.util

import scala.jdk.CollectionConverters._

import com.fasterxml.jackson.databind.ObjectMapper

import org.apache.spark.sql.{Column, DataFrame, SparkSession}
import org.apache.spark.sql.catalyst.{CatalystTypeConverters, InternalRow}
import org.apache.spark.sql.catalyst.catalog.{CatalogTable, CatalogTableType}
import org.apache.spark.sql.connector.catalog.{MetadataColumn, SupportsMetadataColumns, SupportsPartitionManagement, SupportsRead, SupportsWrite, Table, TableCapability, TableCatalog, TruncatableTable, V1Table}
import org.apache.spark.sql.connector.catalog.TableCapability._
import org.apache.spark.sql.connector.distributions.{Distribution, Distributions}
import org.apache.spark.sql.connector.expressions.{Expressions, Literal, NamedReference, SortOrder, Transform, Expression => V2Expression}
import org.apache.spark.sql.connector.metric.{CustomMetric, CustomTaskMetric}
import org.apache.spark.sql.connector.expressions.filter.{AlwaysTrue, Predicate}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.connector.write.{BatchWrite, DataWriter, DataWriterFactory, LogicalWriteInfo, LogicalWriteInfoImpl, PhysicalWriteInfo, RequiresDistributionAndOrdering, SupportsDynamicOverwrite, SupportsOverwriteV2, Write, WriteBuilder, WriterCommitMessage}
import org.apache.spark.sql.connector.write.streaming.StreamingWrite
import org.apache.spark.sql.execution.datasources.v2.python.PythonWrite
import org.apache.spark.sql.functions.{col, lit}
import org.apache.spark.sql.types.{DataType, StringType, StructField, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * A hoodie table of the session catalog: its catalog definition plus the options of one query.
 *
 * Reads and writes go to the Python data source with the table's options (the location as `path`, its
 * OPTIONS and hoodie TBLPROPERTIES), the session's `SET hoodie.*` options and the query's own options
 * (query type, instant, operation), in Hudi's precedence:
 *
 * - writes (`ProvidesHoodieConfig.combineOptions`): query > session > table, except what defines the
 *   table (keys, partitioning, type, name), which the session never changes;
 * - reads (Hudi's `DefaultSource` puts the read's options over the session's `hoodie.*` configs):
 *   query > table > session.
 */
class HoodieSqlTable(
    val catalogTable: CatalogTable,
    val tableOptions: Map[String, String],
    override val schema: StructType,
    val queryOptions: Map[String, String] = Map.empty)
  extends Table with SupportsRead with SupportsWrite with SupportsMetadataColumns with SupportsPartitionManagement
    with TruncatableTable {

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
  def withOptions(extra: Map[String, String]): HoodieSqlTable =
    new HoodieSqlTable(catalogTable, tableOptions, schema, HoodieSource.overlay(queryOptions, extra))

  /** The table as a write target whose rows carry extra columns (the MERGE delete marker). */
  def withWriteSchema(writeSchema: StructType): HoodieSqlTable =
    new HoodieSqlTable(catalogTable, tableOptions, writeSchema, queryOptions)

  /** The options of a read now (the session's as they are set when the query is planned). */
  def readOptions: Map[String, String] =
    HoodieSource.overlay(HoodieSource.overlay(HoodieSource.sessionOptions(), tableOptions), queryOptions)

  /** The options of a write now. */
  def writeOptions: Map[String, String] =
    HoodieSource.overlay(HoodieSource.overlay(tableOptions, HoodieSource.sessionWriteOptions()), queryOptions)

  /** The hoodie.properties of the table on storage. */
  lazy val storedProperties: Map[String, String] = HoodieSource.tableProperties(location)

  def location: String = catalogTable.location.toString

  def recordKeyFields: Seq[String] = HoodieSource.fields(storedProperties.get("hoodie.table.recordkey.fields"))

  def partitionFields: Seq[String] =
    HoodieSource.fields(storedProperties.get("hoodie.table.partition.fields")) ++ catalogTable.partitionColumnNames

  /** The meta columns are not in the schema, but the reader reads them like any other column. */
  def readableSchema: StructType = StructType(schema.fields ++ HoodieSource.MetaColumns.map(StructField(_, StringType)))

  override def newScanBuilder(scanOptions: CaseInsensitiveStringMap): ScanBuilder =
    new HoodieScanBuilder(readableSchema, readOptions ++ scanOptions.asCaseSensitiveMap().asScala)

  override def newWriteBuilder(info: LogicalWriteInfo): WriteBuilder =
    new HoodieWriteBuilder(writeOptions, info, catalogTable.partitionColumnNames.toSet)

  // Partitions, as Hudi's SQL has them: SHOW PARTITIONS lists the partitions of the table's rows;
  // TRUNCATE TABLE, TRUNCATE TABLE ... PARTITION and ALTER TABLE DROP PARTITION delete partitions (Hudi's
  // TruncateHoodieTableCommand / AlterHoodieTableDropPartitionCommand): the operation `delete_partition`,
  // given a row of each partition, replaces all of the partition's file groups in one commit.

  override def partitionSchema(): StructType = catalogTable.partitionSchema

  override def createPartition(ident: InternalRow, properties: util.Map[String, String]): Unit =
    throw HoodieErrors.addPartition(name())

  override def dropPartition(ident: InternalRow): Boolean = deletePartitions(Some(ident))

  override def truncatePartition(ident: InternalRow): Boolean = deletePartitions(Some(ident))

  override def truncateTable(): Boolean = {
    deletePartitions(None)
    true
  }

  override def replacePartitionMetadata(ident: InternalRow, properties: util.Map[String, String]): Unit =
    throw HoodieErrors(s"hoodie table ${name()}: partitions have no properties of their own")

  override def loadPartitionMetadata(ident: InternalRow): util.Map[String, String] = util.Collections.emptyMap()

  override def listPartitionIdentifiers(names: Array[String], ident: InternalRow): Array[InternalRow] = {
    val fields = partitionSchema().fields
    val given = names.zipWithIndex.map { case (n, i) =>
      val j = fields.indexWhere(_.name.equalsIgnoreCase(n))
      (j, ident.get(i, fields(j).dataType))
    }
    rows().select(fields.map(f => col(f.name)).toSeq: _*).distinct().collect()
      .map(r => InternalRow.fromSeq(fields.indices.map(i => CatalystTypeConverters.convertToCatalyst(r.get(i)))))
      .filter(r => given.forall { case (j, v) => r.get(j, fields(j).dataType) == v })
  }

  /** The table's rows as a read of the Python source (meta columns included). */
  private def rows(): DataFrame = SparkSession.active.read.format(HoodieSource.Name).options(readOptions).load()

  /** Deletes the partition `ident` names, or every partition: one row of each, written with `delete_partition`. */
  private def deletePartitions(ident: Option[InternalRow]): Boolean = {
    val fields = partitionSchema().fields
    val matching: Seq[Column] = ident.toSeq.flatMap(id => fields.indices.map { i =>
      col(fields(i).name) === lit(CatalystTypeConverters.convertToScala(id.get(i, fields(i).dataType), fields(i).dataType))
    })
    val selected = matching.foldLeft(rows())(_ where _).select(schema.fieldNames.map(col).toSeq: _*)
    val perPartition = if (fields.isEmpty) selected.limit(1) else selected.dropDuplicates(fields.map(_.name).toSeq)
    if (perPartition.isEmpty) return false
    perPartition.write.format(HoodieSource.Name).options(writeOptions + (HoodieSource.OperationOption -> "delete_partition"))
      .mode("append").save()
    true
  }
}

private case class HoodieMetaColumn(override val name: String) extends MetadataColumn {
  override def dataType(): DataType = StringType
  override def isNullable: Boolean = true
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
  private var staticPartition: Option[String] = None

  override def truncate(): WriteBuilder = {
    overwrite = true
    this
  }

  /** Whole partitions only: `PARTITION (city = 'sf')`, not `REPLACE WHERE fare > 10`. */
  override def canOverwrite(predicates: Array[Predicate]): Boolean = predicates.forall {
    case _: AlwaysTrue => true
    case p => Set("=", "<=>").contains(p.name()) && (p.children().toSeq match {
      case Seq(ref: NamedReference, _: Literal[_]) =>
        ref.fieldNames().length == 1 && partitionColumns.contains(ref.fieldNames().head)
      case _ => false
    })
  }

  /** A static `PARTITION (...)` clause (Spark's STATIC partition overwrite mode) replaces the partition it names
   * even when no row is written there (Hudi's `hoodie.static.overwrite.partition.paths`): the Python writer gets
   * the clause's values, as Spark holds them (a date as days, a timestamp as microseconds, since the epoch). */
  override def overwrite(predicates: Array[Predicate]): WriteBuilder = {
    overwrite = true
    val static = predicates.filterNot(_.isInstanceOf[AlwaysTrue])
    if (static.nonEmpty) {
      operation = Some("insert_overwrite")
      val values = new util.LinkedHashMap[String, String]()
      static.foreach { p =>
        val (ref, value) = (p.children()(0).asInstanceOf[NamedReference], p.children()(1).asInstanceOf[Literal[_]])
        values.put(ref.fieldNames().head, Option(value.value()).map(_.toString).orNull)
      }
      staticPartition = Some(new ObjectMapper().writeValueAsString(values))
    }
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
      staticPartition.map(HoodieSource.StaticPartitionOption -> _) ++
      (if (clustered) Map(HoodieSource.ClusteredOption -> "true") else Map.empty)
    val writeInfo = LogicalWriteInfoImpl(
      info.queryId(), info.schema(), HoodieSource.options(merged), info.rowIdSchema(), info.metadataSchema())
    val write = new PythonErrorsWrite(new PythonWrite(HoodieSource.dataSource(), HoodieSource.Name, writeInfo, overwrite))
    if (clustered) new ClusteredWrite(write, partitionColumns.toSeq.sorted) else write
  }
}

/** A Python write whose errors, in the tasks and in the commit, come message first ([[HoodieErrors.fromPython]]). */
private class PythonErrorsWrite(delegate: Write) extends Write {
  override def description(): String = delegate.description()
  override def toBatch: BatchWrite = new PythonErrorsBatchWrite(delegate.toBatch)
  override def toStreaming: StreamingWrite = delegate.toStreaming
  override def supportedCustomMetrics(): Array[CustomMetric] = delegate.supportedCustomMetrics()
  override def reportDriverMetrics(): Array[CustomTaskMetric] = delegate.reportDriverMetrics()
}

private class PythonErrorsBatchWrite(delegate: BatchWrite) extends BatchWrite {
  override def createBatchWriterFactory(info: PhysicalWriteInfo): DataWriterFactory =
    new PythonErrorsWriterFactory(delegate.createBatchWriterFactory(info))
  override def useCommitCoordinator(): Boolean = delegate.useCommitCoordinator()
  override def onDataWriterCommit(message: WriterCommitMessage): Unit = delegate.onDataWriterCommit(message)
  override def commit(messages: Array[WriterCommitMessage]): Unit = HoodieErrors.fromPython(delegate.commit(messages))
  override def abort(messages: Array[WriterCommitMessage]): Unit = HoodieErrors.fromPython(delegate.abort(messages))
}

private class PythonErrorsWriterFactory(delegate: DataWriterFactory) extends DataWriterFactory {
  override def createWriter(partitionId: Int, taskId: Long): DataWriter[InternalRow] = {
    val writer = delegate.createWriter(partitionId, taskId)
    new DataWriter[InternalRow] {
      // the Python writer takes all its rows at once (writeAll): every method is delegated
      override def write(record: InternalRow): Unit = HoodieErrors.fromPython(writer.write(record))
      override def write(metadata: InternalRow, record: InternalRow): Unit = HoodieErrors.fromPython(writer.write(metadata, record))
      override def writeAll(records: util.Iterator[InternalRow]): Unit = HoodieErrors.fromPython(writer.writeAll(records))
      override def commit(): WriterCommitMessage = HoodieErrors.fromPython(writer.commit())
      override def abort(): Unit = writer.abort()
      override def close(): Unit = writer.close()
      override def currentMetricsValues(): Array[CustomTaskMetric] = writer.currentMetricsValues()
    }
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
