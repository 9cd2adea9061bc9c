package org.apache.spark.sql.hoodie

import org.apache.spark.sql.catalyst.analysis.EliminateSubqueryAliases
import org.apache.spark.sql.catalyst.expressions.{Alias, And, Attribute, CaseWhen, Cast, EqualTo, Expression, In, IsNotNull, Literal, Not}
import org.apache.spark.sql.catalyst.plans.{LeftOuter, LeftSemi}
import org.apache.spark.sql.catalyst.plans.logical._
import org.apache.spark.sql.catalyst.rules.Rule
import org.apache.spark.sql.execution.datasources.v2.DataSourceV2Relation
import org.apache.spark.sql.internal.SQLConf
import org.apache.spark.sql.types.{BooleanType, DataType, StructType}
import org.apache.spark.sql.util.CaseInsensitiveStringMap

/**
 * DELETE, UPDATE and MERGE INTO on hoodie tables, rewritten into one write of the Python source each:
 *
 * - `DELETE FROM t WHERE c`: the rows matching `c`, written with operation `delete`.
 * - `UPDATE t SET a = e WHERE c`: the rows matching `c` with the assignments applied, upserted.
 * - `MERGE INTO t USING s ON c ...`: `s LEFT OUTER JOIN t ON c` (t first narrowed to the rows a small s
 *   matches); each source row takes the first clause
 *   whose condition holds (matched: update or delete; not matched: insert), and the result is upserted
 *   in one commit, with the rows to delete flagged in the delete marker column.
 *
 * The record key and partition columns of a matched row never change: an UPDATE that assigns them is
 * refused, and MERGE keeps the target's values (the row stays where it is).
 */
object HoodieDmlRewrite extends Rule[LogicalPlan] {
  private val MatchedColumn = "__hoodie_matched"
  private val ActionColumn = "__hoodie_action"
  private val NotMatchedBase = 1 << 16

  override def apply(plan: LogicalPlan): LogicalPlan = plan.resolveOperatorsDown {
    case d: DeleteFromTable if d.resolved && hoodieTarget(d.table).isDefined =>
      val (relation, table) = hoodieTarget(d.table).get
      write(relation, table.withOptions(Map(HoodieSource.OperationOption -> "delete")), Filter(d.condition, d.table))

    case u: UpdateTable if u.resolved && hoodieTarget(u.table).isDefined =>
      val (relation, table) = hoodieTarget(u.table).get
      rewriteUpdate(u, relation, table)

    case m: MergeIntoTable if mergeResolved(m) && hoodieTarget(m.targetTable).isDefined =>
      val (relation, table) = hoodieTarget(m.targetTable).get
      rewriteMerge(m, relation, table)
  }

  private def hoodieTarget(plan: LogicalPlan): Option[(DataSourceV2Relation, HoodieSqlTable)] =
    EliminateSubqueryAliases(plan) match {
      case r: DataSourceV2Relation =>
        r.table match {
          case t: HoodieSqlTable => Some((r, t))
          case _ => None
        }
      case _ => None
    }

  private def mergeResolved(m: MergeIntoTable): Boolean =
    m.targetTable.resolved && m.sourceTable.resolved && m.mergeCondition.resolved &&
      (m.matchedActions ++ m.notMatchedActions ++ m.notMatchedBySourceActions).forall(_.resolved)

  /** `query` appended (by column name) to the table through a fresh relation. */
  private def write(relation: DataSourceV2Relation, table: HoodieSqlTable, query: LogicalPlan): LogicalPlan = {
    val target = DataSourceV2Relation.create(table, relation.catalog, relation.identifier, CaseInsensitiveStringMap.empty())
    AppendData.byName(target, query)
  }

  private def keyColumns(table: HoodieSqlTable): Set[String] =
    (table.recordKeyFields ++ table.partitionFields).map(_.toLowerCase).toSet

  private def cast(value: Expression, dataType: DataType): Expression =
    if (value.dataType == dataType) value else Cast(value, dataType)

  private def assigned(assignments: Seq[Assignment]): Map[Attribute, Expression] = assignments.map {
    case Assignment(attr: Attribute, value) => attr -> value
    case Assignment(other, _) => throw HoodieErrors(s"Only top-level columns can be assigned in hoodie tables, not $other")
  }.toMap

  private def rewriteUpdate(u: UpdateTable, relation: DataSourceV2Relation, table: HoodieSqlTable): LogicalPlan = {
    val values = assigned(u.assignments)
    val keys = keyColumns(table)
    val changed = values.collect { case (a, v) if keys.contains(a.name.toLowerCase) && !v.semanticEquals(a) => a.name }
    if (changed.nonEmpty) throw HoodieErrors.keyUpdate(table.name(), changed.toSeq.sorted)
    val byId = values.map { case (a, v) => a.exprId -> v }
    val columns = u.table.output.map { a =>
      byId.get(a.exprId).map(v => Alias(cast(v, a.dataType), a.name)()).getOrElse(a)
    }
    val rows = Project(columns, Filter(u.condition.getOrElse(Literal.TrueLiteral), u.table))
    write(relation, table.withOptions(Map(HoodieSource.OperationOption -> "upsert")), rows)
  }

  private def rewriteMerge(m: MergeIntoTable, relation: DataSourceV2Relation, table: HoodieSqlTable): LogicalPlan = {
    if (m.notMatchedBySourceActions.nonEmpty) throw HoodieErrors.notMatchedBySource(table.name())
    val target = m.targetTable
    val flag = Alias(Literal.TrueLiteral, MatchedColumn)()
    val targetRows = Project(target.output :+ flag, target)
    // a small source (it would be broadcast) first picks the target rows it matches, so the whole target
    // is filtered where it is read instead of being shuffled for the outer join
    val candidates = if (m.sourceTable.stats.sizeInBytes <= SQLConf.get.autoBroadcastJoinThreshold) {
      Join(targetRows, m.sourceTable, LeftSemi, Some(m.mergeCondition), JoinHint.NONE)
    } else targetRows
    val joined = Join(m.sourceTable, candidates, LeftOuter, Some(m.mergeCondition), JoinHint.NONE)
    val matched = IsNotNull(flag.toAttribute)

    val clauses: Seq[(MergeAction, Int)] =
      m.matchedActions.zipWithIndex ++ m.notMatchedActions.zipWithIndex.map { case (a, i) => (a, NotMatchedBase + i) }
    val chosen = CaseWhen(clauses.map { case (action, id) =>
      val side = if (id < NotMatchedBase) matched else Not(matched)
      (And(side, action.condition.getOrElse(Literal.TrueLiteral)), Literal(id))
    }, Some(Literal(-1)))
    val action = Alias(chosen, ActionColumn)()
    val withAction = Project(joined.output :+ action, joined)
    val acted = Filter(Not(EqualTo(action.toAttribute, Literal(-1))), withAction)

    val keys = keyColumns(table)
    val columns = target.output.map { column =>
      val branches = clauses.flatMap { case (clause, id) =>
        val value: Option[Expression] = clause match {
          case _: UpdateAction if keys.contains(column.name.toLowerCase) => Some(column)
          case u: UpdateAction => Some(assigned(u.assignments).collectFirst {
            case (a, v) if a.exprId == column.exprId => v
          }.getOrElse(column))
          case _: DeleteAction => Some(column)
          case i: InsertAction => Some(assigned(i.assignments).collectFirst {
            case (a, v) if a.name.equalsIgnoreCase(column.name) => v
          }.getOrElse(Literal(null, column.dataType)))
          case other => throw HoodieErrors(s"MERGE INTO hoodie table ${table.name()}: unsupported clause $other")
        }
        value.map(v => (EqualTo(action.toAttribute, Literal(id)): Expression, cast(v, column.dataType)))
      }
      Alias(CaseWhen(branches, None), column.name)()
    }
    val deletes = clauses.collect { case (_: DeleteAction, id) => Literal(id): Expression }
    val marker = Alias(if (deletes.isEmpty) Literal.FalseLiteral else In(action.toAttribute, deletes),
      HoodieSource.DeleteMarkerColumn)()
    val rows = Project(columns :+ marker, acted)
    val writeSchema = StructType(table.schema.fields).add(HoodieSource.DeleteMarkerColumn, BooleanType)
    write(relation, table.withOptions(Map(HoodieSource.OperationOption -> "upsert")).withWriteSchema(writeSchema), rows)
  }
}
