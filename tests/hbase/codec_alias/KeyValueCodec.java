// HBase's KeyValueCodec under the name Apache Hudi's bundle gives it. The bundle relocates the HBase client, whose
// connection header then names its cell-block codec org.apache.hudi.org.apache.hadoop.hbase.codec.KeyValueCodec; a
// region server loads the codec by that name (ServerRpcConnection.setupCellBlockCodecs) and, without this class on
// its class path, closes the connection (UnsupportedCellCodecException). The cells' encoding is the same.
// tests/hbase_server.py compiles it onto the test server's class path.
package org.apache.hudi.org.apache.hadoop.hbase.codec;

public class KeyValueCodec extends org.apache.hadoop.hbase.codec.KeyValueCodec {
}
