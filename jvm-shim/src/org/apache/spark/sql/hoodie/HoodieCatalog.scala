package org.apache.spark.sql.hoodie

import java.util

import scala.jdk.CollectionConverters._
import scala.util.Try
import scala.util.control.NonFatal

import org.apache.hadoop.fs.Path

import org.apache.spark.sql.{classic, SparkSession}
import org.apache.spark.sql.catalyst.TableIdentifier
import org.apache.spark.sql.catalyst.analysis.NoSuchTableException
import org.apache.spark.sql.catalyst.catalog.{CatalogStorageFormat, CatalogTable, CatalogTableType, CatalogUtils}
import org.apache.spark.sql.connector.catalog.{CatalogV2Util, Column, DelegatingCatalogExtension, Identifier, Table, TableCatalog, TableChange, V1Table}
import org.apache.spark.sql.connector.expressions.{Expressions, Transform}
import org.apache.spark.sql.types.StructType

/**
 * The session catalog, with hoodie tables resolved to [[HoodieSqlTable]] (everything else is delegated).
 *
 * - A hoodie table's columns are those of the table on storage (a DataFrame write may have widened or added
 *   columns since the catalog entry was written), and the catalog entry is updated to them.
 * - `t_rt` and `t_ro` name the snapshot and read-optimized views of every hoodie table `t`;
 *   hoodie.`/path/to/table` names a table by its path.
 * - `TIMESTAMP AS OF` / `VERSION AS OF` read the table as of an instant.
 * - `CREATE TABLE ... USING hoodie` creates the table on storage too (as Hudi does), with the schema of
 *   an existing table when no columns are given.
 * - `ALTER TABLE ... ADD COLUMNS` / `ALTER COLUMN ... TYPE` commit the new schema to the table's timeline
 *   (the Python source decides what is allowed), then the catalog takes it, partition columns still last.
 */
class HoodieCatalog extends DelegatingCatalogExtension {

  override def loadTable(ident: Identifier): Table = resolve(ident, Map.empty)

  override def loadTable(ident: Identifier, version: String): Table =
    hoodieTable(ident, Map(HoodieSource.AsOfOption -> version)).getOrElse(super.loadTable(ident, version))

  override def loadTable(ident: Identifier, timestamp: Long): Table =
    hoodieTable(ident, Map.empty)
      .map(t => t.withOptions(Map(HoodieSource.AsOfOption -> HoodieCatalog.instantOf(timestamp, t.storedProperties))))
      .getOrElse(super.loadTable(ident, timestamp))

  private def resolve(ident: Identifier, extra: Map[String, String]): Table =
    if (HoodieCatalog.isPath(ident)) HoodieCatalog.pathTable(ident.name()).withOptions(extra)
    else try {
      super.loadTable(ident) match {
        case v1: V1Table if HoodieSource.isHoodie(v1.catalogTable.provider) =>
          val table = HoodieCatalog.toHoodie(v1, extra)
          refreshColumns(v1.catalogTable, table.catalogTable)
          table
        case other => other
      }
    } catch {
      case missing: NoSuchTableException =>
        HoodieCatalog.view(ident)
          .flatMap { case (base, query) => hoodieTable(base, extra + (HoodieSource.QueryOption -> query)) }
          .getOrElse(throw missing)
    }

  private def hoodieTable(ident: Identifier, extra: Map[String, String]): Option[HoodieSqlTable] =
    try {
      resolve(ident, extra) match {
        case t: HoodieSqlTable => Some(t)
        case _ => None
      }
    } catch {
      case _: NoSuchTableException => None
    }

  override def createTable(
      ident: Identifier,
      columns: Array[Column],
      partitions: Array[Transform],
      properties: util.Map[String, String]): Table = {
    if (!HoodieSource.isHoodie(Option(properties.get(TableCatalog.PROP_PROVIDER)))) {
      return super.createTable(ident, columns, partitions, properties)
    }
    val given = CatalogV2Util.v2ColumnsToStructType(columns)
    val location = Option(properties.get(TableCatalog.PROP_LOCATION))
    val columnsGiven = if (given.nonEmpty) given else existingSchema(ident, location)
    val stored = location.map(HoodieSource.tableProperties).getOrElse(Map.empty)
    val partitioning = if (partitions.nonEmpty || given.nonEmpty) partitions else {
      HoodieSource.fields(stored.get("hoodie.table.partition.fields"))
        .filter(columnsGiven.fieldNames.contains).map(c => Expressions.identity(c): Transform).toArray
    }
    // as for every catalog table, partition columns come last
    val partitionColumns = partitioning.flatMap(_.references().map(_.fieldNames().mkString("."))).toSet
    val schema = StructType(columnsGiven.filterNot(f => partitionColumns.contains(f.name)) ++
      columnsGiven.filter(f => partitionColumns.contains(f.name)))
    val withKeys = new util.HashMap[String, String](properties)
    HoodieCatalog.sqlPropertiesOf(stored).foreach { case (k, v) => withKeys.putIfAbsent(k, v) }
    super.createTable(ident, CatalogV2Util.structTypeToV2Columns(schema), partitioning, withKeys)
    val table = loadTable(ident).asInstanceOf[HoodieSqlTable]
    try HoodieCatalog.createOnStorage(table)
    catch {
      case NonFatal(e) =>
        super.dropTable(ident)
        throw e
    }
    table
  }

  override def alterTable(ident: Identifier, changes: TableChange*): Table = {
    if (!changes.exists(HoodieCatalog.changesColumns)) return super.alterTable(ident, changes: _*)
    loadTable(ident) match {
      case table: HoodieSqlTable =>
        val dataSchema = HoodieCatalog.alterColumns(table, changes)
        if (!HoodieCatalog.isPath(ident)) {
          SparkSession.active.asInstanceOf[classic.SparkSession].sessionState.catalog
            .alterTableDataSchema(table.catalogTable.identifier, dataSchema)
        }
        loadTable(ident)
      case _ => super.alterTable(ident, changes: _*)
    }
  }

  /** A catalog entry whose columns a write changed on storage (a DataFrame write that widened a column or
   * added one) takes the table's columns, once per change, so what reads the catalog itself (other sessions'
   * `listColumns`, other engines) agrees. Best effort: this session's SQL takes the columns from storage. */
  private def refreshColumns(entry: CatalogTable, loaded: CatalogTable): Unit =
    if (loaded.dataSchema != entry.dataSchema) {
      try {
        SparkSession.active.asInstanceOf[classic.SparkSession].sessionState.catalog
          .alterTableDataSchema(entry.identifier, loaded.dataSchema)
      } catch {
        case NonFatal(e) => HoodieCatalog.log.warn(s"hoodie table ${entry.identifier}: the catalog keeps its " +
          s"columns (${entry.dataSchema.simpleString}), the table's are ${loaded.dataSchema.simpleString}: $e")
      }
    }

  /** `CREATE TABLE t USING hoodie LOCATION '<an existing table>'`: the columns are the table's. */
  private def existingSchema(ident: Identifier, location: Option[String]): StructType = {
    val path = location.getOrElse(throw HoodieErrors.noSchema(ident))
    HoodieSource.dataSchema(path)
  }
}

object HoodieCatalog {
  private val Views = Map("_rt" -> "snapshot", "_ro" -> "read_optimized")

  /** hoodie.`/data/trips`: a table named by its path, as `delta.`/path`` names Delta tables. */
  def isPath(ident: Identifier): Boolean =
    ident.namespace().toSeq == Seq(HoodieSource.Name) && (ident.name().startsWith("/") || ident.name().contains(":/"))

  def pathTable(path: String): HoodieSqlTable = {
    val table = CatalogTable(
      identifier = TableIdentifier(path, Some(HoodieSource.Name)),
      tableType = CatalogTableType.EXTERNAL,
      storage = CatalogStorageFormat.empty.copy(locationUri = Some(CatalogUtils.stringToURI(path))),
      schema = storageSchema(path, HoodieSource.tableProperties(path)).getOrElse(HoodieSource.dataSchema(path)),
      provider = Some(HoodieSource.Name))
    new HoodieSqlTable(table, Map("path" -> path), table.schema)
  }

  /** `trips_rt` -> (`trips`, snapshot), `trips_ro` -> (`trips`, read_optimized). */
  def view(ident: Identifier): Option[(Identifier, String)] = Views.collectFirst {
    case (suffix, query) if ident.name().toLowerCase.endsWith(suffix) && ident.name().length > suffix.length =>
      (Identifier.of(ident.namespace(), ident.name().dropRight(suffix.length)), query)
  }

  def toHoodie(v1: V1Table, extra: Map[String, String]): HoodieSqlTable = {
    val ct = v1.catalogTable
    val hoodieProps = ct.properties.filter { case (k, _) =>
      k.toLowerCase.startsWith("hoodie.") || HoodieSource.SqlTableProperties.contains(k.toLowerCase)
    }
    val location = ct.location.toString
    val stored = HoodieSource.tableProperties(location)
    val options = ct.storage.properties ++ hoodieProps ++ Map("path" -> location) ++
      partitionOption(ct.partitionColumnNames)
    // a new table is named after its catalog entry and, as in Hudi's SQL, partitioned hive style;
    // a table already on storage keeps what it has
    val defaults = if (stored.nonEmpty) Map.empty[String, String] else Map(
      "hoodie.table.name" -> ct.identifier.table, "hoodie.datasource.write.hive_style_partitioning" -> "true")
    val lowered = options.keySet.map(_.toLowerCase)
    val columns = tableSchema(ct, stored)
    new HoodieSqlTable(ct.copy(schema = columns), options ++ defaults.filter { case (k, _) => !lowered.contains(k) },
      columns, extra)
  }

  /** A catalog table's columns, as Hudi's catalog takes them (`HoodieCatalogTable.tableSchema`, from
   * `TableSchemaResolver`): the table's schema on storage, which a DataFrame write may have widened or
   * extended since the catalog entry was written, partition columns last; the catalog's own column list only
   * until the table has a commit. A catalog column whose type storage agrees with stays as the catalog has
   * it (its comment, `CHAR`/`VARCHAR`). */
  def tableSchema(ct: CatalogTable, stored: Map[String, String]): StructType = {
    storageSchema(ct.location.toString, stored).fold(ct.schema) { onStorage =>
      val fromCatalog = ct.schema.fields.map(f => f.name.toLowerCase -> f).toMap
      val columns = onStorage.fields.map(f => fromCatalog.get(f.name.toLowerCase).filter(_.dataType == f.dataType).getOrElse(f))
      val partition = ct.partitionColumnNames.map(_.toLowerCase).toSet
      val (partitionColumns, dataColumns) = columns.partition(f => partition.contains(f.name.toLowerCase))
      val missing = ct.partitionSchema.fields.filterNot(f => partitionColumns.exists(_.name.equalsIgnoreCase(f.name)))
      StructType(dataColumns ++ ct.partitionColumnNames.flatMap(n => (partitionColumns ++ missing).find(_.name.equalsIgnoreCase(n))))
    }
  }

  private val log = org.slf4j.LoggerFactory.getLogger(classOf[HoodieCatalog])

  /** location -> (its timeline's completed instants, its data schema): the schema is asked of the Python source
   * once per change of the timeline, so a statement on an unchanged table pays one listing of the timeline. */
  private val schemas = new java.util.concurrent.ConcurrentHashMap[String, (Seq[String], StructType)]()

  private val WriteActions = Set("commit", "deltacommit", "replacecommit")

  /** The data schema of the table at `location` (the Python source's, meta columns left out), or None while
   * it has no completed write (a table `CREATE TABLE` just made holds no schema but the statement's). */
  def storageSchema(location: String, stored: Map[String, String]): Option[StructType] =
    HoodieSource.hadoopFileSystem(location) match {
      case None =>  // Hadoop cannot list the timeline here: the Python source answers every time (no cache)
        if (stored.isEmpty) None else Some(HoodieSource.dataSchema(location)).filter(_.nonEmpty)
      case Some(fs) =>
        val meta = new Path(location, ".hoodie")
        val timeline = Some(new Path(meta, stored.getOrElse("hoodie.timeline.path", "timeline")))
          .filter(p => Try(fs.getFileStatus(p).isDirectory).getOrElse(false)).getOrElse(meta)
        val completed = Try(fs.listStatus(timeline).toSeq).getOrElse(Nil).filter(_.isFile).map(_.getPath.getName)
          .filterNot(n => n.endsWith(".requested") || n.endsWith(".inflight")).sorted
        if (!completed.exists(n => WriteActions.contains(n.substring(n.lastIndexOf('.') + 1)))) None
        else Option(schemas.get(location)).filter(_._1 == completed).map(_._2).orElse {
          val schema = HoodieSource.dataSchema(location)
          schemas.put(location, (completed, schema))
          Some(schema)
        }
    }

  private def partitionOption(columns: Seq[String]): Map[String, String] =
    if (columns.isEmpty) Map.empty else Map("hoodie.datasource.write.partitionpath.field" -> columns.mkString(","))

  /** Hudi's SQL table properties of the table already at `location` (so DESCRIBE shows them). */
  def sqlPropertiesOf(stored: Map[String, String]): Map[String, String] = {
    Seq(
      "primaryKey" -> stored.get("hoodie.table.recordkey.fields"),
      "preCombineField" -> stored.get("hoodie.table.precombine.field").orElse(stored.get("hoodie.table.ordering.fields")),
      "type" -> stored.get("hoodie.table.type").map {
        case "MERGE_ON_READ" => "mor"
        case _ => "cow"
      }
    ).collect { case (k, Some(v)) if v.nonEmpty => k -> v }.toMap
  }

  def changesColumns(change: TableChange): Boolean = change.isInstanceOf[TableChange.ColumnChange]

  /** ADD COLUMNS and ALTER COLUMN TYPE: the columns asked for go to the Python source, which commits them
   * as the table's schema (or refuses them, changing nothing). Returns the new data columns of the
   * catalog (without the partition columns, which stay last). */
  def alterColumns(table: HoodieSqlTable, changes: Seq[TableChange]): StructType = {
    changes.foreach {
      case add: TableChange.AddColumn =>
        val name = add.fieldNames().mkString(".")
        if (add.fieldNames().length != 1) throw HoodieErrors.alterColumns(table.name(), s"$name is a nested field")
        if (add.position() != null) throw HoodieErrors.alterColumns(table.name(), s"$name has a position (${add.position()})")
        if (!add.isNullable) throw HoodieErrors.alterColumns(table.name(), s"$name is NOT NULL")
        if (add.defaultValue() != null) throw HoodieErrors.alterColumns(table.name(), s"$name has a DEFAULT")
      case update: TableChange.UpdateColumnType if update.fieldNames().length == 1 =>
      case other => throw HoodieErrors.alterColumns(table.name(), s"unsupported change $other")
    }
    val requested = CatalogV2Util.applySchemaChanges(table.schema, changes, Some(HoodieSource.Name), "ALTER TABLE")
    HoodieSource.dataSource().inferSchema(HoodieSource.options(HoodieSource.overlay(HoodieSource.storageOptions(),
      Map("path" -> table.location, HoodieSource.AlterSchemaOption -> requested.json))))
    val partitionColumns = table.catalogTable.partitionColumnNames.toSet
    StructType(requested.filterNot(f => partitionColumns.contains(f.name)))
  }

  /** An empty write through the Python source: it creates the table on storage (no commit), or checks
   * that the table already there agrees with the statement's keys and type. */
  def createOnStorage(table: HoodieSqlTable): Unit = {
    val spark = SparkSession.active
    val empty = spark.createDataFrame(util.List.of[org.apache.spark.sql.Row](), table.schema)
    HoodieErrors.fromPython(empty.write.format(HoodieSource.Name).options(table.writeOptions).mode("append").save())
  }

  /** A `TIMESTAMP AS OF` time (microseconds since the epoch) as an instant of the table's timeline, whose
   * instants are UTC or, when `hoodie.table.timeline.timezone` says LOCAL, local times. */
  def instantOf(micros: Long, stored: Map[String, String]): String = {
    val local = stored.get("hoodie.table.timeline.timezone").exists(_.equalsIgnoreCase("LOCAL"))
    val zone = if (local) java.time.ZoneId.systemDefault() else java.time.ZoneOffset.UTC
    val time = java.time.Instant.ofEpochSecond(0, micros * 1000).atZone(zone)
    java.time.format.DateTimeFormatter.ofPattern("yyyyMMddHHmmssSSS").format(time)
  }
}
