package org.apache.spark.sql.hoodie

import java.util

import scala.jdk.CollectionConverters._

import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.connector.catalog.{SupportsRead, Table, TableCapability}
import org.apache.spark.sql.connector.read.ScanBuilder
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.execution.datasources.v2.python.PythonTable
import org.apache.spark.sql.types.StructType
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * `spark.read.format("hoodie")` reads with the scans of SQL reads: only the columns the query needs,
 * and the filters the Python reader can apply exactly.
 *
 * PySpark plans such a read as a relation over its `PythonTable`, whose scan reads every column and
 * whose Python reader is planned once and reused by every later query on the DataFrame (so it cannot
 * take filters). This optimizer rule, which runs before Spark pushes projections and filters into
 * scans (`V2ScanRelationPushDown`), puts a read-only [[HoodieReadTable]] under such a relation: same
 * output attributes, same options, and the [[HoodieScanBuilder]] of SQL tables.
 *
 * Why the optimizer and not the analyzer: the analyzed plan stays what PySpark built (the DataFrame's
 * schema and column ids, cache lookups, the analysis of a write), and each execution plans its own scan.
 * Why writes are never touched: a write command (`AppendData`, `OverwriteByExpression`, ...) holds its
 * target relation as its `table`, not as a child, and the rule only visits the plan's children; so only
 * relations that are read (the write's query among them) are replaced.
 */
object HoodieDataFrameReads extends Rule[LogicalPlan] {
  override def apply(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case relation: DataSourceV2Relation if isHoodieSource(relation.table) =>
      relation.copy(table = new HoodieReadTable(relation.table))
  }

  /** PySpark's table of the Python data source `hoodie` (any other Python source is left alone). */
  private def isHoodieSource(table: Table): Boolean =
    table.isInstanceOf[PythonTable] && table.name().equalsIgnoreCase(HoodieSource.Name)
}

/**
 * A `format("hoodie")` relation's table, for reading only. Its schema is the Python source's, in which
 * the meta columns are ordinary columns; the relation's options (path, query type, instants, whatever
 * the user gave) reach the Python source through the scan options.
 */
private class HoodieReadTable(python: Table) extends Table with SupportsRead {
  override def name(): String = python.name()

  override def schema(): StructType = python.schema()

  override def capabilities(): util.Set[TableCapability] = util.EnumSet.of(TableCapability.BATCH_READ)

  override def newScanBuilder(options: CaseInsensitiveStringMap): ScanBuilder =
    new HoodieScanBuilder(schema(), options.asCaseSensitiveMap().asScala.toMap)
}
