// Apache Hudi's own metadata-table keys and records (org.apache.hudi.metadata.HoodieMetadataPayload and
// HoodieTableMetadataUtil) as the oracle of hoodie_datasource/metadata/. Run as a single-file source program on
// Hudi's Spark bundle (tests/hudi_oracle/metadata_oracle.py); one command a line on stdin, every string argument
// base64 (UTF-8; "~" for the empty string), answers then "end":
//
//   schema                                   -> HoodieMetadataRecord's Avro schema (its toString, base64)
//   keys PARTITION FILE COLUMN               -> the column-stats key, then the bloom-filter key
//   shard COUNT KEY...                       -> per KEY mapRecordKeyToFileGroupIndex(KEY, COUNT)
//   rli KEY PARTITION FILEID INSTANT         -> the record-index record's Avro bytes (avroToBytes)
//   colstats PARTITION FILE COLUMN KIND MIN MAX NULLS VALUES SIZE USIZE DELETED
//                                            -> the column-stats record's Avro bytes; KIND names the Java class
//                                               of MIN and MAX (int, long, float, double, string, boolean,
//                                               date: epoch day, decimal: plain text, timestamp: epoch micros,
//                                               bytes: base64 again); "-" for a null value
//   bloom PARTITION FILE INSTANT TYPE BYTES DELETED -> the bloom-filter record's Avro bytes
//   files PARTITION NAME=SIZE... -NAME...    -> the files record's Avro bytes (-NAME: a deleted file)
//   partitions DELETED PARTITION...          -> the partition-list record's Avro bytes
//
// Failures answer "error TEXT".
import org.apache.hudi.avro.HoodieAvroUtils;
import org.apache.hudi.avro.model.HoodieMetadataRecord;
import org.apache.hudi.common.model.HoodieColumnRangeMetadata;
import org.apache.hudi.common.model.HoodieRecord;
import org.apache.hudi.common.util.hash.ColumnIndexID;
import org.apache.hudi.common.util.hash.FileIndexID;
import org.apache.hudi.common.util.hash.PartitionIndexID;
import org.apache.hudi.metadata.HoodieMetadataPayload;
import org.apache.hudi.metadata.HoodieTableMetadataUtil;

import org.apache.avro.generic.GenericRecord;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigDecimal;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.sql.Timestamp;
import java.time.Instant;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public class MetadataRecords {
  static final Base64.Encoder ENC = Base64.getEncoder();
  static final Base64.Decoder DEC = Base64.getDecoder();

  static String text(String b64) {
    return b64.equals("~") ? "" : new String(DEC.decode(b64), StandardCharsets.UTF_8);
  }

  static String b64(String text) {
    return ENC.encodeToString(text.getBytes(StandardCharsets.UTF_8));
  }

  static String bytesOf(HoodieRecord<HoodieMetadataPayload> record) throws Exception {
    GenericRecord value = (GenericRecord) record.getData().getInsertValue(HoodieMetadataRecord.getClassSchema()).get();
    return ENC.encodeToString(HoodieAvroUtils.avroToBytes(value));
  }

  static Comparable<?> value(String kind, String b64) {
    if (b64.equals("-")) {
      return null;
    }
    String v = text(b64);
    switch (kind) {
      case "int": return Integer.valueOf(v);
      case "long": return Long.valueOf(v);
      case "float": return Float.valueOf(v);
      case "double": return Double.valueOf(v);
      case "string": return v;
      case "boolean": return Boolean.valueOf(v);
      case "date": return LocalDate.ofEpochDay(Long.parseLong(v));
      case "decimal": return new BigDecimal(v);
      case "timestamp": return Timestamp.from(Instant.EPOCH.plusNanos(Long.parseLong(v) * 1000L));
      case "bytes": return ByteBuffer.wrap(DEC.decode(v));
      default: throw new IllegalArgumentException("unknown kind " + kind);
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  static List<String> answer(String[] w) throws Exception {
    List<String> out = new ArrayList<>();
    switch (w[0]) {
      case "schema":
        out.add(b64(HoodieMetadataRecord.getClassSchema().toString()));
        break;
      case "keys": {
        String partition = text(w[1]);
        String file = text(w[2]);
        String column = text(w[3]);
        PartitionIndexID partitionId = new PartitionIndexID(HoodieTableMetadataUtil.getColumnStatsIndexPartitionIdentifier(partition));
        out.add(b64(HoodieMetadataPayload.getColumnStatsIndexKey(partitionId, new FileIndexID(file), new ColumnIndexID(column))));
        PartitionIndexID bloomPartitionId = new PartitionIndexID(HoodieTableMetadataUtil.getBloomFilterIndexPartitionIdentifier(partition));
        out.add(b64(HoodieMetadataPayload.getBloomFilterIndexKey(bloomPartitionId, new FileIndexID(file))));
        break;
      }
      case "shard": {
        int count = Integer.parseInt(w[1]);
        for (int i = 2; i < w.length; i++) {
          out.add(Integer.toString(HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex(text(w[i]), count)));
        }
        break;
      }
      case "rli":
        out.add(bytesOf(HoodieMetadataPayload.createRecordIndexUpdate(text(w[1]), text(w[2]), text(w[3]), text(w[4]), 0)));
        break;
      case "colstats": {
        String kind = w[4];
        HoodieColumnRangeMetadata<Comparable> range = HoodieColumnRangeMetadata.create(text(w[2]), text(w[3]),
            (Comparable) value(kind, w[5]), (Comparable) value(kind, w[6]), Long.parseLong(w[7]), Long.parseLong(w[8]),
            Long.parseLong(w[9]), Long.parseLong(w[10]));
        HoodieRecord record = HoodieMetadataPayload.createColumnStatsRecords(text(w[1]), Collections.singletonList(range),
            Boolean.parseBoolean(w[11])).findFirst().get();
        out.add(bytesOf(record));
        break;
      }
      case "bloom":
        out.add(bytesOf(HoodieMetadataPayload.createBloomFilterMetadataRecord(text(w[1]), text(w[2]), text(w[3]),
            text(w[4]), ByteBuffer.wrap(DEC.decode(w[5])), Boolean.parseBoolean(w[6]))));
        break;
      case "files": {
        Map<String, Long> added = new LinkedHashMap<>();
        List<String> deleted = new ArrayList<>();
        for (int i = 2; i < w.length; i++) {
          if (w[i].startsWith("-")) {
            deleted.add(text(w[i].substring(1)));
          } else {
            String[] pair = w[i].split("=");
            added.put(text(pair[0]), Long.parseLong(pair[1]));
          }
        }
        out.add(bytesOf(HoodieMetadataPayload.createPartitionFilesRecord(text(w[1]), added, deleted)));
        break;
      }
      case "partitions": {
        List<String> partitions = new ArrayList<>();
        for (int i = 2; i < w.length; i++) {
          partitions.add(text(w[i]));
        }
        out.add(bytesOf(HoodieMetadataPayload.createPartitionListRecord(partitions, Boolean.parseBoolean(w[1]))));
        break;
      }
      default:
        throw new IllegalArgumentException("unknown command " + w[0]);
    }
    return out;
  }

  public static void main(String[] args) throws Exception {
    PrintStream answers = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "UTF-8");
    System.setOut(System.err);
    answers.println("ready");
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      if (line.trim().isEmpty()) {
        continue;
      }
      try {
        for (String answer : answer(line.trim().split(" "))) {
          answers.println(answer);
        }
      } catch (Throwable e) {
        e.printStackTrace();
        answers.println("error " + String.valueOf(e).replace('\n', ' '));
        continue;
      }
      answers.println("end");
    }
  }
}
