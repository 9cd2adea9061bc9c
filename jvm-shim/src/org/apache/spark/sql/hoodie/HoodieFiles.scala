package org.apache.spark.sql.hoodie

import scala.util.Try

import org.apache.hadoop.conf.Configuration
import org.apache.hadoop.fs.{FileStatus, FileSystem, Path}

import org.apache.spark.sql.catalyst.InternalRow
import org.apache.spark.sql.catalyst.expressions.Expression
import org.apache.spark.sql.execution.datasources.{FileIndex, PartitionDirectory}
import org.apache.spark.sql.types.StructType

/**
 * The files a hoodie read plans to read, listed by the Python source (`hoodie_datasource.read.planned_files`).
 * It comes back as the metadata of the schema the source infers with `hoodie.datasource.read.plan.files`
 * (`hoodie_datasource.spark.file_listing`): a call into Python beside the driver, with no Spark job, so
 * the table format stays in Python.
 */
object HoodieFiles {
  /** One file slice (of file group `partition/fileId`): its base file (absolute local path or full URI, and
   * bytes) when `native` (read as it is) or `changes` (read less the rows its log files replace, the Python
   * reader adding the log records that win), else a slice the Python reader merges. */
  case class Planned(group: String, path: String, size: Long, native: Boolean, changes: Boolean)

  /** What a read plans: its file slices, the newest completed write it shows, and for an incremental
   * pull the commit time its rows come after. */
  case class Listing(files: Seq[Planned], instant: String, begin: Option[String])

  /** A planned file's Hadoop path: local files are plain absolute paths, others full URIs. */
  def path(planned: String): Path = if (planned.startsWith("/")) new Path("file", null, planned) else new Path(planned)

  /** Spark's Hadoop file system can read this planned file (local files always; an object store only with
   * its Hadoop connector, e.g. hadoop-aws's S3AFileSystem, on the classpath). */
  def hadoopReads(planned: String, hadoopConf: Configuration): Boolean = {
    val scheme = path(planned).toUri.getScheme
    scheme == "file" || Try(FileSystem.getFileSystemClass(scheme, hadoopConf)).isSuccess
  }

  def list(options: Map[String, String]): Listing = {
    val schema = HoodieSource.inferSchema(options + (HoodieSource.PlanFilesOption -> "true"))
    val m = schema.fields.head.metadata
    if (m.getLong("count") == 0) return Listing(Nil, "", None)
    val (ids, paths, sizes, native, changes) = (m.getStringArray("group"), m.getStringArray("path"),
      m.getLongArray("size"), m.getBooleanArray("native"), m.getBooleanArray("changes"))
    Listing(ids.indices.map(i => Planned(ids(i), paths(i), sizes(i), native(i), changes(i))), m.getString("instant"),
      Option(m.getString("begin")).filter(_.nonEmpty))
  }
}

/** Exactly the planned base files, with the sizes the listing measured (no file system calls here). A file's
 * modification time is its ordinal among `files`, in milliseconds: the scan's `_metadata.file_modification_time`
 * names the file by a long (no parquet reader looks at it). */
private class HoodieFileIndex(files: Seq[HoodieFiles.Planned]) extends FileIndex {
  private val statuses: Array[FileStatus] = files.zipWithIndex.map { case (f, ordinal) =>
    new FileStatus(f.size, false, 1, 0L, ordinal.toLong, HoodieFiles.path(f.path))
  }.toArray

  override def rootPaths: Seq[Path] = statuses.map(_.getPath.getParent).distinct.toSeq

  override def listFiles(partitionFilters: Seq[Expression], dataFilters: Seq[Expression]): Seq[PartitionDirectory] =
    Seq(PartitionDirectory(InternalRow.empty, statuses))

  override def inputFiles: Array[String] = statuses.map(_.getPath.toString)

  override def refresh(): Unit = ()

  override def sizeInBytes: Long = statuses.map(_.getLen).sum

  override def partitionSchema: StructType = StructType(Nil)
}
