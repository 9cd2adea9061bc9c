// A Java contender for tests/storage/test_zookeeper_lock.py: the lock as Apache Hudi's
// ZookeeperBasedLockProvider takes it, Curator's InterProcessMutex at <base_path>/<lock_key>.
// Run as a single-file program: java -cp <curator and zookeeper jars> CuratorMutexWorker.java <connect> <path>
// Commands on stdin, one a line: "acquire <ms>" prints true or false; "release" prints released.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.TimeUnit;

import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.retry.BoundedExponentialBackoffRetry;

public class CuratorMutexWorker {
  public static void main(String[] args) throws Exception {
    CuratorFramework client = CuratorFrameworkFactory.builder().connectString(args[0])
        .retryPolicy(new BoundedExponentialBackoffRetry(100, 1000, 3))
        .sessionTimeoutMs(5000).connectionTimeoutMs(5000).build();
    client.start();
    InterProcessMutex mutex = new InterProcessMutex(client, args[1]);
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
    System.out.println("ready");
    System.out.flush();
    for (String line = in.readLine(); line != null; line = in.readLine()) {
      String[] command = line.trim().split(" ");
      if (command[0].equals("acquire")) {
        System.out.println(mutex.acquire(Long.parseLong(command[1]), TimeUnit.MILLISECONDS));
      } else if (command[0].equals("release")) {
        mutex.release();
        System.out.println("released");
      }
      System.out.flush();
    }
    client.close();
  }
}
