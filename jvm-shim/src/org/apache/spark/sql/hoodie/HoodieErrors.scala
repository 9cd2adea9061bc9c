package org.apache.spark.sql.hoodie

import scala.jdk.CollectionConverters._
import scala.util.control.NonFatal

import org.apache.spark.{QueryContext, SparkThrowable}
import org.apache.spark.api.python.PythonException
import org.apache.spark.sql.AnalysisException
import org.apache.spark.sql.connector.catalog.Identifier

/**
 * The shim's own errors (AnalysisExceptions that name the table and what to do instead), and the errors
 * of the Python source, message first.
 */
object HoodieErrors {
  // Spark's error class whose whole message is its one parameter (PySpark needs an error class to convert it)
  private val MessageOnly = "_LEGACY_ERROR_TEMP_1332"

  def apply(message: String): AnalysisException =
    new AnalysisException(MessageOnly, Map("errorMessage" -> message))

  /** The last line of a Python traceback that raised a `HoodieError` (`hoodie_datasource/spark/task_errors.py`). */
  private val PythonRaised = "(?m)^hoodie_datasource\\.errors\\.(\\w+): ".r

  /**
   * `body`, where a `HoodieError` the Python source raised, which Spark reports as a Python traceback inside
   * its own message (`[PYTHON_DATA_SOURCE_ERROR] ... Traceback ...`, `An exception was thrown from the Python
   * worker`), is thrown again as `<HoodieError class>: <its message>`, the original as its cause: an
   * AnalysisException stays one (callers catch it), any other error becomes a PythonException.
   */
  def fromPython[T](body: => T): T =
    try body catch { case NonFatal(e) => throw pythonError(e).getOrElse(e) }

  private def pythonError(e: Throwable): Option[Throwable] = {
    val chain = Iterator.iterate(e)(_.getCause).takeWhile(_ != null).toSeq
    // a Spark error's parameters hold the traceback as Python printed it (its message adds Spark's own lines)
    val texts = chain.flatMap {
      case t: SparkThrowable if !t.getMessageParameters.isEmpty => t.getMessageParameters.asScala.values.toSeq
      case t => Option(t.getMessage).toSeq
    }
    val raised = texts.view.flatMap { text =>
      PythonRaised.findAllMatchIn(text).toSeq.lastOption.map(m => s"${m.group(1)}: ${text.substring(m.end).split("\n\n")(0).trim}")
    }.headOption
    raised.filterNot(m => Option(e.getMessage).exists(_.startsWith(m))).map {
      case message if e.isInstanceOf[AnalysisException] =>
        new AnalysisException(MessageOnly, Map("errorMessage" -> message), Some(e))
      case message => new PythonException(message, e, Some(MessageOnly), Map("errorMessage" -> message), Array.empty[QueryContext])
    }
  }

  def noSchema(ident: Identifier): AnalysisException =
    HoodieErrors(s"CREATE TABLE $ident USING hoodie needs columns, or a LOCATION holding a hoodie table to take them from")

  def keyUpdate(table: String, columns: Seq[String]): AnalysisException =
    HoodieErrors(s"UPDATE cannot change the record key or partition column(s) ${columns.mkString(", ")} of hoodie table " +
      s"$table; delete the rows and insert them with the new values instead")

  def notMatchedBySource(table: String): AnalysisException =
    HoodieErrors(s"MERGE INTO hoodie table $table: WHEN NOT MATCHED BY SOURCE is not supported; " +
      "use WHEN MATCHED / WHEN NOT MATCHED clauses, or DELETE FROM with a subquery")

  def tableChangesArguments(given: Int): AnalysisException =
    HoodieErrors(s"hoodie_table_changes takes (table, begin instant [, end instant]) or Hudi's (table, 'latest_state' | 'cdc', " +
      s"begin instant [, end instant]); got $given argument(s)")

  def tableChangesArgument(position: Int, value: Any): AnalysisException =
    HoodieErrors(s"hoodie_table_changes argument $position must be a non-null string literal, got: $value")

  def alterColumns(table: String, why: String): AnalysisException =
    HoodieErrors(s"ALTER TABLE $table: $why; hoodie tables take ADD COLUMNS of nullable top-level columns (added " +
      "after the table's columns) and ALTER COLUMN ... TYPE to a wider type (e.g. int -> bigint, float -> double)")

  def callArgument(procedure: String, argument: String, value: String): AnalysisException =
    HoodieErrors(s"CALL $procedure: argument $argument must be a non-null literal, got: $value")

  def noTable(procedure: String, table: String): AnalysisException =
    HoodieErrors(s"CALL $procedure: no table $table in the catalog (name a table, or give path => '<table path>')")

  def notHoodieTable(procedure: String, table: String): AnalysisException =
    HoodieErrors(s"CALL $procedure: $table is not a hoodie table")

  def addPartition(table: String): AnalysisException =
    HoodieErrors(s"ALTER TABLE $table ADD PARTITION: a hoodie table's partitions are those of its rows; insert rows instead")

  def notHoodie(name: String): AnalysisException =
    HoodieErrors(s"hoodie_table_changes: $name is not a hoodie table")
}
