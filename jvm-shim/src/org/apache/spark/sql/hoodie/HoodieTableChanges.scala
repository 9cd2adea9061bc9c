package org.apache.spark.sql.hoodie

import org.apache.spark.sql.{classic, SparkSession}
import org.apache.spark.sql.catalyst.FunctionIdentifier
import org.apache.spark.sql.catalyst.analysis.UnresolvedRelation
import org.apache.spark.sql.catalyst.expressions.{Expression, ExpressionInfo}
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation

/**
 * `hoodie_table_changes(table, begin [, end])`: the incremental query of a hoodie table, i.e. the rows
 * written by the commits after `begin` up to `end` (the latest by default). `table` is a table name or
 * a path. Hudi's form `hudi_table_changes(table, 'latest_state' | 'cdc', begin [, end])` is accepted too:
 * 'cdc' returns every change with its before and after images (`op`, `ts_ms`, `before`, `after`), as an
 * incremental read with `hoodie.datasource.query.incremental.format=cdc`; it reads the table by its path,
 * since the catalog table's columns are the table's, not the CDC schema.
 */
object HoodieTableChanges {
  val Name = "hoodie_table_changes"
  private val FormatOption = "hoodie.datasource.query.incremental.format"
  private val LatestState = "latest_state"
  private val Cdc = "cdc"
  private val Formats = Set(LatestState, Cdc)

  def description: (FunctionIdentifier, ExpressionInfo, Seq[Expression] => LogicalPlan) =
    (FunctionIdentifier(Name), new ExpressionInfo(getClass.getCanonicalName, null, Name), build)

  private def text(args: Seq[Expression]): Seq[String] = args.zipWithIndex.map { case (arg, i) =>
    val value = if (arg.foldable) arg.eval() else null
    if (value == null) throw HoodieErrors.tableChangesArgument(i + 1, arg.sql)
    value.toString
  }

  def build(args: Seq[Expression]): LogicalPlan = {
    val isFormat = (q: String) => Formats.contains(q.toLowerCase(java.util.Locale.ROOT))
    val (table, format, begin, end) = text(args) match {
      case Seq(t, q, b) if isFormat(q) => (t, q.toLowerCase(java.util.Locale.ROOT), b, None)
      case Seq(t, q, b, e) if isFormat(q) => (t, q.toLowerCase(java.util.Locale.ROOT), b, Some(e))
      case Seq(t, b) => (t, LatestState, b, None)
      case Seq(t, b, e) => (t, LatestState, b, Some(e))
      case other => throw HoodieErrors.tableChangesArguments(other.length)
    }
    val options = Map(HoodieSource.QueryOption -> "incremental", "hoodie.datasource.read.begin.instanttime" -> begin,
      FormatOption -> format) ++ end.map("hoodie.datasource.read.end.instanttime" -> _)
    val spark = SparkSession.active.asInstanceOf[classic.SparkSession]
    if (table.contains("/")) {
      spark.read.format(HoodieSource.Name).options(options).load(table).logicalPlan
    } else if (format == Cdc) {
      val name = spark.sessionState.sqlParser.parseMultipartIdentifier(table)
      val relation = UnresolvedRelation(name, HoodieSource.options(Map.empty), isStreaming = false)
      val sqlTable = spark.sessionState.executePlan(relation).analyzed.collectFirst {
        case r: DataSourceV2Relation if r.table.isInstanceOf[HoodieSqlTable] => r.table.asInstanceOf[HoodieSqlTable]
      }.getOrElse(throw HoodieErrors.notHoodie(table))
      val tableOptions = sqlTable.readOptions.filter { case (k, _) => !k.equalsIgnoreCase("path") }
      spark.read.format(HoodieSource.Name).options(HoodieSource.overlay(tableOptions, options))
        .load(sqlTable.location).logicalPlan
    } else {
      val name = spark.sessionState.sqlParser.parseMultipartIdentifier(table)
      val relation = UnresolvedRelation(name, HoodieSource.options(options), isStreaming = false)
      // another table would ignore the incremental options and return all its rows
      val isHoodie = spark.sessionState.executePlan(relation).analyzed.exists {
        case r: DataSourceV2Relation => r.table.isInstanceOf[HoodieSqlTable]
        case _ => false
      }
      if (!isHoodie) throw HoodieErrors.notHoodie(table)
      relation
    }
  }
}
