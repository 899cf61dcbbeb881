package processor.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.confluent.parallelconsumer.ParallelConsumerOptions;
import io.confluent.parallelconsumer.ParallelConsumerOptions.CommitMode;
import io.confluent.parallelconsumer.ParallelConsumerOptions.ProcessingOrder;
import io.confluent.parallelconsumer.ParallelStreamProcessor;
import io.confluent.parallelconsumer.PollContext;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * The Confluent Parallel Consumer side of bench/bench_parallel.cpp: consumes one topic with
 * parallel-consumer-core, each record "processed" by a sleep of --work-ms (simulated I/O), until
 * the user function has finished --records records; then prints one line
 * {@code PEER {json}} on stdout (see README.md beside pom.xml) and exits 0. Exit 1 with a
 * message on stderr on failure or timeout.
 *
 * <p>Usage: {@code ParallelConsumerPeer --bootstrap HOST:PORT --topic T --group G --records M
 * [--ordering KEY|PARTITION|UNORDERED] [--max-concurrency N] [--work-ms L]
 * [--slow-partition P --slow-offset O --slow-seconds S] [--timeout-s S]}
 */
public final class ParallelConsumerPeer {

  static final class Fail extends RuntimeException {
    Fail(String message) {
      super(message);
    }
  }

  static Map<String, String> parse(String[] args) {
    Map<String, String> values = new HashMap<>();
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (!arg.startsWith("--")) throw new Fail("unexpected argument: " + arg);
      if (i + 1 >= args.length) throw new Fail(arg + " needs a value");
      values.put(arg.substring(2), args[++i]);
    }
    return values;
  }

  static String required(Map<String, String> values, String name) {
    String value = values.get(name);
    if (value == null || value.isEmpty()) throw new Fail("--" + name + " is required");
    return value;
  }

  static long number(Map<String, String> values, String name, long dflt) {
    String value = values.get(name);
    if (value == null) return dflt;
    try {
      return Long.parseLong(value);
    } catch (NumberFormatException e) {
      throw new Fail("--" + name + ": not a number: " + value);
    }
  }

  static double processCpuSeconds() {
    var os = (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    return os.getProcessCpuTime() / 1e9;
  }

  // Peak resident set size of this process (VmHWM), in bytes; -1 when /proc is unreadable.
  static long peakRssBytes() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmHWM:")) {
          return Long.parseLong(line.replaceAll("[^0-9]", "")) * 1024;
        }
      }
    } catch (IOException | NumberFormatException e) {
      return -1;
    }
    return -1;
  }

  public static void main(String[] args) {
    try {
      run(parse(args));
      System.out.flush();
      // Worker threads may still sleep (the slow record): do not wait for them.
      Runtime.getRuntime().halt(0);
    } catch (Throwable e) {
      System.err.println("ParallelConsumerPeer: FAILED: " + e);
      e.printStackTrace();
      System.err.flush();
      Runtime.getRuntime().halt(1);
    }
  }

  static void run(Map<String, String> options) throws InterruptedException {
    final String bootstrap = required(options, "bootstrap");
    final String topic = required(options, "topic");
    final String group = required(options, "group");
    final long records = number(options, "records", 0);
    if (records < 1) throw new Fail("--records must be at least 1");
    final ProcessingOrder ordering =
        ProcessingOrder.valueOf(options.getOrDefault("ordering", "KEY").toUpperCase(Locale.ROOT));
    final int maxConcurrency = (int) number(options, "max-concurrency", 16);
    final long workMs = number(options, "work-ms", 0);
    final int slowPartition = (int) number(options, "slow-partition", -1);
    final long slowOffset = number(options, "slow-offset", -1);
    final long slowSeconds = number(options, "slow-seconds", 0);
    final boolean slowMode = slowPartition >= 0 && slowOffset >= 0 && slowSeconds > 0;
    final long timeoutSeconds = number(options, "timeout-s", 600);

    // The consumer properties that matter as ours sets them: a fresh group reading from the
    // start, no auto commit (the Parallel Consumer commits), fetch sizes at their defaults.
    Properties properties = new Properties();
    properties.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
    properties.put(ConsumerConfig.GROUP_ID_CONFIG, group);
    properties.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
    properties.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    properties.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    properties.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, ByteArrayDeserializer.class.getName());
    KafkaConsumer<byte[], byte[]> consumer = new KafkaConsumer<>(properties);

    ParallelConsumerOptions<byte[], byte[]> pcOptions = ParallelConsumerOptions.<byte[], byte[]>builder()
        .consumer(consumer)
        .ordering(ordering)
        .maxConcurrency(maxConcurrency)
        .commitMode(CommitMode.PERIODIC_CONSUMER_ASYNCHRONOUS)
        .commitInterval(Duration.ofSeconds(5))  // its default, the same as ours
        .build();

    final AtomicLong done = new AtomicLong();
    final AtomicLong firstNanos = new AtomicLong();
    final double[] firstCpu = new double[1];
    final long[] lastNanos = new long[1];
    final double[] lastCpu = new double[1];
    final CountDownLatch finished = new CountDownLatch(1);
    // Slow mode: the slow record waits on this latch for --slow-seconds (or until the run ends).
    final CountDownLatch slowRelease = new CountDownLatch(1);
    final AtomicLong slowStartNanos = new AtomicLong();
    final AtomicLong slowEndNanos = new AtomicLong();
    final AtomicLong doneAtSlowStart = new AtomicLong();
    final AtomicLong doneAtSlowEnd = new AtomicLong(-1);

    final long started = System.nanoTime();
    ParallelStreamProcessor<byte[], byte[]> processor = ParallelStreamProcessor.createEosStreamProcessor(pcOptions);
    processor.subscribe(List.of(topic));
    processor.poll((PollContext<byte[], byte[]> context) -> {
      ConsumerRecord<byte[], byte[]> record = context.getSingleConsumerRecord();
      if (firstNanos.get() == 0) {
        synchronized (firstCpu) {
          if (firstNanos.get() == 0) {
            firstCpu[0] = processCpuSeconds();
            firstNanos.set(System.nanoTime());
          }
        }
      }
      try {
        if (slowMode && record.partition() == slowPartition && record.offset() == slowOffset) {
          doneAtSlowStart.set(done.get());
          slowStartNanos.set(System.nanoTime());
          slowRelease.await(slowSeconds, TimeUnit.SECONDS);
          doneAtSlowEnd.compareAndSet(-1, done.get());
          slowEndNanos.compareAndSet(0, System.nanoTime());
        } else if (workMs > 0) {
          Thread.sleep(workMs);
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
      long count = done.incrementAndGet();
      if (count == records) {
        lastNanos[0] = System.nanoTime();
        lastCpu[0] = processCpuSeconds();
        finished.countDown();
      }
    });

    if (!finished.await(timeoutSeconds, TimeUnit.SECONDS)) {
      throw new Fail("timed out after " + timeoutSeconds + " s with " + done.get() + " of " + records + " records");
    }
    final long end = lastNanos[0];
    final double seconds = (end - firstNanos.get()) / 1e9;
    final double cpu = lastCpu[0] - firstCpu[0];
    StringBuilder json = new StringBuilder();
    json.append(String.format(Locale.ROOT,
        "{\"mode\":\"parallel\",\"ordering\":\"%s\",\"max_concurrency\":%d,\"work_ms\":%d,\"records\":%d,"
            + "\"seconds\":%.6f,\"records_per_s\":%.3f,\"cpu_seconds\":%.6f,\"peak_rss_bytes\":%d,"
            + "\"startup_seconds\":%.6f",
        ordering, maxConcurrency, workMs, records, seconds, records / seconds, cpu, peakRssBytes(),
        (firstNanos.get() - started) / 1e9));
    if (slowMode) {
      // The window in which the slow record was outstanding: its start to its end, or to the
      // M-th record if that came first. Records of the window: the ones finished in it.
      final long slowStart = slowStartNanos.get();
      if (slowStart == 0) throw new Fail("the slow record " + slowPartition + "@" + slowOffset + " was never processed");
      final long slowEnd = slowEndNanos.get() != 0 && slowEndNanos.get() < end ? slowEndNanos.get() : end;
      final long doneAtEnd = slowEndNanos.get() != 0 && slowEndNanos.get() < end ? doneAtSlowEnd.get() : records;
      final double window = (slowEnd - slowStart) / 1e9;
      final long inWindow = doneAtEnd - doneAtSlowStart.get();
      json.append(String.format(Locale.ROOT,
          ",\"slow_window_seconds\":%.6f,\"slow_window_records\":%d,\"slow_records_per_s\":%.3f,"
              + "\"slow_finished_first\":%s",
          window, inWindow, inWindow / window, slowEnd != end));
    }
    json.append('}');
    System.out.println("PEER " + json);
    slowRelease.countDown();
  }
}
