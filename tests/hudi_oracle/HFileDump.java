// Apache Hudi's own HFile reader (org.apache.hudi.io.hfile.HFileReaderImpl, the reader of the metadata
// table in Hudi 0.15 and 1.x) as the oracle of our HFile reader and writer. Run as a single-file source
// program on Hudi's Spark bundle (tests/hudi_oracle/hfile_oracle.py); one command a line on stdin:
//
//   cells PATH               -> "count N", then N lines "KEY VALUE", then "end"
//   info PATH NAME...        -> per NAME a line "NAME VALUE" ("-" when absent), then "end"
//   meta PATH NAME           -> "VALUE" ("-" when absent), then "end"
//   seek PATH KEY...         -> per KEY (ascending) "CODE VALUE" (Hudi's seekTo result, 0 when found; then "end")
//   bloom PATH KEY...        -> per KEY "1" or "0": the file's bloom filter's mightContain, then "end"
//
// Keys, names and values are base64 (names of file info entries too); failures answer "error TEXT".
import org.apache.hudi.common.bloom.BloomFilter;
import org.apache.hudi.common.bloom.BloomFilterFactory;
import org.apache.hudi.common.util.Option;
import org.apache.hudi.common.util.io.ByteBufferBackedInputStream;
import org.apache.hudi.io.ByteArraySeekableDataInputStream;
import org.apache.hudi.io.hfile.HFileReader;
import org.apache.hudi.io.hfile.HFileReaderImpl;
import org.apache.hudi.io.hfile.KeyValue;
import org.apache.hudi.io.hfile.UTF8StringKey;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.Base64;

public class HFileDump {
  static final Base64.Encoder ENC = Base64.getEncoder();
  static final Base64.Decoder DEC = Base64.getDecoder();

  static HFileReader open(String path) throws Exception {
    byte[] content = Files.readAllBytes(Paths.get(path));
    HFileReader reader = new HFileReaderImpl(
        new ByteArraySeekableDataInputStream(new ByteBufferBackedInputStream(content)), content.length);
    reader.initializeMetadata();
    return reader;
  }

  static String b64(byte[] bytes) {
    return ENC.encodeToString(bytes);
  }

  static String b64(byte[] bytes, int offset, int length) {
    return b64(Arrays.copyOfRange(bytes, offset, offset + length));
  }

  static String value(KeyValue kv) {
    return b64(kv.getBytes(), kv.getValueOffset(), kv.getValueLength());
  }

  static byte[] meta(HFileReader reader, String name) throws Exception {
    Option<ByteBuffer> block = reader.getMetaBlock(name);
    if (!block.isPresent()) {
      return null;
    }
    ByteBuffer buffer = block.get();
    byte[] bytes = new byte[buffer.remaining()];
    buffer.get(bytes);
    return bytes;
  }

  static void run(String[] words, PrintStream out) throws Exception {
    try (HFileReader reader = open(words[1])) {
      switch (words[0]) {
        case "cells":
          out.println("count " + reader.getNumKeyValueEntries());
          if (reader.seekTo()) {
            do {
              KeyValue kv = reader.getKeyValue().get();
              out.println(b64(kv.getBytes(), kv.getKeyContentOffset(), kv.getKeyContentLength()) + " " + value(kv));
            } while (reader.next());
          }
          break;
        case "info":
          for (int i = 2; i < words.length; i++) {
            Option<byte[]> found = reader.getMetaInfo(new UTF8StringKey(DEC.decode(words[i])));
            out.println(words[i] + " " + (found.isPresent() ? b64(found.get()) : "-"));
          }
          break;
        case "meta":
          byte[] block = meta(reader, words[2]);
          out.println(block == null ? "-" : b64(block));
          break;
        case "seek":
          reader.seekTo();
          for (int i = 2; i < words.length; i++) {
            int code = reader.seekTo(new UTF8StringKey(DEC.decode(words[i])));
            out.println(code + " " + (code == 0 ? value(reader.getKeyValue().get()) : "-"));
          }
          break;
        case "bloom":
          String type = new String(reader.getMetaInfo(new UTF8StringKey("bloomFilterTypeCode")).get(),
              StandardCharsets.UTF_8);
          BloomFilter filter = BloomFilterFactory.fromString(
              new String(meta(reader, "bloomFilter"), StandardCharsets.UTF_8), type);
          for (int i = 2; i < words.length; i++) {
            out.println(filter.mightContain(new String(DEC.decode(words[i]), StandardCharsets.UTF_8)) ? "1" : "0");
          }
          break;
        default:
          throw new IllegalArgumentException("unknown command " + words[0]);
      }
    }
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
      try {
        run(line.split(" "), out);
        out.println("end");
      } catch (Throwable e) {
        out.println("error " + e.toString().replace('\n', ' '));
      }
      out.flush();
    }
  }
}
