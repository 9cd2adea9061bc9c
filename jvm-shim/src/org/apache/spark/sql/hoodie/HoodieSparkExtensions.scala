package org.apache.spark.sql.hoodie

import org.apache.spark.sql.SparkSessionExtensions

/**
 * `spark.sql.extensions=org.apache.spark.sql.hoodie.HoodieSparkExtensions`, with
 * `spark.sql.catalog.spark_catalog=org.apache.spark.sql.hoodie.HoodieCatalog`: Hudi's SQL on the Python
 * data source `hoodie` (which must be registered in the session: `hoodie_datasource.session(builder)`),
 * and every hoodie read planned by [[HoodieReads]]: Spark's parquet scan for base files that need no merge,
 * column pruning and filter pushdown for `format("hoodie")` reads too.
 */
class HoodieSparkExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectParser((_, parser) => new HoodieSqlParser(parser))
    extensions.injectResolutionRule(_ => HoodieDmlRewrite)
    extensions.injectTableFunction(HoodieTableChanges.description)
    extensions.injectOptimizerRule(HoodieReads)
  }
}
