package org.apache.spark.sql.hoodie

import org.apache.spark.sql.SparkSessionExtensions

/**
 * `spark.sql.extensions=org.apache.spark.sql.hoodie.HoodieSparkExtensions`, with
 * `spark.sql.catalog.spark_catalog=org.apache.spark.sql.hoodie.HoodieCatalog`: Hudi's SQL on the Python
 * data source `hoodie` (which must be registered in the session: `hoodie_datasource.session(builder)`),
 * and `format("hoodie")` reads with column pruning and filter pushdown ([[HoodieDataFrameReads]]).
 */
class HoodieSparkExtensions extends (SparkSessionExtensions => Unit) {
  override def apply(extensions: SparkSessionExtensions): Unit = {
    extensions.injectParser((_, parser) => new HoodieSqlParser(parser))
    extensions.injectResolutionRule(_ => HoodieDmlRewrite)
    extensions.injectTableFunction(HoodieTableChanges.description)
    extensions.injectOptimizerRule(_ => HoodieDataFrameReads)
  }
}
