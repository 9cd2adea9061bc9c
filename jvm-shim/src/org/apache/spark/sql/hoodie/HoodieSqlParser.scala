package org.apache.spark.sql.hoodie

import org.apache.spark.sql.catalyst.{FunctionIdentifier, TableIdentifier}
import org.apache.spark.sql.catalyst.analysis.{RelationTimeTravel, UnresolvedProcedure}
import org.apache.spark.sql.catalyst.expressions.{Expression, Literal}
import org.apache.spark.sql.catalyst.parser.{ParameterContext, ParserInterface, SqlStatementSplitResult, TemporalIdentifier}
import org.apache.spark.sql.catalyst.plans.logical.{Call, LogicalPlan}
import org.apache.spark.sql.types.{DataType, StringType, StructType}

/**
 * Spark's parser, plus Hudi's `TIMESTAMP AS OF '<instant>'`: a string of digits (a Hudi instant such as
 * `20261122101530123`) is not a timestamp Spark can evaluate, so it becomes `VERSION AS OF` that instant.
 * And Hudi's `CALL <procedure>(...)` of a one-part name becomes a [[HoodieCall]] (Spark's own `CALL`
 * of a catalog's procedure names it with its namespace). Every other statement is Spark's own.
 */
class HoodieSqlParser(delegate: ParserInterface) extends ParserInterface {
  private val Instant = "\\d{8,17}".r

  private def rewrite(plan: LogicalPlan): LogicalPlan = plan.transformUp {
    case RelationTimeTravel(relation, Some(literal: Literal), None)
        if literal.dataType.isInstanceOf[StringType] && literal.value != null &&
          Instant.matches(literal.value.toString) =>
      RelationTimeTravel(relation, None, Some(literal.value.toString))
    case Call(UnresolvedProcedure(Seq(name)), args, _) => HoodieCall(name, args)
  }

  override def parsePlan(sqlText: String): LogicalPlan = rewrite(delegate.parsePlan(sqlText))
  override def parsePlanWithParameters(sqlText: String, context: ParameterContext): LogicalPlan =
    rewrite(delegate.parsePlanWithParameters(sqlText, context))
  override def parseQuery(sqlText: String): LogicalPlan = rewrite(delegate.parseQuery(sqlText))
  override def parseExpression(sqlText: String): Expression = delegate.parseExpression(sqlText)
  override def parseTableIdentifier(sqlText: String): TableIdentifier = delegate.parseTableIdentifier(sqlText)
  override def parseFunctionIdentifier(sqlText: String): FunctionIdentifier = delegate.parseFunctionIdentifier(sqlText)
  override def parseMultipartIdentifier(sqlText: String): Seq[String] = delegate.parseMultipartIdentifier(sqlText)
  override def parseTemporalTableIdentifier(sqlText: String): TemporalIdentifier =
    delegate.parseTemporalTableIdentifier(sqlText)
  override def parseRoutineParam(sqlText: String): StructType = delegate.parseRoutineParam(sqlText)
  override def splitStatements(sqlText: String): SqlStatementSplitResult = delegate.splitStatements(sqlText)
  override def parseTableSchema(sqlText: String): StructType = delegate.parseTableSchema(sqlText)
  override def parseDataType(sqlText: String): DataType = delegate.parseDataType(sqlText)
}
