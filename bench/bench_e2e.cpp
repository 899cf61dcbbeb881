// End to end on librdkafka's mock cluster (in-process, loopback), each measure with its anchor in
// this binary and run:
//   7. consume M small messages of a 4-partition topic (a) with a bare librdkafka consumer
//      (subscribe, enable.auto.commit=true, automatic offset store, rd_kafka_consumer_poll loop)
//      and (b) with KafkaConsumer + OffsetManager(periodic 1 s, KafkaOffsetStore), which records
//      every record's offset; the same topic, a fresh group per run; msgs/s and ours/bare.
//      One benchmark iteration is one bare run and one of ours, in alternating order.
//   8. the round trip of a synchronous commit of 4 partitions: OffsetManager::commit() through
//      KafkaOffsetStore against rd_kafka_commit(sync) of a subscribed consumer, interleaved.
//
// Options (before Google Benchmark's own):
//   --e2e-messages N        messages to produce and consume (default 1'000'000; env
//                           BENCH_E2E_MESSAGES). Use 10000000 for the full run.
//   --e2e-fail-first-setup  the first setup of each benchmark on each cluster fails (producing the
//                           e2e topic; joining the round-trip consumers), as a transient broker
//                           error would: for the check of scripts/bench.sh --smoke that a failed
//                           repetition is reported and does not abort the binary.
// With KAFKA_BOOTSTRAP set, both measures also run against that broker.
//
// Errors and repetitions: Google Benchmark 1.7.1 (Debian 12) aggregates the repetitions in
// ComputeStats, which, with two or more repetitions that succeeded,
//   (a) checks that every repetition ran the same number of iterations, errored ones included,
//       and aborts otherwise; State::iterations() is 0 after a SkipWithError before the loop, the
//       full count after one inside it;
//   (b) takes the statistics to compute from the first repetition, which an errored one lacks (a
//       null pointer: it crashes).
// (Fixed upstream by google/benchmark#2199, in no release up to v1.9.5.) So every error is
// reported with SkipWithError from inside the benchmark loop (skip_from_loop for setup failures),
// and once a repetition of a benchmark failed, its later repetitions skip with that error.

#include <librdkafka/rdkafka.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_common.hpp"
#include "kafka_test_support.hpp"  // tests/support: MockCluster, create_topic, unique_name
#include "processor/kafka.hpp"

namespace {

using namespace processor::kafka;
namespace support = processor::testing;

constexpr int kPartitions = 4;
std::int64_t g_messages = 1'000'000;
bool g_fail_first_setup = false;  // --e2e-fail-first-setup

// --e2e-fail-first-setup: throws the first time for each `failed_once` flag.
void maybe_fail_setup(bool& failed_once, const std::string& what) {
  if (!g_fail_first_setup || failed_once) return;
  failed_once = true;
  throw std::runtime_error("injected failure of the first " + what + " (--e2e-fail-first-setup)");
}

// Reports `error` for this repetition from inside the benchmark loop, so that the repetition
// counts the iterations the others do (see the header comment). For failures before the loop.
void skip_from_loop(benchmark::State& state, const std::string& error) {
  for (auto _ : state) {
    state.SkipWithError(error.c_str());
    break;
  }
}

void set(rd_kafka_conf_t* conf, const std::string& name, const std::string& value) {
  char error[512];
  if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
    throw std::runtime_error(name + ": " + error);
  }
}

// A bare librdkafka consumer with `properties`, subscribed to `topic`.
rd_kafka_t* subscribed_consumer(const std::vector<std::pair<std::string, std::string>>& properties,
                                const std::string& topic) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  try {
    for (const auto& [name, value] : properties) set(conf, name, value);
  } catch (...) {
    rd_kafka_conf_destroy(conf);
    throw;
  }
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_CONSUMER, conf, error, sizeof error);
  if (rk == nullptr) {
    rd_kafka_conf_destroy(conf);
    throw std::runtime_error(error);
  }
  rd_kafka_poll_set_consumer(rk);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, topic.c_str(), RD_KAFKA_PARTITION_UA);
  const rd_kafka_resp_err_t subscribed = rd_kafka_subscribe(rk, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  if (subscribed != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_destroy(rk);
    throw std::runtime_error(rd_kafka_err2str(subscribed));
  }
  return rk;
}

// A Kafka cluster to run against: the mock cluster, or the broker at KAFKA_BOOTSTRAP.
struct Target {
  std::string label;  // "mock" or "broker"
  std::string bootstrap;
  std::unique_ptr<support::MockCluster> mock;
  std::string e2e_topic;
  std::string rtt_topic;
  bool produced = false;
  double produce_seconds = 0;
  // What the runs consume: the records the cluster retains. librdkafka's mock keeps at most
  // 5 MiB (and 100k message sets) per partition (rd_kafka_mock_partition_init), trimming the
  // oldest: about 1M of these messages over 4 partitions.
  std::int64_t consume_count = 0;
  std::int64_t end_offsets_sum = 0;  // what the committed offsets sum to after a full run
  bool e2e_setup_failed = false;     // --e2e-fail-first-setup
  bool rtt_setup_failed = false;

  void create_topic(const std::string& topic) {
    if (mock) {
      mock->create_topic(topic, kPartitions);
    } else {
      support::create_topic(bootstrap, topic, kPartitions);  // returns once every partition is served
    }
  }
};

std::unique_ptr<Target> g_mock;
std::unique_ptr<Target> g_broker;

Target& mock_target() {
  if (!g_mock) {
    g_mock = std::make_unique<Target>();
    g_mock->label = "mock";
    g_mock->mock = std::make_unique<support::MockCluster>(3);
    g_mock->bootstrap = g_mock->mock->bootstrap();
  }
  return *g_mock;
}

Target& broker_target() {
  if (!g_broker) {
    g_broker = std::make_unique<Target>();
    g_broker->label = "broker";
    g_broker->bootstrap = support::real_broker();
  }
  return *g_broker;
}

std::atomic<std::int64_t> g_delivery_failures{0};
void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) g_delivery_failures.fetch_add(1);
}

// Produces `count` small records ("value-<i>", ~12 bytes) round-robin over the partitions.
void produce(Target& target, const std::string& topic, std::int64_t count) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  set(conf, "bootstrap.servers", target.bootstrap);
  set(conf, "linger.ms", "20");
  set(conf, "batch.num.messages", "10000");
  set(conf, "queue.buffering.max.messages", "1000000");
  set(conf, "queue.buffering.max.kbytes", "1048576");
  set(conf, "log_level", "3");
  rd_kafka_conf_set_dr_msg_cb(conf, on_delivery);
  char error[512];
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error);
  if (rk == nullptr) throw std::runtime_error(error);
  const std::int64_t failures_before = g_delivery_failures.load();
  char value[32];
  for (std::int64_t i = 0; i < count; ++i) {
    const int length = std::snprintf(value, sizeof value, "value-%lld", static_cast<long long>(i));
    for (;;) {
      const rd_kafka_resp_err_t produced =
          rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic.c_str()),
                            RD_KAFKA_V_PARTITION(static_cast<std::int32_t>(i % kPartitions)),
                            RD_KAFKA_V_VALUE(value, static_cast<std::size_t>(length)),
                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
      if (produced == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
        rd_kafka_poll(rk, 10);
        continue;
      }
      if (produced != RD_KAFKA_RESP_ERR_NO_ERROR) throw std::runtime_error(rd_kafka_err2str(produced));
      break;
    }
    if (i % 10'000 == 0) rd_kafka_poll(rk, 0);
  }
  const rd_kafka_resp_err_t flushed = rd_kafka_flush(rk, 600'000);
  if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR) {
    rd_kafka_destroy(rk);
    throw std::runtime_error("producer flush timed out");
  }
  // What the cluster kept.
  target.consume_count = 0;
  target.end_offsets_sum = 0;
  for (int p = 0; p < kPartitions; ++p) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    const rd_kafka_resp_err_t queried =
        rd_kafka_query_watermark_offsets(rk, topic.c_str(), p, &low, &high, 10'000);
    if (queried != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_destroy(rk);
      throw std::runtime_error(std::string("watermarks: ") + rd_kafka_err2str(queried));
    }
    target.consume_count += high - low;
    target.end_offsets_sum += high;
  }
  rd_kafka_destroy(rk);
  if (g_delivery_failures.load() != failures_before)
    throw std::runtime_error("some messages were not delivered");
}

void ensure_produced(Target& target) {
  if (target.produced) return;
  maybe_fail_setup(target.e2e_setup_failed, "e2e topic setup");
  target.e2e_topic = support::unique_name("bench-e2e");
  target.create_topic(target.e2e_topic);
  const auto start = bench::Clock::now();
  produce(target, target.e2e_topic, g_messages);
  target.produce_seconds = bench::seconds_since(start);
  target.produced = true;
  if (target.consume_count < g_messages) {
    std::cout << "bench_e2e: WARNING: the " << target.label << " cluster retains " << target.consume_count
              << " of the " << g_messages
              << " messages (librdkafka's mock keeps 5 MiB per partition); the runs consume those. "
              << "For 10M use a real broker (KAFKA_BOOTSTRAP)." << std::endl;
  }
  std::cout << "bench_e2e: produced " << g_messages << " messages to " << target.label << " topic "
            << target.e2e_topic << " in " << bench::fmt(target.produce_seconds) << " s" << std::endl;
}

std::chrono::seconds consume_deadline() {
  return std::chrono::seconds(60 + g_messages / 20'000);  // generous: a stall fails, slowness does not
}

// Both consumers prefetch up to 1M messages per partition (librdkafka's default is 100k). With the
// default, librdkafka 2.0.2 stops fetching a partition whose queue holds queued.min.messages and
// resumes only on its broker thread's next wake-up, up to 1 s later: with small messages both
// consumers then stall in 1 s steps and the rates measure that tick, not the consume path.
constexpr const char* kQueuedMinMessages = "1000000";

struct ConsumeRun {
  std::int64_t records = 0;
  double seconds = 0;         // first record to the last one
  double with_join = 0;       // subscribe to the last record
  double cpu_seconds = 0;     // the consuming thread's CPU time, first record to the last one
  std::uint64_t commits = 0;  // ours: automatic commits during the run
  double rate() const { return seconds > 0 ? static_cast<double>(records) / seconds : 0; }
  double cpu_ns_per_record() const {
    return records > 0 ? cpu_seconds * 1e9 / static_cast<double>(records) : 0;
  }
};

double thread_cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

// How the bare loop waits in rd_kafka_consumer_poll().
enum class PollStyle {
  // 100 ms while idle, 0 while records are queued: KafkaConsumer::poll()'s own discipline, so
  // that the anchor differs from ours only by what ours does per record. The anchor.
  Drain,
  // 100 ms on every call: the textbook loop. A timed wait per call costs librdkafka a clock read
  // and a condition-variable path per record (diagnostic).
  Fixed100,
  // rd_kafka_consume_batch_queue(): up to kBatchSize records per call, 0 ms while records are
  // queued (diagnostic): what librdkafka's per-call costs (clock, poll bookkeeping) are worth.
  Batch,
};
constexpr std::size_t kBatchSize = 500;

// (a) The bare librdkafka consumer.
ConsumeRun consume_bare(const Target& target, PollStyle style) {
  rd_kafka_t* rk = subscribed_consumer({{"bootstrap.servers", target.bootstrap},
                                        {"group.id", support::unique_name("bench-bare")},
                                        {"enable.auto.commit", "true"},
                                        {"enable.auto.offset.store", "true"},
                                        {"auto.offset.reset", "earliest"},
                                        {"queued.min.messages", kQueuedMinMessages},
                                        {"log_level", "3"}},
                                       target.e2e_topic);

  const auto start = bench::Clock::now();
  const auto deadline = start + consume_deadline();
  bench::Clock::time_point first{};
  double first_cpu = 0;
  std::int64_t count = 0;
  const std::int64_t wanted = target.consume_count;
  int timeout_ms = 100;
  // Batch: a wait is for one record (a batch call returns only once full or timed out).
  rd_kafka_queue_t* queue = style == PollStyle::Batch ? rd_kafka_queue_get_consumer(rk) : nullptr;
  std::vector<rd_kafka_message_t*> messages(kBatchSize);
  while (count < wanted) {
    ssize_t got = 0;
    if (queue != nullptr) {
      got =
          rd_kafka_consume_batch_queue(queue, timeout_ms, messages.data(), timeout_ms == 0 ? kBatchSize : 1);
    } else if ((messages[0] = rd_kafka_consumer_poll(rk, timeout_ms)) != nullptr) {
      got = 1;
    }
    if (got <= 0) {
      timeout_ms = 100;
      if (bench::Clock::now() > deadline) break;
      continue;
    }
    if (style != PollStyle::Fixed100) timeout_ms = 0;
    for (ssize_t i = 0; i < got; ++i) {
      if (messages[i]->err == RD_KAFKA_RESP_ERR_NO_ERROR && count++ == 0) {
        first = bench::Clock::now();
        first_cpu = thread_cpu_seconds();
      }
      rd_kafka_message_destroy(messages[i]);
    }
  }
  if (queue != nullptr) rd_kafka_queue_destroy(queue);
  const auto end = bench::Clock::now();
  const double cpu = thread_cpu_seconds() - first_cpu;
  rd_kafka_consumer_close(rk);
  rd_kafka_destroy(rk);
  if (count < wanted)
    throw std::runtime_error("bare consumer timed out after " + std::to_string(count) + " messages");
  return ConsumeRun{count, std::chrono::duration<double>(end - first).count(),
                    std::chrono::duration<double>(end - start).count(), cpu};
}

// (b) KafkaConsumer + OffsetManager(periodic 1 s, KafkaOffsetStore): every record's offset + 1 is
// recorded by KafkaConsumer::poll().
ConsumeRun consume_ours(const Target& target) {
  const std::string group = support::unique_name("bench-ours");
  auto client = KafkaClient::create({{"bootstrap.servers", target.bootstrap},
                                     {"group.id", group},
                                     {"queued.min.messages", kQueuedMinMessages},
                                     {"log_level", "3"}});
  auto store = std::make_shared<KafkaOffsetStore>(client);
  OffsetManager manager(group, nullptr, store, OffsetCommitStrategy::periodic(std::chrono::seconds(1)),
                        OffsetManagerOptions{std::make_shared<KafkaBrokerMetadata>(client)});
  KafkaConsumerOptions options;
  options.topics = {target.e2e_topic};
  ConsumeRun run;
  {
    KafkaConsumer consumer(client, manager, options);
    const auto start = bench::Clock::now();
    const auto deadline = start + consume_deadline();
    bench::Clock::time_point first{};
    double first_cpu = 0;
    std::int64_t count = 0;
    const KafkaConsumer::RecordHandler handler = [&](const ConsumedRecord&) {
      if (count++ == 0) {
        first = bench::Clock::now();
        first_cpu = thread_cpu_seconds();
      }
    };
    const std::int64_t wanted = target.consume_count;
    while (count < wanted && bench::Clock::now() < deadline) consumer.poll(handler);
    const auto end = bench::Clock::now();
    const double cpu = thread_cpu_seconds() - first_cpu;
    if (count < wanted)
      throw std::runtime_error("KafkaConsumer timed out after " + std::to_string(count) + " messages");
    run = ConsumeRun{count, std::chrono::duration<double>(end - first).count(),
                     std::chrono::duration<double>(end - start).count(), cpu};
    const OffsetStats stats = manager.stats();
    run.commits = stats.total_commits;
    // Every record's offset was recorded: committed, the offsets are the log ends. (Checked before
    // close(): the revocation on close forgets the partitions' committed views.)
    manager.commit();
    std::int64_t committed = 0;
    for (const auto& [tp, info] : manager.get_all_committed()) committed += info.offset;
    if (committed != target.end_offsets_sum) {
      throw std::runtime_error("committed offsets sum to " + std::to_string(committed) + ", expected " +
                               std::to_string(target.end_offsets_sum));
    }
    consumer.close();
  }
  return run;
}

struct PairResults {
  std::vector<double> bare_rate, ours_rate, ratio;  // bare: PollStyle::Drain, the anchor
  std::vector<double> fixed_rate;                   // bare with PollStyle::Fixed100 (diagnostic)
  std::vector<double> batch_rate;                   // bare with PollStyle::Batch (diagnostic)
  std::vector<double> bare_cpu_ns, ours_cpu_ns;     // consuming thread's CPU per record
};
PairResults g_pairs[2];  // [0] mock, [1] broker

// The first error of a benchmark on one cluster: its later repetitions skip (see the header).
std::string g_e2e_failure[2];
std::string g_rtt_failure[2];
std::string earlier_failure(const std::string& failure) {
  return "skipped: an earlier repetition failed: " + failure;
}

void BM_E2E(benchmark::State& state, Target& (*target_of)(), int slot) {
  std::string& failure = g_e2e_failure[slot];
  if (!failure.empty()) {
    skip_from_loop(state, earlier_failure(failure));
    return;
  }
  Target* target_ptr = nullptr;
  try {
    target_ptr = &target_of();
    ensure_produced(*target_ptr);
  } catch (const std::exception& error) {
    failure = error.what();
    skip_from_loop(state, failure);
    return;
  }
  Target& target = *target_ptr;
  PairResults& pairs = g_pairs[slot];
  for (auto _ : state) {
    ConsumeRun bare, ours, fixed, batch;
    try {
      // Rotate the order, so that none always runs on a warmer (or noisier) machine.
      const std::size_t turn = pairs.bare_rate.size() % 4;
      for (std::size_t k = 0; k < 4; ++k) {
        switch ((turn + k) % 4) {
          case 0:
            bare = consume_bare(target, PollStyle::Drain);
            break;
          case 1:
            ours = consume_ours(target);
            break;
          case 2:
            batch = consume_bare(target, PollStyle::Batch);
            break;
          default:
            fixed = consume_bare(target, PollStyle::Fixed100);
            break;
        }
      }
    } catch (const std::exception& error) {
      failure = error.what();
      state.SkipWithError(failure.c_str());
      break;
    }
    state.SetIterationTime(bare.seconds + ours.seconds + fixed.seconds + batch.seconds);
    pairs.bare_rate.push_back(bare.rate());
    pairs.ours_rate.push_back(ours.rate());
    pairs.ratio.push_back(ours.rate() / bare.rate());
    pairs.fixed_rate.push_back(fixed.rate());
    pairs.batch_rate.push_back(batch.rate());
    pairs.bare_cpu_ns.push_back(bare.cpu_ns_per_record());
    pairs.ours_cpu_ns.push_back(ours.cpu_ns_per_record());
    state.counters["bare_msgs/s"] = bare.rate();
    state.counters["ours_msgs/s"] = ours.rate();
    state.counters["ours/bare"] = ours.rate() / bare.rate();
    state.counters["bare100_msgs/s"] = fixed.rate();
    state.counters["bare_batch_msgs/s"] = batch.rate();
    state.counters["bare_cpu_ns/rec"] = bare.cpu_ns_per_record();
    state.counters["ours_cpu_ns/rec"] = ours.cpu_ns_per_record();
    state.counters["ours_commits"] = static_cast<double>(ours.commits);
  }
}

// ---- 8. Commit round trip ----

struct RttEnv {
  explicit RttEnv(Target& target) {
    // Ours: a group member whose manager commits through KafkaOffsetStore.
    const std::string group = support::unique_name("bench-rtt-ours");
    client = KafkaClient::create(
        {{"bootstrap.servers", target.bootstrap}, {"group.id", group}, {"log_level", "3"}});
    store = std::make_shared<KafkaOffsetStore>(client);
    manager =
        std::make_unique<OffsetManager>(group, nullptr, store, OffsetCommitStrategy::manual(),
                                        OffsetManagerOptions{std::make_shared<KafkaBrokerMetadata>(client)});
    KafkaConsumerOptions options;
    options.topics = {target.rtt_topic};
    options.poll_timeout = std::chrono::milliseconds(50);
    consumer = std::make_unique<KafkaConsumer>(client, *manager, options);
    for (int p = 0; p < kPartitions; ++p) handles.push_back(manager->partition(target.rtt_topic, p));

    // Raw: a subscribed librdkafka consumer of another group, committing by hand.
    raw = subscribed_consumer({{"bootstrap.servers", target.bootstrap},
                               {"group.id", support::unique_name("bench-rtt-raw")},
                               {"enable.auto.commit", "false"},
                               {"auto.offset.reset", "earliest"},
                               {"log_level", "3"}},
                              target.rtt_topic);
    try {
      offsets = rd_kafka_topic_partition_list_new(kPartitions);
      for (int p = 0; p < kPartitions; ++p) {
        rd_kafka_topic_partition_list_add(offsets, target.rtt_topic.c_str(), p);
      }

      // Both join their groups (in parallel: the mock delays a first join by 3 s).
      const auto deadline = bench::Clock::now() + std::chrono::seconds(60);
      while (consumer->assignment().size() != kPartitions || raw_assigned() != kPartitions) {
        if (bench::Clock::now() > deadline) {
          throw std::runtime_error("the commit round-trip consumers never joined");
        }
        consumer->poll([](const ConsumedRecord&) {});
        if (rd_kafka_message_t* message = rd_kafka_consumer_poll(raw, 50)) rd_kafka_message_destroy(message);
      }
    } catch (...) {
      close_raw();  // no destructor runs for a constructor that throws
      throw;
    }
  }
  ~RttEnv() {
    consumer.reset();  // closes: leaves the group
    close_raw();
  }
  void close_raw() {
    if (offsets != nullptr) rd_kafka_topic_partition_list_destroy(offsets);
    rd_kafka_consumer_close(raw);
    rd_kafka_destroy(raw);
  }
  int raw_assigned() {
    rd_kafka_topic_partition_list_t* assignment = nullptr;
    if (rd_kafka_assignment(raw, &assignment) != RD_KAFKA_RESP_ERR_NO_ERROR) return 0;
    const int count = assignment->cnt;
    rd_kafka_topic_partition_list_destroy(assignment);
    return count;
  }

  // One synchronous commit each; returns seconds.
  double commit_ours() {
    for (PartitionHandle& handle : handles) handle.update(next_ours);
    ++next_ours;
    const auto start = bench::Clock::now();
    const std::size_t written = manager->commit();
    const double seconds = bench::seconds_since(start);
    if (written != kPartitions)
      throw std::runtime_error("commit() wrote " + std::to_string(written) + " partitions");
    return seconds;
  }
  double commit_raw() {
    for (int i = 0; i < offsets->cnt; ++i) offsets->elems[i].offset = next_raw;
    ++next_raw;
    const auto start = bench::Clock::now();
    const rd_kafka_resp_err_t error = rd_kafka_commit(raw, offsets, 0);
    const double seconds = bench::seconds_since(start);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR)
      throw std::runtime_error(std::string("rd_kafka_commit: ") + rd_kafka_err2str(error));
    for (int i = 0; i < offsets->cnt; ++i) {
      if (offsets->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        throw std::runtime_error(std::string("rd_kafka_commit: ") + rd_kafka_err2str(offsets->elems[i].err));
      }
    }
    return seconds;
  }

  std::shared_ptr<KafkaClient> client;
  std::shared_ptr<KafkaOffsetStore> store;
  std::unique_ptr<OffsetManager> manager;
  std::unique_ptr<KafkaConsumer> consumer;
  std::vector<PartitionHandle> handles;
  rd_kafka_t* raw = nullptr;
  rd_kafka_topic_partition_list_t* offsets = nullptr;
  std::int64_t next_ours = 1;
  std::int64_t next_raw = 1;
};

std::unique_ptr<RttEnv> g_rtt[2];
struct RttSamples {
  std::vector<double> ours, raw;
};
RttSamples g_rtt_samples[2];

void BM_CommitRoundTrip(benchmark::State& state, Target& (*target_of)(), int slot) {
  RttSamples& samples = g_rtt_samples[slot];
  std::string& failure = g_rtt_failure[slot];
  if (!failure.empty()) {
    skip_from_loop(state, earlier_failure(failure));
    return;
  }
  try {
    Target& target = target_of();
    if (!g_rtt[slot]) {
      maybe_fail_setup(target.rtt_setup_failed, "commit round-trip setup");
      if (target.rtt_topic.empty()) {
        const std::string topic = support::unique_name("bench-rtt");
        target.create_topic(topic);
        target.rtt_topic = topic;  // only once it exists
      }
      g_rtt[slot] = std::make_unique<RttEnv>(target);
    }
  } catch (const std::exception& error) {
    failure = error.what();
    skip_from_loop(state, failure);
    return;
  }
  RttEnv& env = *g_rtt[slot];
  double ours_total = 0;
  double raw_total = 0;
  for (auto _ : state) {
    // Interleaved, alternating which goes first.
    double ours = 0;
    double raw = 0;
    try {
      if (samples.ours.size() % 2 == 0) {
        ours = env.commit_ours();
        raw = env.commit_raw();
      } else {
        raw = env.commit_raw();
        ours = env.commit_ours();
      }
    } catch (const std::exception& error) {
      failure = error.what();
      state.SkipWithError(failure.c_str());
      break;
    }
    state.SetIterationTime(ours);
    samples.ours.push_back(ours);
    samples.raw.push_back(raw);
    ours_total += ours;
    raw_total += raw;
  }
  if (state.error_occurred()) return;
  const double n = static_cast<double>(state.iterations());
  state.counters["ours_us"] = ours_total * 1e6 / n;
  state.counters["raw_us"] = raw_total * 1e6 / n;
}

// ---- Summary ----

void summarize_target(const std::string& label, int slot, bench::Summary& s) {
  using bench::fmt;
  const PairResults& pairs = g_pairs[slot];
  const Target* target = slot == 0 ? g_mock.get() : g_broker.get();
  const std::int64_t consumed =
      target != nullptr && target->consume_count > 0 ? target->consume_count : g_messages;
  const std::string e2e = "e2e consume " + std::to_string(consumed) + " msgs" +
                          (consumed < g_messages ? " (of " + std::to_string(g_messages) + " produced)" : "") +
                          ", 4 partitions, " + label;
  if (!pairs.ours_rate.empty()) {
    const double ours = bench::median(pairs.ours_rate);
    const double bare = bench::median(pairs.bare_rate);
    bench::Result result{e2e, fmt(ours / 1e3) + " k msgs/s", fmt(bare / 1e3) + " k msgs/s (bare librdkafka)"};
    result.ratio = "ours/bare " + bench::format(ours / bare, 3) + " (pairwise median " +
                   bench::format(bench::median(pairs.ratio), 3) +
                   ", n=" + std::to_string(pairs.ratio.size()) + ")";
    result.target = ">=0.97";
    result.met = bench::met(ours / bare >= 0.97);
    s.add(result);
    const double fixed = bench::median(pairs.fixed_rate);
    s.add(bench::Result{"e2e bare loop with a fixed 100 ms poll timeout (diagnostic), " + label,
                        fmt(fixed / 1e3) + " k msgs/s", "ours " + fmt(ours / 1e3) + " k msgs/s",
                        "ours/this " + bench::format(ours / fixed, 3)});
    const double batch = bench::median(pairs.batch_rate);
    s.add(bench::Result{"e2e bare loop of rd_kafka_consume_batch_queue (diagnostic), " + label,
                        fmt(batch / 1e3) + " k msgs/s", "ours " + fmt(ours / 1e3) + " k msgs/s",
                        "ours/this " + bench::format(ours / batch, 3)});
    const double ours_cpu = bench::median(pairs.ours_cpu_ns);
    const double bare_cpu = bench::median(pairs.bare_cpu_ns);
    s.add(bench::Result{"e2e consuming thread CPU per record (diagnostic), " + label, fmt(ours_cpu) + " ns",
                        fmt(bare_cpu) + " ns (bare)", "ours/bare " + bench::format(ours_cpu / bare_cpu, 3)});
  } else {
    s.missing(e2e);
  }
  const RttSamples& samples = g_rtt_samples[slot];
  const std::string rtt = "commit round trip, 4 partitions, sync, " + label;
  if (!samples.ours.empty()) {
    const double ours = bench::median(samples.ours);
    const double raw = bench::median(samples.raw);
    bench::Result result{
        rtt, fmt(ours * 1e6) + " us (p90 " + fmt(bench::percentile(samples.ours, 0.9) * 1e6) + ")",
        fmt(raw * 1e6) + " us rd_kafka_commit (p90 " + fmt(bench::percentile(samples.raw, 0.9) * 1e6) + ")"};
    result.ratio =
        "ours/raw " + bench::format(ours / raw, 3) + " (n=" + std::to_string(samples.ours.size()) + ")";
    result.target = "<=1.05";
    result.met = bench::met(ours / raw <= 1.05);
    s.add(result);
  } else {
    s.missing(rtt);
  }
}

void summarize(const bench::CollectingReporter&, bench::Summary& s) {
  summarize_target("mock cluster", 0, s);
  if (g_broker) summarize_target("broker " + g_broker->bootstrap, 1, s);
  s.note(
      "e2e msgs/s are timed from the first record to the last (the group join, ~3 s on the mock, is "
      "excluded); "
      "each iteration runs the bare loop (rd_kafka_consumer_poll per record: 100 ms idle, 0 while draining), "
      "ours "
      "(KafkaConsumer takes records in batches, rd_kafka_consume_batch_queue), the fixed-timeout bare loop "
      "and "
      "the bare batch loop back to back in rotating order; the mock cluster's broker threads share "
      "this process and its " +
      std::to_string(std::thread::hardware_concurrency()) +
      " hardware threads; all "
      "consumers use queued.min.messages=" +
      kQueuedMinMessages +
      " (librdkafka 2.0.2's default 100k makes them "
      "stall on a 1 s fetch tick with small messages).");
}

// Removes --e2e-messages N / --e2e-messages=N and --e2e-fail-first-setup from argv.
void parse_own_arguments(int& argc, char** argv) {
  if (const char* env = std::getenv("BENCH_E2E_MESSAGES")) g_messages = std::stoll(env);
  int out = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--e2e-messages" && i + 1 < argc) {
      g_messages = std::stoll(argv[++i]);
    } else if (arg.rfind("--e2e-messages=", 0) == 0) {
      g_messages = std::stoll(arg.substr(std::strlen("--e2e-messages=")));
    } else if (arg == "--e2e-fail-first-setup") {
      g_fail_first_setup = true;
    } else {
      argv[out++] = argv[i];
    }
  }
  argc = out;
  argv[argc] = nullptr;
  if (g_messages < kPartitions) throw std::invalid_argument("--e2e-messages must be at least 4");
}

}  // namespace

int main(int argc, char** argv) {
  try {
    parse_own_arguments(argc, argv);
  } catch (const std::exception& error) {
    std::cerr << "bench_e2e: " << error.what() << "\n";
    return 2;
  }
  std::cout << "bench_e2e: " << g_messages << " messages per run" << std::endl;
  benchmark::RegisterBenchmark("BM_E2E/mock", BM_E2E, mock_target, 0)
      ->Iterations(1)
      ->UseManualTime()
      ->Unit(benchmark::kSecond);
  benchmark::RegisterBenchmark("BM_CommitRoundTrip/mock", BM_CommitRoundTrip, mock_target, 0)
      ->UseManualTime()
      ->Unit(benchmark::kMicrosecond);
  if (!support::real_broker().empty()) {
    benchmark::RegisterBenchmark("BM_E2E/broker", BM_E2E, broker_target, 1)
        ->Iterations(1)
        ->UseManualTime()
        ->Unit(benchmark::kSecond);
    benchmark::RegisterBenchmark("BM_CommitRoundTrip/broker", BM_CommitRoundTrip, broker_target, 1)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
  }
  const int code = bench::run_main(argc, argv, "bench_e2e", summarize);
  for (auto& env : g_rtt) env.reset();
  g_broker.reset();
  g_mock.reset();
  return code;
}
