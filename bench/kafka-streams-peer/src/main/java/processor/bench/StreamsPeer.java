package processor.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Materialized;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StateRestoreListener;
import org.apache.kafka.streams.processor.api.FixedKeyProcessor;
import org.apache.kafka.streams.processor.api.FixedKeyProcessorContext;
import org.apache.kafka.streams.processor.api.FixedKeyRecord;

/**
 * The Kafka Streams side of the side-by-side benchmark: a per-key count (groupByKey().count() on a
 * persistent RocksDB store, record cache off, exactly_once_v2) run against a real broker.
 *
 * <p>Usage: {@code StreamsPeer <mode> [--flags]}; modes: throughput, restore, failover, load (and
 * the internal failover-member). Each mode prints exactly one result line {@code PEER {json}} on
 * stdout and logs progress to stderr; exit code 0 on success, non-zero (with a message on stderr)
 * on failure or timeout. See README.md beside pom.xml.
 */
public final class StreamsPeer {

  private static final String STORE = "counts";
  private static final PrintStream OUT = System.out;

  // ---- options ---------------------------------------------------------------------------------

  static final class Options {
    final Map<String, String> values = new HashMap<>();

    static Options parse(String[] args, int from) {
      Options o = new Options();
      for (int i = from; i < args.length; i++) {
        String a = args[i];
        if (!a.startsWith("--")) throw new Fail("unexpected argument: " + a);
        String name = a.substring(2);
        String value;
        int eq = name.indexOf('=');
        if (eq >= 0) {
          value = name.substring(eq + 1);
          name = name.substring(0, eq);
        } else {
          if (i + 1 >= args.length) throw new Fail("--" + name + " needs a value");
          value = args[++i];
        }
        o.values.put(name, value);
      }
      return o;
    }

    String str(String name) {
      String v = values.get(name);
      if (v == null || v.isEmpty()) throw new Fail("--" + name + " is required");
      return v;
    }

    String str(String name, String dflt) {
      String v = values.get(name);
      return v == null ? dflt : v;
    }

    long num(String name) {
      return parseLong(name, str(name));
    }

    long num(String name, long dflt) {
      String v = values.get(name);
      return v == null ? dflt : parseLong(name, v);
    }

    double dbl(String name, double dflt) {
      String v = values.get(name);
      if (v == null) return dflt;
      try {
        return Double.parseDouble(v);
      } catch (NumberFormatException e) {
        throw new Fail("--" + name + ": not a number: " + v);
      }
    }

    private static long parseLong(String name, String v) {
      try {
        return Long.parseLong(v);
      } catch (NumberFormatException e) {
        throw new Fail("--" + name + ": not an integer: " + v);
      }
    }

    void allow(String... names) {
      Set<String> ok = new HashSet<>(List.of(names));
      for (String k : values.keySet()) {
        if (!ok.contains(k)) throw new Fail("unknown option --" + k);
      }
    }
  }

  /** A failure with a message for stderr: exit code 1. */
  static final class Fail extends RuntimeException {
    Fail(String message) {
      super(message);
    }
  }

  /** The settings every Streams mode shares. */
  static final class Common {
    String bootstrap;
    String applicationId;
    long commitIntervalMs;
    long sessionTimeoutMs;
    long transactionTimeoutMs;
    long timeoutS;
    String stateDir; // null: a fresh temporary directory
    Options options;

    static final String[] NAMES = {
      "bootstrap", "application-id", "commit-interval-ms", "session-timeout-ms",
      "transaction-timeout-ms", "state-dir", "timeout-s"
    };

    static Common of(Options o) {
      Common c = new Common();
      c.options = o;
      c.bootstrap = o.str("bootstrap");
      c.applicationId = o.str("application-id");
      c.commitIntervalMs = o.num("commit-interval-ms", 100);
      c.sessionTimeoutMs = o.num("session-timeout-ms", 6000);
      c.transactionTimeoutMs = o.num("transaction-timeout-ms", 10000);
      c.timeoutS = o.num("timeout-s", 300);
      c.stateDir = o.values.get("state-dir");
      return c;
    }

    long deadlineNanos(long start) {
      return start + TimeUnit.SECONDS.toNanos(timeoutS);
    }
  }

  static String[] concat(String[] a, String... b) {
    String[] r = new String[a.length + b.length];
    System.arraycopy(a, 0, r, 0, a.length);
    System.arraycopy(b, 0, r, a.length, b.length);
    return r;
  }

  // ---- main ------------------------------------------------------------------------------------

  public static void main(String[] args) {
    int code;
    try {
      if (args.length == 0) throw new Fail(usage());
      Options o = Options.parse(args, 1);
      switch (args[0]) {
        case "throughput" -> throughput(o);
        case "restore" -> restore(o);
        case "failover" -> failover(o);
        case "failover-member" -> failoverMember(o);
        case "load" -> load(o);
        case "-h", "--help", "help" -> {
          System.err.println(usage());
        }
        default -> throw new Fail("unknown mode " + args[0] + "\n" + usage());
      }
      code = 0;
    } catch (Fail f) {
      System.err.println("StreamsPeer: error: " + f.getMessage());
      code = 1;
    } catch (Throwable t) {
      System.err.println("StreamsPeer: error: " + t);
      t.printStackTrace(System.err);
      code = 1;
    }
    System.out.flush();
    System.err.flush();
    // Kafka's client threads may linger; the result is printed, so leave at once.
    Runtime.getRuntime().halt(code);
  }

  static String usage() {
    return String.join("\n",
        "usage: StreamsPeer MODE --bootstrap HOST:PORT [--flags]",
        "  throughput --application-id ID --input T --output O --records N",
        "  restore    --application-id ID --input T --output O --records N",
        "  failover   --application-id ID --input T --output O [--rate R] [--warmup-s W]",
        "  load       --topic T --partitions P --records N [--distinct-keys K] [--key-bytes B]"
            + " [--value-bytes V]",
        "common flags: --commit-interval-ms 100 --session-timeout-ms 6000",
        "  --transaction-timeout-ms 10000 --state-dir DIR (default: a fresh temp dir)",
        "  --timeout-s 300",
        "prints one line 'PEER {json}' on stdout; logs go to stderr");
  }

  static void log(String fmt, Object... args) {
    System.err.println("StreamsPeer: " + String.format(Locale.ROOT, fmt, args));
  }

  // ---- the topology ----------------------------------------------------------------------------

  /** Called for every record that count() emitted, with the input partition it came from. */
  interface Observer {
    default void onInit(int partition) {}

    void onRecord(int partition);

    default void onClose(int partition) {}
  }

  static Topology topology(String input, String output, Observer observer) {
    StreamsBuilder builder = new StreamsBuilder();
    builder.stream(input, Consumed.with(Serdes.String(), Serdes.ByteArray()))
        .groupByKey()
        .count(Materialized.as(STORE))
        .toStream()
        // The equivalent of a peek that also knows the task's partition: one processor
        // instance per task, so init() is the task (re)starting on this member.
        .processValues(() -> new FixedKeyProcessor<String, Long, Long>() {
          private FixedKeyProcessorContext<String, Long> context;
          private int partition;

          @Override
          public void init(FixedKeyProcessorContext<String, Long> context) {
            this.context = context;
            this.partition = context.taskId().partition();
            observer.onInit(partition);
          }

          @Override
          public void process(FixedKeyRecord<String, Long> record) {
            observer.onRecord(partition);
            context.forward(record);
          }

          @Override
          public void close() {
            observer.onClose(partition);
          }
        })
        .to(output, Produced.with(Serdes.String(), Serdes.Long()));
    return builder.build();
  }

  static Properties streamsProps(Common c, Path stateDir) {
    Properties p = new Properties();
    p.put(StreamsConfig.APPLICATION_ID_CONFIG, c.applicationId);
    p.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, c.bootstrap);
    p.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG, StreamsConfig.EXACTLY_ONCE_V2);
    p.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, c.commitIntervalMs);
    p.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, 1);
    p.put(StreamsConfig.STATESTORE_CACHE_MAX_BYTES_CONFIG, 0L);
    p.put(StreamsConfig.REPLICATION_FACTOR_CONFIG, 1);
    p.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.SESSION_TIMEOUT_MS_CONFIG),
        (int) c.sessionTimeoutMs);
    p.put(StreamsConfig.consumerPrefix(ConsumerConfig.HEARTBEAT_INTERVAL_MS_CONFIG),
        (int) Math.max(1, c.sessionTimeoutMs / 4));
    p.put(StreamsConfig.producerPrefix(ProducerConfig.TRANSACTION_TIMEOUT_CONFIG),
        (int) c.transactionTimeoutMs);
    return p;
  }

  /** A running KafkaStreams with a flag set when it dies. */
  static final class App {
    final KafkaStreams streams;
    final AtomicReference<Throwable> error = new AtomicReference<>();
    final AtomicReference<KafkaStreams.State> state = new AtomicReference<>(KafkaStreams.State.CREATED);

    App(Topology topology, Properties props) {
      streams = new KafkaStreams(topology, props);
      streams.setUncaughtExceptionHandler(e -> {
        error.compareAndSet(null, e);
        return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
      });
      streams.setStateListener((now, before) -> {
        state.set(now);
        log("streams state %s -> %s", before, now);
      });
    }

    void check() {
      Throwable e = error.get();
      if (e != null) throw new Fail("Kafka Streams failed: " + e);
      KafkaStreams.State s = state.get();
      if (s == KafkaStreams.State.ERROR || s == KafkaStreams.State.PENDING_ERROR
          || s == KafkaStreams.State.NOT_RUNNING || s == KafkaStreams.State.PENDING_SHUTDOWN) {
        throw new Fail("Kafka Streams stopped unexpectedly (state " + s + ")");
      }
    }

    boolean close(Duration d) {
      long t0 = System.nanoTime();
      boolean ok = streams.close(d);
      log("closed in %.3f s%s", (System.nanoTime() - t0) / 1e9, ok ? "" : " (timed out)");
      return ok;
    }
  }

  /** Counts processed records; remembers the time and CPU of the first and the n-th. */
  static final class Progress implements Observer {
    final long target;
    final AtomicLong processed = new AtomicLong();
    volatile long firstNanos;
    volatile long firstCpu;
    volatile long lastNanos;
    volatile long lastCpu;
    final CountDownLatch done = new CountDownLatch(1);

    Progress(long target) {
      this.target = target;
    }

    @Override
    public void onRecord(int partition) {
      long n = processed.incrementAndGet();
      if (n == 1) {
        firstNanos = System.nanoTime();
        firstCpu = processCpuNanos();
      }
      if (n == target) {
        lastNanos = System.nanoTime();
        lastCpu = processCpuNanos();
        done.countDown();
      }
    }

    /** Waits for the target, failing on timeout or when the app dies; logs every 5 s. */
    void await(App app, long deadlineNanos, String what) throws InterruptedException {
      long nextLog = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (!done.await(100, TimeUnit.MILLISECONDS)) {
        app.check();
        long now = System.nanoTime();
        if (now - deadlineNanos > 0) {
          throw new Fail(String.format(Locale.ROOT, "timeout: %s processed %d of %d records",
              what, processed.get(), target));
        }
        if (now - nextLog > 0) {
          log("%s: %d of %d records processed", what, processed.get(), target);
          nextLog = now + TimeUnit.SECONDS.toNanos(5);
        }
      }
    }
  }

  static long processCpuNanos() {
    java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
    if (os instanceof com.sun.management.OperatingSystemMXBean sun) return sun.getProcessCpuTime();
    return -1;
  }

  // ---- state directories -----------------------------------------------------------------------

  static Path stateDir(Common c) throws IOException {
    if (c.stateDir != null) {
      Path p = Path.of(c.stateDir);
      Files.createDirectories(p);
      return p;
    }
    return Files.createTempDirectory("streams-peer-");
  }

  static void deleteTree(Path root) {
    if (root == null || !Files.exists(root)) return;
    try {
      Files.walkFileTree(root, new SimpleFileVisitor<>() {
        @Override
        public FileVisitResult visitFile(Path f, BasicFileAttributes a) throws IOException {
          Files.deleteIfExists(f);
          return FileVisitResult.CONTINUE;
        }

        @Override
        public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
          Files.deleteIfExists(d);
          return FileVisitResult.CONTINUE;
        }
      });
    } catch (IOException e) {
      log("could not delete %s: %s", root, e);
    }
  }

  // ---- JSON ------------------------------------------------------------------------------------

  static final class Json {
    private final LinkedHashMap<String, Object> fields = new LinkedHashMap<>();

    Json put(String k, Object v) {
      fields.put(k, v);
      return this;
    }

    @Override
    public String toString() {
      StringBuilder b = new StringBuilder("{");
      boolean first = true;
      for (Map.Entry<String, Object> e : fields.entrySet()) {
        if (!first) b.append(',');
        first = false;
        b.append(quote(e.getKey())).append(':');
        Object v = e.getValue();
        if (v == null) {
          b.append("null");
        } else if (v instanceof Double d) {
          if (d.isNaN() || d.isInfinite()) b.append("null");
          else b.append(String.format(Locale.ROOT, "%.6f", d).replaceAll("0+$", "").replaceAll("\\.$", ".0"));
        } else if (v instanceof Number || v instanceof Boolean) {
          b.append(v);
        } else {
          b.append(quote(v.toString()));
        }
      }
      return b.append('}').toString();
    }

    static String quote(String s) {
      StringBuilder b = new StringBuilder("\"");
      for (char ch : s.toCharArray()) {
        switch (ch) {
          case '"' -> b.append("\\\"");
          case '\\' -> b.append("\\\\");
          case '\n' -> b.append("\\n");
          default -> {
            if (ch < 0x20) b.append(String.format("\\u%04x", (int) ch));
            else b.append(ch);
          }
        }
      }
      return b.append('"').toString();
    }
  }

  static void result(Json j) {
    OUT.println("PEER " + j);
    OUT.flush();
  }

  static double div(double a, double b) {
    return b == 0 ? Double.NaN : a / b;
  }

  // ---- throughput ------------------------------------------------------------------------------

  static void throughput(Options o) throws Exception {
    o.allow(concat(Common.NAMES, "input", "output", "records"));
    Common c = Common.of(o);
    String input = o.str("input");
    String output = o.str("output");
    long n = o.num("records");
    if (n <= 0) throw new Fail("--records must be positive");
    inputPartitions(c.bootstrap, input);
    Path dir = stateDir(c);
    Progress progress = new Progress(n);
    App app = new App(topology(input, output, progress), streamsProps(c, dir));
    long deadline = c.deadlineNanos(System.nanoTime());
    try {
      long start = System.nanoTime();
      app.streams.start();
      progress.await(app, deadline, "throughput");
      long closeMs = Math.max(1000, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
      if (!app.close(Duration.ofMillis(closeMs))) throw new Fail("timeout: close did not finish");
      double seconds = (progress.lastNanos - progress.firstNanos) / 1e9;
      double cpu = (progress.lastCpu - progress.firstCpu) / 1e9;
      result(new Json()
          .put("mode", "throughput")
          .put("records", n)
          .put("seconds", seconds)
          .put("records_per_s", div(n, seconds))
          .put("cpu_seconds", cpu)
          .put("cpu_ns_per_record", div(progress.lastCpu - progress.firstCpu, n))
          .put("startup_seconds", (progress.firstNanos - start) / 1e9));
    } finally {
      app.streams.close(Duration.ofSeconds(5));
      if (c.stateDir == null) deleteTree(dir);
    }
  }

  // ---- restore ---------------------------------------------------------------------------------

  static final class Restore implements StateRestoreListener {
    final String changelog;
    volatile long startNanos;
    volatile long endNanos;
    volatile long restored;
    volatile long startOffset;
    volatile long endOffset;
    final AtomicLong batches = new AtomicLong();
    final AtomicLong minBatch = new AtomicLong(Long.MAX_VALUE);
    final AtomicLong maxBatch = new AtomicLong();
    final CountDownLatch done = new CountDownLatch(1);

    Restore(String changelog) {
      this.changelog = changelog;
    }

    @Override
    public void onRestoreStart(TopicPartition tp, String store, long start, long end) {
      if (!tp.topic().equals(changelog)) return;
      startNanos = System.nanoTime();
      startOffset = start;
      endOffset = end;
      log("restore of %s (store %s) starts: offsets %d..%d", tp, store, start, end);
    }

    @Override
    public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long count) {
      if (!tp.topic().equals(changelog)) return;
      batches.incrementAndGet();
      minBatch.accumulateAndGet(count, Math::min);
      maxBatch.accumulateAndGet(count, Math::max);
    }

    @Override
    public void onRestoreEnd(TopicPartition tp, String store, long total) {
      if (!tp.topic().equals(changelog)) return;
      endNanos = System.nanoTime();
      restored = total;
      log("restore of %s ends: %d records in %d batches (%d..%d records a batch)", tp, total,
          batches.get(), minBatch.get() == Long.MAX_VALUE ? 0 : minBatch.get(), maxBatch.get());
      done.countDown();
    }
  }

  static Properties adminProps(String bootstrap) {
    Properties p = new Properties();
    p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    return p;
  }

  /** The on-disk size of a topic's partitions (all replicas, all log dirs), from describeLogDirs. */
  static long topicLogBytes(String bootstrap, String topic) throws Exception {
    try (Admin admin = Admin.create(adminProps(bootstrap))) {
      List<Integer> brokers = new ArrayList<>();
      admin.describeCluster().nodes().get(30, TimeUnit.SECONDS).forEach(n -> brokers.add(n.id()));
      Map<Integer, Map<String, LogDirDescription>> dirs =
          admin.describeLogDirs(brokers).allDescriptions().get(30, TimeUnit.SECONDS);
      long bytes = 0;
      for (Map<String, LogDirDescription> perBroker : dirs.values()) {
        for (LogDirDescription d : perBroker.values()) {
          for (Map.Entry<TopicPartition, ReplicaInfo> e : d.replicaInfos().entrySet()) {
            if (e.getKey().topic().equals(topic)) bytes += e.getValue().size();
          }
        }
      }
      return bytes;
    }
  }

  /**
   * The committed records of a topic, read from the start with a read_committed consumer:
   * {count, sum of key and value sizes}. Transaction markers and record overhead not counted.
   */
  static long[] topicPayload(String bootstrap, String topic, long deadlineNanos) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
    p.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, 10_000);
    long count = 0;
    long bytes = 0;
    try (KafkaConsumer<byte[], byte[]> consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
      List<TopicPartition> tps = new ArrayList<>();
      consumer.partitionsFor(topic).forEach(i -> tps.add(new TopicPartition(topic, i.partition())));
      consumer.assign(tps);
      consumer.seekToBeginning(tps);
      Map<TopicPartition, Long> end = consumer.endOffsets(tps);
      while (true) {
        boolean done = true;
        for (TopicPartition tp : tps) {
          if (consumer.position(tp) < end.get(tp)) done = false;
        }
        if (done) break;
        if (System.nanoTime() - deadlineNanos > 0) throw new Fail("timeout: reading " + topic);
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(200))) {
          count++;
          bytes += (r.key() == null ? 0 : r.key().length) + (r.value() == null ? 0 : r.value().length);
        }
      }
    }
    return new long[] {count, bytes};
  }

  /**
   * The partition count of the input topic, failing at once when it does not exist (Kafka
   * Streams would wait for it, and a producer would create it with the broker's defaults).
   */
  static int inputPartitions(String bootstrap, String topic) throws Exception {
    try (Admin admin = Admin.create(adminProps(bootstrap))) {
      try {
        return admin.describeTopics(List.of(topic)).allTopicNames().get(60, TimeUnit.SECONDS)
            .get(topic).partitions().size();
      } catch (java.util.concurrent.ExecutionException e) {
        if (e.getCause() instanceof org.apache.kafka.common.errors.UnknownTopicOrPartitionException) {
          throw new Fail("input topic " + topic + " does not exist");
        }
        throw e;
      }
    }
  }

  static void restore(Options o) throws Exception {
    o.allow(concat(Common.NAMES, "input", "output", "records"));
    Common c = Common.of(o);
    String input = o.str("input");
    String output = o.str("output");
    long n = o.num("records");
    if (n <= 0) throw new Fail("--records must be positive");
    inputPartitions(c.bootstrap, input);
    Path dir = stateDir(c);
    long deadline = c.deadlineNanos(System.nanoTime());
    String changelog = c.applicationId + "-" + STORE + "-changelog";
    try {
      // Phase 1: build the state (and its changelog).
      Progress progress = new Progress(n);
      App app1 = new App(topology(input, output, progress), streamsProps(c, dir));
      long p1Start = System.nanoTime();
      try {
        app1.streams.start();
        progress.await(app1, deadline, "restore phase 1");
        long closeMs = Math.max(1000, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()));
        if (!app1.close(Duration.ofMillis(closeMs))) throw new Fail("timeout: phase 1 close");
      } finally {
        app1.streams.close(Duration.ofSeconds(5));
      }
      double phase1 = (progress.lastNanos - p1Start) / 1e9;
      log("phase 1: %d records processed in %.3f s after start()", n, phase1);

      // Phase 2: the same application id, no local state: restore from the changelog.
      Restore listener = new Restore(changelog);
      Progress none = new Progress(Long.MAX_VALUE);
      App app2 = new App(topology(input, output, none), streamsProps(c, dir));
      app2.streams.cleanUp(); // deletes this application's directory under state.dir
      app2.streams.setGlobalStateRestoreListener(listener);
      try {
        app2.streams.start();
        while (!listener.done.await(100, TimeUnit.MILLISECONDS)) {
          app2.check();
          if (System.nanoTime() - deadline > 0) throw new Fail("timeout: restore did not end");
        }
        app2.close(Duration.ofMillis(Math.max(1000,
            TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime()))));
      } finally {
        app2.streams.close(Duration.ofSeconds(5));
      }
      if (none.processed.get() != 0) {
        log("warning: phase 2 processed %d records (expected none)", none.processed.get());
      }
      long bytes = topicLogBytes(c.bootstrap, changelog);
      long[] payload = topicPayload(c.bootstrap, changelog, deadline);
      log("changelog %s: %d bytes on disk; %d committed records, %d bytes of keys and values",
          changelog, bytes, payload[0], payload[1]);
      double seconds = (listener.endNanos - listener.startNanos) / 1e9;
      result(new Json()
          .put("mode", "restore")
          .put("records", n)
          .put("restored_records", listener.restored)
          .put("restore_seconds", seconds)
          .put("restored_bytes", bytes)
          .put("restored_bytes_source", "describeLogDirs")
          .put("changelog_payload_bytes", payload[1])
          .put("restore_batches", listener.batches.get())
          .put("mb_per_s", div(bytes / 1e6, seconds))
          .put("phase1_seconds", phase1));
    } finally {
      if (c.stateDir == null) deleteTree(dir);
    }
  }

  // ---- failover --------------------------------------------------------------------------------

  /**
   * A member of the failover group: runs the app and reports on stdout, one event a line,
   * {@code INIT p ms} (the task of input partition p started on this member), {@code FIRST p ms}
   * (its first record processed since), {@code CLOSE p ms} (the task left this member); ms is
   * the epoch time; also {@code STATE S ms} for each change of the KafkaStreams state. Exits
   * when its stdin closes (the parent stopped it or died).
   */
  static void failoverMember(Options o) throws Exception {
    o.allow(concat(Common.NAMES, "input", "output", "instance-id"));
    Common c = Common.of(o);
    Path dir = stateDir(c);
    Map<Integer, Boolean> seen = new ConcurrentHashMap<>();
    Object lock = new Object();
    Observer observer = new Observer() {
      @Override
      public void onInit(int p) {
        seen.put(p, false);
        event("INIT", p);
      }

      @Override
      public void onRecord(int p) {
        if (Boolean.FALSE.equals(seen.get(p))) {
          seen.put(p, true);
          event("FIRST", p);
        }
      }

      @Override
      public void onClose(int p) {
        seen.remove(p);
        event("CLOSE", p);
      }

      private void event(String what, int p) {
        long ms = System.currentTimeMillis();
        synchronized (lock) {
          OUT.println(what + " " + p + " " + ms);
          OUT.flush();
        }
      }
    };
    Properties props = streamsProps(c, dir);
    // Static membership (the crash-restart measure): the restarted member takes its own place back.
    String instanceId = o.str("instance-id", "");
    if (!instanceId.isEmpty()) {
      props.put(StreamsConfig.consumerPrefix(ConsumerConfig.GROUP_INSTANCE_ID_CONFIG), instanceId);
    }
    App app = new App(topology(o.str("input"), o.str("output"), observer), props);
    // RESTORED p n ms: a store partition restored n records from its changelog before processing.
    app.streams.setGlobalStateRestoreListener(new StateRestoreListener() {
      @Override
      public void onRestoreStart(TopicPartition tp, String store, long start, long end) {}

      @Override
      public void onBatchRestored(TopicPartition tp, String store, long batchEnd, long count) {}

      @Override
      public void onRestoreEnd(TopicPartition tp, String store, long total) {
        synchronized (lock) {
          OUT.println("RESTORED " + tp.partition() + " " + total + " " + System.currentTimeMillis());
          OUT.flush();
        }
      }
    });
    app.streams.setStateListener((now, before) -> {
      app.state.set(now);
      long ms = System.currentTimeMillis();
      synchronized (lock) {
        OUT.println("STATE " + now + " " + ms);
        OUT.flush();
      }
    });
    app.streams.start();
    // Stop when the parent closes our stdin.
    try {
      while (System.in.read() >= 0) {
        // ignore
      }
    } catch (IOException ignored) {
      // parent gone
    }
    log("member: stdin closed, stopping");
    app.close(Duration.ofSeconds(30));
    synchronized (lock) {
      OUT.println("STOPPED " + System.currentTimeMillis());
      OUT.flush();
    }
  }

  /** One child JVM of the failover mode and what it reported. */
  static final class Member {
    final String name;
    final Process process;
    final Map<Integer, Long> owned = new ConcurrentHashMap<>(); // partition -> INIT ms
    final Map<Integer, List<Long>> firsts = new ConcurrentHashMap<>(); // partition -> FIRST ms
    final List<String> states = Collections.synchronizedList(new ArrayList<>()); // "S ms"
    final Thread reader;

    Member(String name, Process process) {
      this.name = name;
      this.process = process;
      this.reader = new Thread(this::read, name + "-stdout");
      reader.setDaemon(true);
      reader.start();
    }

    private void read() {
      try (BufferedReader r = new BufferedReader(
          new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
        String line;
        while ((line = r.readLine()) != null) {
          String[] f = line.trim().split(" ");
          try {
            if (f.length == 3 && f[0].equals("STATE")) {
              states.add(f[1] + " " + f[2]);
            } else if (f.length == 3) {
              int p = Integer.parseInt(f[1]);
              long ms = Long.parseLong(f[2]);
              switch (f[0]) {
                case "INIT" -> owned.put(p, ms);
                case "CLOSE" -> owned.remove(p);
                case "FIRST" -> firsts.computeIfAbsent(p, k -> Collections.synchronizedList(new ArrayList<>())).add(ms);
                default -> { }
              }
            }
          } catch (NumberFormatException ignored) {
            // not an event line
          }
          log("%s: %s", name, line);
        }
      } catch (IOException ignored) {
        // the child is gone
      }
    }

    boolean processing() {
      return !firsts.isEmpty();
    }

    /** Closes stdin (the child closes Streams and exits); SIGKILL after the grace period. */
    void stop(Duration grace) {
      try {
        process.getOutputStream().close();
      } catch (IOException ignored) {
        // already gone
      }
      try {
        if (!process.waitFor(grace.toMillis(), TimeUnit.MILLISECONDS)) {
          log("%s did not stop in %d ms: killing it", name, grace.toMillis());
          process.destroyForcibly();
          process.waitFor(10, TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
  }

  static Member spawnMember(String name, Common c, String input, String output, Path stateDir)
      throws IOException {
    String java = ProcessHandle.current().info().command()
        .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    List<String> cmd = new ArrayList<>();
    cmd.add(java);
    for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
      if (a.startsWith("-X") || a.startsWith("-D")) cmd.add(a);
    }
    cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), StreamsPeer.class.getName(),
        "failover-member",
        "--bootstrap", c.bootstrap,
        "--application-id", c.applicationId,
        "--input", input,
        "--output", output,
        "--state-dir", stateDir.toString(),
        "--commit-interval-ms", Long.toString(c.commitIntervalMs),
        "--session-timeout-ms", Long.toString(c.sessionTimeoutMs),
        "--transaction-timeout-ms", Long.toString(c.transactionTimeoutMs)));
    ProcessBuilder pb = new ProcessBuilder(cmd);
    pb.redirectError(ProcessBuilder.Redirect.INHERIT);
    log("starting %s: %s", name, String.join(" ", cmd));
    return new Member(name, pb.start());
  }

  /** Writes R records/s to the input topic, keys k00000..k00999 round-robin. */
  static final class Load implements Runnable {
    final KafkaProducer<String, byte[]> producer;
    final String topic;
    final double rate;
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicLong sent = new AtomicLong();
    final AtomicReference<Exception> error = new AtomicReference<>();
    final Thread thread = new Thread(this, "load");

    Load(String bootstrap, String topic, double rate) {
      Properties p = new Properties();
      p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
      p.put(ProducerConfig.LINGER_MS_CONFIG, 5);
      p.put(ProducerConfig.ACKS_CONFIG, "all");
      this.producer = new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer());
      this.topic = topic;
      this.rate = rate;
    }

    @Override
    public void run() {
      long start = System.nanoTime();
      long i = 0;
      byte[] value = new byte[8];
      try {
        while (!stop.get()) {
          long due = (long) ((System.nanoTime() - start) / 1e9 * rate);
          while (i < due && !stop.get()) {
            ByteBuffer.wrap(value).putLong(i);
            producer.send(new ProducerRecord<>(topic, String.format("k%05d", i % 1000), value.clone()),
                (md, e) -> {
                  if (e != null) error.compareAndSet(null, e);
                });
            i++;
            sent.set(i);
          }
          Thread.sleep(5);
        }
      } catch (Exception e) {
        error.compareAndSet(null, e);
      }
    }

    void close() {
      stop.set(true);
      try {
        thread.join(10_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      producer.close(Duration.ofSeconds(10));
    }
  }

  static void failover(Options o) throws Exception {
    o.allow(concat(Common.NAMES, "input", "output", "rate", "warmup-s"));
    Common c = Common.of(o);
    if (c.stateDir != null) throw new Fail("failover takes no --state-dir (each member gets its own)");
    String input = o.str("input");
    String output = o.str("output");
    double rate = o.dbl("rate", 1000);
    long warmupS = o.num("warmup-s", 10);
    long deadline = c.deadlineNanos(System.nanoTime());
    int partitions = inputPartitions(c.bootstrap, input);
    if (partitions < 2) {
      throw new Fail("input topic " + input + " has " + partitions
          + " partition(s): two members need at least 2");
    }
    Path root = Files.createTempDirectory("streams-peer-failover-");
    List<Member> members = new ArrayList<>();
    Thread hook = new Thread(() -> members.forEach(m -> m.process.destroyForcibly()));
    Runtime.getRuntime().addShutdownHook(hook);
    Load load = new Load(c.bootstrap, input, rate);
    try {
      load.thread.start();
      members.add(spawnMember("member-a", c, input, output, root.resolve("a")));
      members.add(spawnMember("member-b", c, input, output, root.resolve("b")));
      Member victim = members.get(0);
      Member survivor = members.get(1);

      // Both process records; then W seconds more, and a stable split (each owns some tasks).
      long nextLog0 = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
      while (!(victim.processing() && survivor.processing())) {
        failoverCheck(members, load, deadline, "both members processing records");
        if (System.nanoTime() - nextLog0 > 0) {
          log("waiting for both members to process records: %s owns %s, %s owns %s",
              victim.name, new TreeSet<>(victim.owned.keySet()), survivor.name,
              new TreeSet<>(survivor.owned.keySet()));
          nextLog0 = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        }
        Thread.sleep(50);
      }
      log("both members are processing; warming up for %d s", warmupS);
      long warmEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(warmupS);
      long nextLog = warmEnd + TimeUnit.SECONDS.toNanos(5);
      while (System.nanoTime() - warmEnd < 0 || victim.owned.isEmpty() || survivor.owned.isEmpty()) {
        failoverCheck(members, load, deadline, "both members owning tasks");
        if (System.nanoTime() - nextLog > 0) {
          log("waiting for both members to own tasks: %s owns %s, %s owns %s", victim.name,
              new TreeSet<>(victim.owned.keySet()), survivor.name,
              new TreeSet<>(survivor.owned.keySet()));
          nextLog = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        }
        Thread.sleep(50);
      }
      Set<Integer> killed = new TreeSet<>(victim.owned.keySet());
      log("killing %s (pid %d), which owns partitions %s; %s owns %s", victim.name,
          victim.process.pid(), killed, survivor.name, new TreeSet<>(survivor.owned.keySet()));
      long killMs = System.currentTimeMillis();
      victim.process.destroyForcibly();
      victim.process.waitFor(30, TimeUnit.SECONDS);

      // The survivor's first record from each of the killed member's partitions after the kill.
      Map<Integer, Long> taken = new TreeMap<>();
      while (taken.size() < killed.size()) {
        for (int p : killed) {
          List<Long> f = survivor.firsts.get(p);
          if (f == null || taken.containsKey(p)) continue;
          synchronized (f) {
            for (long ms : f) {
              if (ms >= killMs) {
                taken.put(p, ms);
                break;
              }
            }
          }
        }
        if (taken.size() == killed.size()) break;
        if (!survivor.process.isAlive()) throw new Fail("the surviving member died");
        if (load.error.get() != null) throw new Fail("producer failed: " + load.error.get());
        if (System.nanoTime() - deadline > 0) {
          throw new Fail("timeout: the survivor took over " + taken.keySet() + " of " + killed);
        }
        Thread.sleep(20);
      }
      long first = Collections.min(taken.values()) - killMs;
      long last = Collections.max(taken.values()) - killMs;
      log("failover: partitions %s taken over %d..%d ms after the kill", taken.keySet(), first, last);
      List<String> after = new ArrayList<>();
      synchronized (survivor.states) {
        for (String st : survivor.states) {
          long ms = Long.parseLong(st.substring(st.indexOf(' ') + 1));
          if (ms >= killMs) after.add(st.substring(0, st.indexOf(' ')) + " +" + (ms - killMs) + " ms");
        }
      }
      List<String> inits = new ArrayList<>();
      for (int p : killed) {
        Long ms = survivor.owned.get(p);
        if (ms != null && ms >= killMs) inits.add(p + ":+" + (ms - killMs));
      }
      log("failover: after the kill the survivor went %s; its tasks of the killed partitions"
          + " started at (ms after the kill) %s", after, inits);
      load.close();
      survivor.stop(Duration.ofSeconds(40));
      result(new Json()
          .put("mode", "failover")
          .put("killed_partitions", killed.size())
          .put("failover_seconds_first", first / 1e3)
          .put("failover_seconds_last", last / 1e3)
          .put("session_timeout_ms", c.sessionTimeoutMs)
          .put("transaction_timeout_ms", c.transactionTimeoutMs));
    } finally {
      load.close();
      for (Member m : members) {
        if (m.process.isAlive()) m.stop(Duration.ofSeconds(5));
      }
      Runtime.getRuntime().removeShutdownHook(hook);
      deleteTree(root);
    }
  }

  static void failoverCheck(List<Member> members, Load load, long deadline, String what) {
    for (Member m : members) {
      if (!m.process.isAlive()) {
        throw new Fail(m.name + " exited with code " + m.process.exitValue() + " while waiting for " + what);
      }
    }
    if (load.error.get() != null) throw new Fail("producer failed: " + load.error.get());
    if (System.nanoTime() - deadline > 0) throw new Fail("timeout waiting for " + what);
  }

  // ---- load ------------------------------------------------------------------------------------

  /**
   * Creates a topic (if missing) and writes N records to it: key i % K as "k" + zero-padded
   * decimal, B bytes long; value V bytes (record number, big-endian, zero-padded).
   */
  static void load(Options o) throws Exception {
    o.allow("bootstrap", "topic", "partitions", "records", "distinct-keys", "key-bytes",
        "value-bytes", "timeout-s");
    String bootstrap = o.str("bootstrap");
    String topic = o.str("topic");
    int partitions = (int) o.num("partitions", 1);
    long n = o.num("records");
    long k = o.num("distinct-keys", Math.max(1, n));
    int keyBytes = (int) o.num("key-bytes", 8);
    int valueBytes = (int) o.num("value-bytes", 8);
    long timeoutS = o.num("timeout-s", 300);
    if (k <= 0 || n < 0) throw new Fail("--records and --distinct-keys must be positive");
    int digits = Long.toString(k - 1).length();
    if (keyBytes < digits + 1) throw new Fail("--key-bytes too small for " + k + " distinct keys");
    try (Admin admin = Admin.create(adminProps(bootstrap))) {
      try {
        admin.createTopics(List.of(new NewTopic(topic, partitions, (short) 1)))
            .all().get(60, TimeUnit.SECONDS);
        log("created topic %s with %d partitions", topic, partitions);
      } catch (java.util.concurrent.ExecutionException e) {
        if (!(e.getCause() instanceof TopicExistsException)) throw e;
        log("topic %s exists", topic);
      }
    }
    Properties p = new Properties();
    p.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    p.put(ProducerConfig.LINGER_MS_CONFIG, 10);
    p.put(ProducerConfig.BATCH_SIZE_CONFIG, 256 * 1024);
    p.put(ProducerConfig.ACKS_CONFIG, "all");
    p.put(ProducerConfig.COMPRESSION_TYPE_CONFIG, "none");
    AtomicReference<Exception> error = new AtomicReference<>();
    long t0 = System.nanoTime();
    String fmt = "k%0" + (keyBytes - 1) + "d";
    try (KafkaProducer<String, byte[]> producer =
        new KafkaProducer<>(p, new StringSerializer(), new ByteArraySerializer())) {
      for (long i = 0; i < n; i++) {
        byte[] value = new byte[valueBytes];
        if (valueBytes >= 8) ByteBuffer.wrap(value, valueBytes - 8, 8).putLong(i);
        producer.send(new ProducerRecord<>(topic, String.format(fmt, i % k), value), (md, e) -> {
          if (e != null) error.compareAndSet(null, e);
        });
        if (error.get() != null) break;
      }
      producer.flush();
    }
    if (error.get() != null) throw new Fail("produce failed: " + error.get());
    double s = (System.nanoTime() - t0) / 1e9;
    if (s > timeoutS) throw new Fail("timeout: loading took " + s + " s");
    result(new Json()
        .put("mode", "load")
        .put("topic", topic)
        .put("partitions", partitions)
        .put("records", n)
        .put("distinct_keys", k)
        .put("key_bytes", keyBytes)
        .put("value_bytes", valueBytes)
        .put("seconds", s));
  }
}
