package org.apache.spark.sql.hoodie

import org.apache.spark.SparkContext
import org.apache.spark.sql.connector.read.{Scan, ScanBuilder, SupportsPushDownFilters, SupportsPushDownRequiredColumns}
import org.apache.spark.sql.execution.datasources.v2.python.PythonScanBuilder
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.sources.Filter
import org.apache.spark.sql.types.StructType

/**
 * The scan of every hoodie read the shim plans (SQL tables, and `format("hoodie")` DataFrames through
 * [[HoodieReads]]). It reads only the columns the query needs (the Python reader projects to
 * the schema it is given), and hands the Python reader the filters it can apply exactly (partition
 * pruning, row-group skipping, row filtering), and the others too when it builds the scan, by which it skips file
 * slices (data skipping). Every build plans with a fresh Python data source, so no
 * query reuses the reader another query planned (which is what makes pushed filters unsafe on
 * PySpark's own `format("hoodie")` relation).
 *
 * `readable`: every column the reader can read, the meta columns included; the first one is what a
 * query that needs no column (`count(*)`) reads. With `spark.sql.python.filterPushdown.enabled` off
 * (`hoodie_datasource.session` turns it on), PySpark refuses a reader that takes filters, so then the
 * scan only prunes columns and Spark applies every filter. The reader splits a small table over Spark's
 * default parallelism (`hoodie.read.parallelism`, unless the read gives it).
 */
private class HoodieScanBuilder(readable: StructType, tableOptions: Map[String, String])
  extends ScanBuilder with SupportsPushDownRequiredColumns with SupportsPushDownFilters {

  private val filtering = SQLConf.get.pythonFilterPushDown
  private val parallelismKeys = Seq("hoodie.read.parallelism", "read.parallelism")
  private val options = {
    val given = tableOptions.keySet.map(_.toLowerCase)
    val parallelism = if (parallelismKeys.exists(given.contains)) Map.empty[String, String]
      else Map(parallelismKeys.head -> SparkContext.getOrCreate().defaultParallelism.toString)
    tableOptions ++ parallelism ++ (if (filtering) Map(HoodieSource.PushdownOption -> "true") else Map.empty)
  }
  private var required = readable
  private var offered: Array[Filter] = Array.empty
  private var pushed: Array[Filter] = Array.empty

  private def pythonBuilder(readSchema: StructType) =
    new PythonScanBuilder(HoodieSource.dataSource(), HoodieSource.Name, readSchema, HoodieSource.options(options))

  override def pushFilters(filters: Array[Filter]): Array[Filter] = {
    val rejected = if (filtering) HoodieErrors.fromPython(pythonBuilder(readable).pushFilters(filters)) else filters
    offered = if (filtering) filters else Array.empty
    pushed = filters.filterNot(rejected.contains)
    rejected
  }

  override def pushedFilters(): Array[Filter] = pushed

  override def pruneColumns(requiredSchema: StructType): Unit = {
    // count(*) needs rows but no column: read the narrowest thing there is, one column
    required = if (requiredSchema.isEmpty) StructType(readable.fields.take(1)) else requiredSchema
  }

  override def build(): Scan = {
    // the filters' columns are read too, even when the query does not return them
    val filterColumns = offered.flatMap(_.references).toSet
    val extra = readable.fields.filter(f => filterColumns.contains(f.name) && !required.fieldNames.contains(f.name))
    val builder = pythonBuilder(StructType(required.fields ++ extra))
    // every filter again, those Spark applies too: the reader skips file slices by all of them (data skipping)
    if (offered.nonEmpty) {
      val rejected = HoodieErrors.fromPython(builder.pushFilters(offered))
      if (offered.filterNot(rejected.contains).toSet != pushed.toSet) throw HoodieErrors(
        s"The hoodie reader took filters ${pushed.mkString(", ")} when planning but " +
        s"${offered.filterNot(rejected.contains).mkString(", ")} when reading")
    }
    HoodieErrors.fromPython(builder.build())
  }
}
