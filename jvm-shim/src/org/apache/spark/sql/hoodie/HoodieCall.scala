package org.apache.spark.sql.hoodie

import org.apache.spark.sql.{classic, Row, SparkSession}
import org.apache.spark.sql.catalyst.expressions.{Attribute, AttributeReference, Expression, NamedArgumentExpression}
import org.apache.spark.sql.execution.command.LeafRunnableCommand

/**
 * Hudi's `CALL <procedure>(table => 't', limit => 10)` (named or positional arguments): a read of the
 * Python source whose options name the procedure and its arguments (`hoodie_datasource/spark/procedures.py`).
 * The procedures, their arguments, checks and result columns are all in Python; here a `table` argument
 * becomes the table's location (`path`), and the session's `SET hoodie.*` options go along (the procedure's
 * own arguments override them, as in Hudi). The statement runs at once, as Spark's commands do.
 */
case class HoodieCall(name: String, args: Seq[Expression]) extends LeafRunnableCommand {
  private lazy val options: Map[String, String] = HoodieCall.options(name, args)

  override lazy val output: Seq[Attribute] =
    HoodieSource.inferSchema(options).map(f => AttributeReference(f.name, f.dataType, f.nullable)())

  override def run(spark: SparkSession): Seq[Row] =
    HoodieErrors.fromPython(spark.read.format(HoodieSource.Name).options(options).load().collect().toSeq)
}

object HoodieCall {
  val ProcedureOption = "hoodie.datasource.procedure"

  def options(name: String, args: Seq[Expression]): Map[String, String] = {
    val values = args.zipWithIndex.map {
      case (NamedArgumentExpression(key, value), _) => (Some(key.toLowerCase), text(name, key, value))
      case (value, i) => (None, text(name, s"${i + 1}", value))
    }
    val named = values.collect { case (Some(k), v) => k -> v }.toMap
    val positional = values.collect { case (None, v) => v }
    // the table: `table` or `path` by name, else the first positional argument naming a hoodie table
    val path = named.get("table").map(t => location(name, t).getOrElse(throw HoodieErrors.noTable(name, t)))
      .orElse(named.get("path"))
      .orElse(positional.view.flatMap(v => location(name, v)).headOption)
    HoodieSource.sessionOptions() ++ Map(ProcedureOption -> name) ++ path.map("path" -> _) ++
      named.map { case (k, v) => s"$ProcedureOption.arg.$k" -> v } ++
      positional.zipWithIndex.map { case (v, i) => s"$ProcedureOption.position.$i" -> v }
  }

  private def text(procedure: String, argument: String, value: Expression): String = {
    val evaluated = if (value.foldable) value.eval() else null
    if (evaluated == null) throw HoodieErrors.callArgument(procedure, argument, value.sql)
    evaluated.toString
  }

  /** The location of hoodie table `table` of the catalog (a path is its own location); None when no table has that name. */
  private def location(procedure: String, table: String): Option[String] = {
    if (table.contains("/")) return Some(table)
    val spark = SparkSession.active.asInstanceOf[classic.SparkSession]
    val ident = try spark.sessionState.sqlParser.parseTableIdentifier(table) catch { case _: Exception => return None }
    val catalog = spark.sessionState.catalog
    if (!catalog.tableExists(ident)) None
    else {
      val table = catalog.getTableMetadata(ident)
      if (!HoodieSource.isHoodie(table.provider)) throw HoodieErrors.notHoodieTable(procedure, ident.unquotedString)
      Some(table.location.toString)
    }
  }
}
