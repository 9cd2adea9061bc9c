// HBase 2.4's HFile reader and writer, as Apache Hudi 0.15 carries them shaded in its Spark bundle and uses
// them for its metadata table (HoodieAvroHFileWriter, HoodieHBaseAvroHFileReader). The oracle of our HFiles
// on the HBase side; run as a single-file source program (tests/hudi_oracle/hfile_oracle.py), one command a
// line on stdin:
//
//   cells PATH               -> "count N", N lines "KEY VALUE", the file info as "info NAME VALUE" lines,
//                               "checksumFailures F" (blocks whose HBase checksums did not verify), "end"
//   write PATH BLOCK_SIZE CODEC INDEX_CHUNK CELLS_FILE
//                            -> writes the cells of CELLS_FILE ("KEY VALUE" lines) as Hudi 0.15 does (KeyValue
//                               of the key and value, HoodieHBaseKVComparator, CODEC GZ or NONE), with index
//                               blocks of INDEX_CHUNK bytes (small ones give a multi-level index), then "end"
//
// Keys, names and values are base64; failures answer "error TEXT".
import org.apache.hudi.io.storage.HoodieHBaseKVComparator;
import org.apache.hudi.org.apache.hadoop.hbase.Cell;
import org.apache.hudi.org.apache.hadoop.hbase.CellUtil;
import org.apache.hudi.org.apache.hadoop.hbase.KeyValue;
import org.apache.hudi.org.apache.hadoop.hbase.fs.HFileSystem;
import org.apache.hudi.org.apache.hadoop.hbase.io.compress.Compression;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.CacheConfig;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.HFile;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.HFileContextBuilder;
import org.apache.hudi.org.apache.hadoop.hbase.io.hfile.HFileScanner;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.fs.Path;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Base64;
import java.util.List;
import java.util.Map;

public class HBaseHFile {
  static final Base64.Encoder ENC = Base64.getEncoder();
  static final Base64.Decoder DEC = Base64.getDecoder();

  static void cells(String path, PrintStream out) throws Exception {
    Configuration conf = new Configuration();
    Path file = new Path(path);
    // HBase verifies its block checksums only through an HFileSystem that asks it to (as a region server's
    // does); a plain FileSystem leaves the check to the file system's own checksums
    FileSystem fs = new HFileSystem(conf, true);
    HFile.getAndResetChecksumFailuresCount();
    try (HFile.Reader reader = HFile.createReader(fs, file, new CacheConfig(conf), true, conf)) {
      out.println("count " + reader.getEntries());
      HFileScanner scanner = reader.getScanner(false, false);
      if (scanner.seekTo()) {
        do {
          Cell cell = scanner.getCell();
          out.println(ENC.encodeToString(CellUtil.cloneRow(cell)) + " " + ENC.encodeToString(CellUtil.cloneValue(cell)));
        } while (scanner.next());
      }
      for (Map.Entry<byte[], byte[]> entry : reader.getHFileInfo().entrySet()) {
        out.println("info " + ENC.encodeToString(entry.getKey()) + " " + ENC.encodeToString(entry.getValue()));
      }
    }
    out.println("checksumFailures " + HFile.getAndResetChecksumFailuresCount());
  }

  static void write(String[] words) throws Exception {
    Configuration conf = new Configuration();
    conf.setInt("hfile.index.block.max.size", Integer.parseInt(words[4]));
    Path file = new Path(words[1]);
    FileSystem fs = file.getFileSystem(conf);
    HFile.Writer writer = HFile.getWriterFactory(conf, new CacheConfig(conf))
        .withPath(fs, file)
        .withFileContext(new HFileContextBuilder()
            .withBlockSize(Integer.parseInt(words[2]))
            .withCompression(Compression.Algorithm.valueOf(words[3]))
            .withCellComparator(new HoodieHBaseKVComparator())
            .build())
        .create();
    List<String> lines = Files.readAllLines(Paths.get(words[5]), StandardCharsets.UTF_8);
    for (String line : lines) {
      String[] parts = line.split(" ", -1);
      writer.append(new KeyValue(DEC.decode(parts[0]), null, null, DEC.decode(parts[1])));
    }
    writer.close();
  }

  public static void main(String[] args) throws Exception {
    PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), false, "UTF-8");
    System.setOut(System.err);  // what the libraries print goes to stderr: stdout carries the answers only
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    out.println("ready");
    out.flush();
    String line;
    while ((line = in.readLine()) != null) {
      if (line.isEmpty()) {
        continue;
      }
      String[] words = line.split(" ");
      try {
        if (words[0].equals("cells")) {
          cells(words[1], out);
        } else if (words[0].equals("write")) {
          write(words);
        } else {
          throw new IllegalArgumentException("unknown command " + words[0]);
        }
        out.println("end");
      } catch (Throwable e) {
        out.println("error " + e.toString().replace('\n', ' '));
      }
      out.flush();
    }
  }
}
