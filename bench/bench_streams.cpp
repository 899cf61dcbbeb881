// Exactly-once stream processing, side by side with Kafka Streams, on the same real broker and
// the same input: per-key counting (a RocksDB store, one output record per input record, the
// count as an 8-byte big-endian long), processing.guarantee=exactly_once_v2 there, ProcessingGuarantee::
// ExactlyOnce here, the same commit interval. Measures:
//   1. throughput (records/s) and CPU per record, over 12 partitions and 1,000 keys;
//   2. restoration of one partition holding --restore-keys distinct 32-byte keys from its changelog,
//      after the local state is lost: time, MB/s and records/s (--repetitions times, alternating
//      with the peer);
//   3. failover: two members, one SIGKILLed while input flows; time from the kill to the first
//      record the survivor processes from each partition the killed member owned: classic group
//      without standbys (next to Kafka Streams), then with one standby replica under each group
//      protocol (classic, consumer).
// The Kafka Streams side is bench/kafka-streams-peer (built by its build.sh, which prints the
// command line to run it; pass it with --peer "CMD" or PROCESSOR_STREAMS_PEER).
//
//   4. crash restart: one instance with a store of --crash-keys keys, SIGKILLed mid-stream and
//      started again at once on the same state directory, with and without static membership:
//      time from the restart to the first committed output record (and until every partition had
//      one), and records restored. BENCH_MEMBER_TRACE=1: members log at Info with epoch-ms times.
//
// BENCH_VERBOSE=1: this process logs at Info, with monotonic times. BENCH_RESTORE_TIMES=1: the
// restore's window in monotonic time (for perf --time) and its progress every 20 ms.
//
//   bench_streams [--smoke] [--records N] [--restore-keys N] [--crash-keys N] [--repetitions N]
//                 [--no-failover] [--no-crash-restart] [--failover-only] [--crash-restart-only]
//                 [--restore-only]
//                 [--peer CMD]
//                 (KAFKA_BOOTSTRAP: the broker; required)
//
// Prints the bench_common summary table and RESULT lines for scripts/bench.sh. Exit 1 when a run
// fails (never because a target is missed).

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iostream>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "bench_common.hpp"
#include "kafka_test_support.hpp"
#include "processor/log.hpp"
#include "processor/streams.hpp"

namespace {

using namespace processor;
using ::bench::fmt;
using ::bench::met;
using ::bench::Result;
using ::bench::Summary;
using Clock = std::chrono::steady_clock;

constexpr int kPartitions = 12;
constexpr int kKeys = 1'000;
constexpr int kSessionTimeoutMs = 6'000;
constexpr int kTransactionTimeoutMs = 10'000;
constexpr int kCommitIntervalMs = 100;

struct Config {
  std::string bootstrap;
  std::string peer;
  int records = 1'000'000;
  int restore_keys = 1'000'000;
  int crash_keys = 1'000'000;  // the store of the crash-restart measure
  bool crash_restart = true;
  int repetitions = 3;
  bool failover = true;
  bool failover_only = false;  // --failover-only: measure 3 alone
  bool crash_only = false;     // --crash-restart-only: measure 4 alone
  bool restore_only = false;   // --restore-only: measure 2 alone
  bool smoke = false;
};

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

std::int64_t epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

std::string be64(std::int64_t value) {
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[static_cast<std::size_t>(i)] = static_cast<char>((value >> (56 - 8 * i)) & 0xff);
  return out;
}
std::int64_t from_be64(const std::string& bytes) {
  std::int64_t value = 0;
  for (unsigned char c : bytes) value = (value << 8) | c;
  return value;
}

std::string key_of(int index, int width) {
  char text[64];
  std::snprintf(text, sizeof text, "k%0*d", width - 1, index);
  return text;
}

// Creates `topic` and fills it: `records` records; key i % keys (or every key once when
// keys == records), `key_bytes` long, on partition key % partitions.
void make_input(const Config& config, const std::string& topic, int partitions, int records, int keys,
                int key_bytes) {
  testing::create_topic(config.bootstrap, topic, partitions);
  testing::Producer producer(config.bootstrap, {{"linger.ms", "20"}, {"batch.size", "1000000"}});
  std::mt19937 random(11);
  for (int i = 0; i < records; ++i) {
    const int key = keys == records ? i : std::uniform_int_distribution<int>(0, keys - 1)(random);
    producer.send(topic, key % partitions, key_of(key, key_bytes), "v");
  }
  producer.flush(std::chrono::minutes(5));
}

// `group_protocol`: "classic" (librdkafka's default assignors, the session timeout below) or
// "consumer" (Kafka 4's protocol: the broker's assignor and group.consumer.session.timeout.ms).
streams::StreamProcessorOptions processor_options(const Config& config, const std::string& application,
                                                  const std::string& input,
                                                  const std::filesystem::path& state_dir,
                                                  const std::string& group_protocol = "classic",
                                                  int standby_replicas = 0) {
  streams::StreamProcessorOptions options;
  options.application_id = application;
  options.input_topic = input;
  options.stores = {"counts"};
  options.state_dir = state_dir;
  options.commit_interval = std::chrono::milliseconds(kCommitIntervalMs);
  options.transaction_timeout = std::chrono::milliseconds(kTransactionTimeoutMs);
  options.properties = {{"bootstrap.servers", config.bootstrap},
                        {"session.timeout.ms", std::to_string(kSessionTimeoutMs)},
                        {"heartbeat.interval.ms", std::to_string(kSessionTimeoutMs / 4)},
                        {"log_level", "3"}};
  if (group_protocol == "consumer") {
    options.properties = {
        {"bootstrap.servers", config.bootstrap}, {"group.protocol", "consumer"}, {"log_level", "3"}};
  }
  options.num_standby_replicas = standby_replicas;
  return options;
}

// The counting function: the count as an 8-byte big-endian long in the store and the output.
streams::RecordFunction count_into(const std::string& output,
                                   std::function<void(const kafka::ConsumedRecord&)> seen) {
  return [output, seen](const kafka::ConsumedRecord& record, streams::RecordContext& context) {
    streams::PartitionStore& counts = context.store(std::size_t{0});
    const auto current = counts.get(record.key);
    const std::string next = be64((current ? from_be64(*current) : 0) + 1);
    counts.put(record.key, next);
    context.output().send(output, record.key, next, record.partition);
    if (seen) seen(record);
  };
}

struct Throughput {
  double seconds = 0;
  double records_per_second = 0;
  double cpu_ns_per_record = 0;
};

Throughput ours_throughput(
    const Config& config, const std::string& input, int records,
    streams::ProcessingGuarantee guarantee = streams::ProcessingGuarantee::ExactlyOnce) {
  const std::string application = testing::unique_name("bench-ours");
  const std::string output = application + "-output";
  testing::create_topic(config.bootstrap, output, kPartitions);
  bench::TempDir state("streams");
  Clock::time_point first{};
  double cpu_first = 0;
  auto options = processor_options(config, application, input, state.path());
  options.guarantee = guarantee;
  streams::StreamProcessor processor(options, count_into(output, [&](const kafka::ConsumedRecord&) {
                                       if (first == Clock::time_point{}) {
                                         first = Clock::now();
                                         cpu_first = cpu_seconds();
                                       }
                                     }));
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  while (processor.stats().records < static_cast<std::uint64_t>(records)) {
    if (Clock::now() > deadline) throw std::runtime_error("ours: throughput run timed out");
    processor.poll();
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - first).count();
  const double cpu = cpu_seconds() - cpu_first;
  processor.close();
  return {seconds, records / seconds, cpu * 1e9 / records};
}

// The floor of the same work: what the per-key count costs without exactly-once and without a
// store, on the same broker and librdkafka. One librdkafka consumer (batched reads, as
// StreamProcessor's fetch path) and one idempotent producer; the count in a hash map per
// partition; per record the output record, and at each commit interval one changelog record per
// key changed since the last (version byte + count, as StreamProcessor's changelog), then a flush
// and the offsets' commit: at-least-once, as a hand-written consumer would do it.
rd_kafka_t* floor_client(rd_kafka_type_t type, const std::map<std::string, std::string>& settings) {
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  char error[512];
  for (const auto& [name, value] : settings) {
    if (rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK)
      throw std::runtime_error("floor: " + name + ": " + error);
  }
  rd_kafka_t* rk = rd_kafka_new(type, conf, error, sizeof error);
  if (rk == nullptr) throw std::runtime_error(std::string("floor: ") + error);
  return rk;
}

Throughput floor_throughput(const Config& config, const std::string& input, int records) {
  const std::string application = testing::unique_name("bench-floor");
  const std::string output = application + "-output";
  const std::string changelog = application + "-counts-changelog";
  testing::create_topic(config.bootstrap, output, kPartitions);
  testing::create_topic(config.bootstrap, changelog, kPartitions);
  rd_kafka_t* consumer =
      floor_client(RD_KAFKA_CONSUMER, {{"bootstrap.servers", config.bootstrap},
                                       {"group.id", application},
                                       {"auto.offset.reset", "earliest"},
                                       {"enable.auto.commit", "false"},
                                       {"enable.partition.eof", "false"},
                                       {"session.timeout.ms", std::to_string(kSessionTimeoutMs)},
                                       {"log_level", "3"}});
  rd_kafka_t* producer = floor_client(
      RD_KAFKA_PRODUCER,
      {{"bootstrap.servers", config.bootstrap}, {"enable.idempotence", "true"}, {"log_level", "3"}});
  rd_kafka_poll_set_consumer(consumer);
  rd_kafka_topic_partition_list_t* topics = rd_kafka_topic_partition_list_new(1);
  rd_kafka_topic_partition_list_add(topics, input.c_str(), RD_KAFKA_PARTITION_UA);
  rd_kafka_subscribe(consumer, topics);
  rd_kafka_topic_partition_list_destroy(topics);
  rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(consumer);

  // Per partition: key -> (count, changed since the last commit), found without building a string;
  // the changed keys in a list of their own, each once.
  struct Count {
    std::int64_t value = 0;
    bool dirty = false;
  };
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view key) const noexcept { return std::hash<std::string_view>{}(key); }
  };
  std::vector<std::unordered_map<std::string, Count, Hash, std::equal_to<>>> counts(kPartitions);
  std::vector<std::vector<std::pair<const std::string, Count>*>> dirty(kPartitions);
  std::vector<std::int64_t> next(kPartitions, -1);
  std::vector<rd_kafka_message_t*> batch(500);
  auto produce = [&](const std::string& topic, std::int32_t partition, std::string_view key,
                     const char* value, std::size_t size) {
    while (rd_kafka_producev(producer, RD_KAFKA_V_TOPIC(topic.c_str()), RD_KAFKA_V_PARTITION(partition),
                             RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_KEY(key.data(), key.size()),
                             RD_KAFKA_V_VALUE(const_cast<char*>(value), size),
                             RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
      rd_kafka_poll(producer, 1);
  };
  auto put_be64 = [](char* out, std::int64_t value) {
    for (int i = 0; i < 8; ++i) out[i] = static_cast<char>((value >> (56 - 8 * i)) & 0xff);
  };
  auto commit = [&] {
    char value[9] = {1};  // the changelog's version byte, then the count
    for (int p = 0; p < kPartitions; ++p) {
      for (auto* entry : dirty[static_cast<std::size_t>(p)]) {
        put_be64(value + 1, entry->second.value);
        produce(changelog, p, entry->first, value, sizeof value);
        entry->second.dirty = false;
      }
      dirty[static_cast<std::size_t>(p)].clear();
    }
    if (rd_kafka_flush(producer, 60'000) != RD_KAFKA_RESP_ERR_NO_ERROR)
      throw std::runtime_error("floor: flush timed out");
    rd_kafka_topic_partition_list_t* offsets = rd_kafka_topic_partition_list_new(kPartitions);
    for (int p = 0; p < kPartitions; ++p) {
      if (next[static_cast<std::size_t>(p)] >= 0)
        rd_kafka_topic_partition_list_add(offsets, input.c_str(), p)->offset =
            next[static_cast<std::size_t>(p)];
    }
    if (offsets->cnt > 0) rd_kafka_commit(consumer, offsets, 1);
    rd_kafka_topic_partition_list_destroy(offsets);
  };

  Clock::time_point first{};
  double cpu_first = 0;
  int seen = 0;
  auto last_commit = Clock::now();
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  while (seen < records) {
    if (Clock::now() > deadline) throw std::runtime_error("floor: throughput run timed out");
    const ssize_t n = rd_kafka_consume_batch_queue(queue, 100, batch.data(), batch.size());
    for (ssize_t i = 0; i < n; ++i) {
      rd_kafka_message_t* message = batch[static_cast<std::size_t>(i)];
      if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (first == Clock::time_point{}) {
          first = Clock::now();
          cpu_first = cpu_seconds();
        }
        const auto p = static_cast<std::size_t>(message->partition);
        const std::string_view key(static_cast<const char*>(message->key), message->key_len);
        auto found = counts[p].find(key);
        if (found == counts[p].end()) found = counts[p].emplace(std::string(key), Count{}).first;
        char out[8];
        put_be64(out, ++found->second.value);
        produce(output, message->partition, key, out, sizeof out);
        if (!found->second.dirty) {
          found->second.dirty = true;
          dirty[p].push_back(&*found);
        }
        next[p] = message->offset + 1;
        ++seen;
      }
      rd_kafka_message_destroy(message);
    }
    rd_kafka_poll(producer, 0);
    if (Clock::now() - last_commit >= std::chrono::milliseconds(kCommitIntervalMs)) {
      commit();
      last_commit = Clock::now();
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - first).count();
  const double cpu = cpu_seconds() - cpu_first;
  commit();
  rd_kafka_queue_destroy(queue);
  rd_kafka_consumer_close(consumer);
  rd_kafka_destroy(consumer);
  rd_kafka_destroy(producer);
  return {seconds, records / seconds, cpu * 1e9 / records};
}

// Runs the peer, returns the fields of its "PEER {json}" line.
std::map<std::string, double> run_peer(const Config& config, const std::string& arguments) {
  const std::string command = config.peer + " " + arguments + " 2>/tmp/bench-streams-peer.log";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run the Kafka Streams peer: " + command);
  std::string line;
  std::string result;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) {
    line = buffer;
    if (line.rfind("PEER ", 0) == 0) result = line.substr(5);
  }
  const int status = ::pclose(pipe);
  if (status != 0 || result.empty()) {
    throw std::runtime_error("the Kafka Streams peer failed (exit " + std::to_string(status) +
                             "); its log: /tmp/bench-streams-peer.log; command: " + command);
  }
  std::map<std::string, double> fields;
  static const std::regex number_field("\"([a-z_]+)\"\\s*:\\s*(-?[0-9.eE+-]+)");
  for (std::sregex_iterator it(result.begin(), result.end(), number_field), end; it != end; ++it) {
    fields[(*it)[1].str()] = std::stod((*it)[2].str());
  }
  return fields;
}

double field(const std::map<std::string, double>& fields, const char* name) {
  const auto it = fields.find(name);
  if (it == fields.end()) throw std::runtime_error(std::string("the peer's result has no ") + name);
  return it->second;
}

std::string peer_common(const std::string& application) {
  return " --bootstrap " + std::string(std::getenv("KAFKA_BOOTSTRAP")) + " --application-id " + application +
         " --commit-interval-ms " + std::to_string(kCommitIntervalMs) + " --session-timeout-ms " +
         std::to_string(kSessionTimeoutMs) + " --transaction-timeout-ms " +
         std::to_string(kTransactionTimeoutMs);
}

struct Restore {
  double seconds = 0;
  std::uint64_t records = 0;
  std::uint64_t bytes = 0;
};

// Phase 1 of the restore measure: the count over `input` fills the store's changelog; its local
// state is then deleted. Returns the application, whose restores ours_restore() measures.
std::string ours_restore_changelog(const Config& config, const std::string& input, int records) {
  const std::string application = testing::unique_name("bench-ours-restore");
  testing::create_topic(config.bootstrap, application + "-output", 1);
  bench::TempDir state("streams-restore");
  streams::StreamProcessor processor(processor_options(config, application, input, state.path()),
                                     count_into(application + "-output", {}));
  const auto deadline = Clock::now() + std::chrono::minutes(10);
  while (processor.stats().records < static_cast<std::uint64_t>(records)) {
    if (Clock::now() > deadline) throw std::runtime_error("ours: restore phase 1 timed out");
    processor.poll();
  }
  return application;
}

// Phase 2: the same application on an empty state directory restores the store from its
// changelog; the time is the restore's own (RestoreProgress::elapsed, the store's first read to
// its last record loaded and durable).
Restore ours_restore(const Config& config, const std::string& input, const std::string& application) {
  bench::TempDir state("streams-restore");
  std::optional<streams::RestoreProgress> done;
  auto options = processor_options(config, application, input, state.path());
  const bool trace = std::getenv("BENCH_RESTORE_TIMES") != nullptr;
  if (trace) options.restore_progress_interval = std::chrono::milliseconds(20);
  options.on_restore_progress = [&](const streams::RestoreProgress& progress) {
    if (trace)
      std::printf("restore progress %lld ms: %llu records\n",
                  static_cast<long long>(progress.elapsed.count()),
                  static_cast<unsigned long long>(progress.records));
    if (progress.done) done = progress;
  };
  streams::StreamProcessor processor(options, count_into(application + "-output", {}));
  const auto deadline = Clock::now() + std::chrono::minutes(5);
  while (!done) {
    if (Clock::now() > deadline) throw std::runtime_error("ours: restoration timed out");
    processor.poll();
  }
  if (std::getenv("BENCH_RESTORE_TIMES")) {
    timespec now{};
    clock_gettime(CLOCK_MONOTONIC, &now);
    std::printf("restore monotonic %.3f,%.3f\n",
                now.tv_sec + now.tv_nsec / 1e9 - std::chrono::duration<double>(done->elapsed).count(),
                now.tv_sec + now.tv_nsec / 1e9);
  }
  return {std::chrono::duration<double>(done->elapsed).count(), done->records, done->bytes};
}

// ---- Failover: members are this binary in --member mode, one line per event on stdout:
//   active <partition>          processing of the partition started (restored, positioned)
//   inactive <partition>        it stopped (revoked): a record processed before does not count
//   first <partition> <epoch ms> the first record processed from it since
int member_main(const std::map<std::string, std::string>& args) {
  set_log_level(LogLevel::Warning);
  if (std::getenv("BENCH_MEMBER_TRACE") != nullptr) {
    set_log_level(LogLevel::Info);
    set_log_sink([](LogLevel, std::string_view component, std::string_view message) {
      std::fprintf(stderr, "%lld [%.*s] %.*s\n", static_cast<long long>(epoch_ms()),
                   static_cast<int>(component.size()), component.data(), static_cast<int>(message.size()),
                   message.data());
    });
    std::fprintf(stderr, "%lld member starts\n", static_cast<long long>(epoch_ms()));
  }
  Config config;
  config.bootstrap = args.at("bootstrap");
  std::set<std::int32_t> waiting;  // active, no record yet
  auto options = processor_options(config, args.at("application"), args.at("input"), args.at("state-dir"),
                                   args.count("group-protocol") ? args.at("group-protocol") : "classic",
                                   args.count("standby") ? std::stoi(args.at("standby")) : 0);
  if (args.count("instance-id")) options.properties["group.instance.id"] = args.at("instance-id");
  options.on_restore_progress = [](const streams::RestoreProgress& progress) {
    if (!progress.done) return;
    std::printf("restored %d %llu\n", progress.partition, static_cast<unsigned long long>(progress.records));
    std::fflush(stdout);
  };
  streams::StreamProcessor processor(
      std::move(options), count_into(args.at("output"), [&](const kafka::ConsumedRecord& record) {
        if (waiting.erase(record.partition) > 0) {
          std::printf("first %d %lld\n", record.partition, static_cast<long long>(epoch_ms()));
          std::fflush(stdout);
        }
      }));
  std::set<std::int32_t> active;
  for (;;) {
    processor.poll();
    std::set<std::int32_t> now;
    for (const auto& tp : processor.active_partitions()) now.insert(tp.partition);
    for (const auto partition : now) {
      if (active.count(partition) == 0) {
        waiting.insert(partition);
        std::printf("active %d\n", partition);
        std::fflush(stdout);
      }
    }
    for (const auto partition : active) {
      if (now.count(partition) == 0) {
        waiting.erase(partition);
        std::printf("inactive %d\n", partition);
        std::fflush(stdout);
      }
    }
    active = now;
  }
}

struct Member {
  pid_t pid = -1;
  int stdin_fd = -1;  // held open: the Kafka Streams member stops when its stdin closes
  std::thread reader;
  std::mutex mutex;
  std::set<int> active;
  std::map<int, std::int64_t> first;  // partition -> epoch ms of the first record since active
  std::uint64_t restored = 0;         // records restored from changelogs, over all partitions
};

// Starts `args` (args[0] the program: this binary when it is "bench_streams", else run by
// /bin/sh -c "exec ...", so that a signal reaches the program itself) with stdout read into
// `member`.
void spawn_member(Member& member, const std::vector<std::string>& args) {
  int out[2];
  int input_pipe[2];
  if (::pipe(out) != 0 || ::pipe(input_pipe) != 0) throw std::runtime_error("pipe failed");
  std::string shell_command = "exec";
  for (const auto& arg : args) shell_command += " " + arg;
  member.pid = ::fork();
  if (member.pid == 0) {
    ::dup2(out[1], 1);
    ::dup2(input_pipe[0], 0);
    ::close(out[0]);
    ::close(out[1]);
    ::close(input_pipe[0]);
    ::close(input_pipe[1]);
    if (args[0] != "bench_streams") {
      ::execl("/bin/sh", "sh", "-c", shell_command.c_str(), static_cast<char*>(nullptr));
      ::_exit(127);
    }
    std::vector<char*> argv;
    for (const auto& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
    argv.push_back(nullptr);
    ::execv("/proc/self/exe", argv.data());
    ::_exit(127);
  }
  ::close(out[1]);
  ::close(input_pipe[0]);
  member.stdin_fd = input_pipe[1];
  member.reader = std::thread([&member, fd = out[0]] {
    FILE* in = ::fdopen(fd, "r");
    char line[256];
    while (std::fgets(line, sizeof line, in) != nullptr) {
      int partition = 0;
      long long at = 0;
      std::lock_guard<std::mutex> lock(member.mutex);
      if (std::sscanf(line, "active %d", &partition) == 1) {
        member.active.insert(partition);
        member.first.erase(partition);
      } else if (std::sscanf(line, "inactive %d", &partition) == 1) {
        member.active.erase(partition);
        member.first.erase(partition);
      } else if (std::sscanf(line, "first %d %lld", &partition, &at) == 2) {
        member.first[partition] = at;
      } else if (std::sscanf(line, "restored %d %lld", &partition, &at) == 2 ||
                 std::sscanf(line, "RESTORED %d %lld", &partition, &at) == 2) {
        member.restored += static_cast<std::uint64_t>(at);
      }
    }
    std::fclose(in);
  });
}

// SIGKILL, then the reader drained; nothing of the member is left.
void kill_member(Member& member) {
  if (member.pid > 0) {
    ::kill(member.pid, SIGKILL);
    ::waitpid(member.pid, nullptr, 0);
    member.pid = -1;
  }
  if (member.stdin_fd >= 0) {
    ::close(member.stdin_fd);
    member.stdin_fd = -1;
  }
  if (member.reader.joinable()) member.reader.join();
}

// Writes about 2,000 records/s to `input` (key next_key(), `key_width` characters, on partition
// key % kPartitions) from a thread of its own until destroyed: the load under which members die.
class Trickle {
 public:
  Trickle(const std::string& bootstrap, const std::string& input, int key_width,
          std::function<int()> next_key)
      : thread_([this, bootstrap, input, key_width, next_key = std::move(next_key)] {
          testing::Producer producer(bootstrap);
          while (!stop_) {
            for (int k = 0; k < 20; ++k) {
              const int key = next_key();
              producer.send(input, key % kPartitions, key_of(key, key_width), "v");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
          }
          producer.flush();
        }) {}
  ~Trickle() {
    stop_ = true;
    thread_.join();
  }
  Trickle(const Trickle&) = delete;
  Trickle& operator=(const Trickle&) = delete;

 private:
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

// The member processes of one measure: whatever happens, none outlives it (declared after the
// Trickle, they are killed before it stops).
struct Members {
  Member list[2];
  ~Members() {
    for (Member& member : list) kill_member(member);
  }
};

struct Failover {
  double first_seconds = 0;
  double last_seconds = 0;
  std::size_t partitions = 0;
};

Failover ours_failover(const Config& config, const std::string& group_protocol, int standby_replicas) {
  const std::string application = testing::unique_name("bench-ours-failover");
  const std::string input = application + "-input";
  const std::string output = application + "-output";
  testing::create_topic(config.bootstrap, input, kPartitions);
  testing::create_topic(config.bootstrap, output, kPartitions);
  bench::TempDir state("streams-failover");
  int next = 0;
  const Trickle trickle(config.bootstrap, input, 6, [&next] { return next++ % kKeys; });
  Members two;
  Member* members = two.list;
  for (int m = 0; m < 2; ++m) {
    spawn_member(members[m], {"bench_streams", "--member", "--bootstrap", config.bootstrap, "--application",
                              application, "--input", input, "--output", output, "--state-dir",
                              (state.path() / std::to_string(m)).string(), "--group-protocol", group_protocol,
                              "--standby", std::to_string(standby_replicas)});
  }
  auto owned = [](Member& member) {
    std::lock_guard<std::mutex> lock(member.mutex);
    return member.active;
  };
  const auto deadline = Clock::now() + std::chrono::seconds(60);
  while (owned(members[0]).size() + owned(members[1]).size() < kPartitions || owned(members[0]).empty() ||
         owned(members[1]).empty()) {
    if (Clock::now() > deadline)
      throw std::runtime_error("ours: the two members never shared the partitions");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::this_thread::sleep_for(std::chrono::seconds(3));
  const std::set<int> killed = owned(members[0]);
  const std::int64_t killed_at = epoch_ms();
  ::kill(members[0].pid, SIGKILL);
  ::waitpid(members[0].pid, nullptr, 0);
  members[0].pid = -1;
  Failover result;
  result.partitions = killed.size();
  const auto wait_until = Clock::now() + std::chrono::seconds(90);
  for (;;) {
    std::vector<std::int64_t> times;
    {
      std::lock_guard<std::mutex> lock(members[1].mutex);
      for (const int partition : killed) {
        const auto it = members[1].first.find(partition);
        if (it != members[1].first.end() && members[1].active.count(partition) > 0)
          times.push_back(it->second);
      }
    }
    if (times.size() == killed.size()) {
      result.first_seconds = (*std::min_element(times.begin(), times.end()) - killed_at) / 1000.0;
      result.last_seconds = (*std::max_element(times.begin(), times.end()) - killed_at) / 1000.0;
      break;
    }
    if (Clock::now() > wait_until) throw std::runtime_error("ours: the survivor never took over");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return result;
}

// ---- Crash restart: one instance, SIGKILLed mid-stream and started again at once on the same
// state directory. Timed from the restart to the first output record a read_committed reader
// sees above what was committed before it: output of the new incarnation only (the killed one's
// open transaction is aborted, never committed).

// Reads the output topic read_committed from its start, in a thread of its own.
class OutputWatch {
 public:
  OutputWatch(const std::string& bootstrap, const std::string& topic, int partitions)
      : topic_(topic), partitions_(partitions) {
    rk_ = floor_client(RD_KAFKA_CONSUMER, {{"bootstrap.servers", bootstrap},
                                           {"group.id", topic + "-watch"},
                                           {"isolation.level", "read_committed"},
                                           {"fetch.wait.max.ms", "10"},
                                           {"enable.partition.eof", "false"},
                                           {"log_level", "3"}});
    rd_kafka_topic_partition_list_t* assignment = rd_kafka_topic_partition_list_new(partitions);
    for (int p = 0; p < partitions; ++p)
      rd_kafka_topic_partition_list_add(assignment, topic.c_str(), p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    rd_kafka_assign(rk_, assignment);
    rd_kafka_topic_partition_list_destroy(assignment);
    thread_ = std::thread([this] { run(); });
  }
  ~OutputWatch() {
    stop_ = true;
    thread_.join();
    rd_kafka_consumer_close(rk_);
    rd_kafka_destroy(rk_);
  }
  OutputWatch(const OutputWatch&) = delete;
  OutputWatch& operator=(const OutputWatch&) = delete;

  std::uint64_t records() const { return records_; }

  // From now on, the first record at or above each partition's last stable offset counts.
  void mark() {
    rd_kafka_topic_partition_list_t* ends = rd_kafka_topic_partition_list_new(partitions_);
    for (int p = 0; p < partitions_; ++p)
      rd_kafka_topic_partition_list_add(ends, topic_.c_str(), p)->offset = -1;
    const auto error = rd_kafka_offsets_for_times(rk_, ends, 10'000);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_topic_partition_list_destroy(ends);
      throw std::runtime_error(std::string("output watch: ") + rd_kafka_err2str(error));
    }
    std::lock_guard<std::mutex> lock(mutex_);
    thresholds_.assign(static_cast<std::size_t>(partitions_), 0);
    for (int i = 0; i < ends->cnt; ++i)
      thresholds_[static_cast<std::size_t>(ends->elems[i].partition)] = ends->elems[i].offset;
    first_.clear();
    rd_kafka_topic_partition_list_destroy(ends);
  }

  // When the first record after the mark arrived: of any partition, and once every partition had one.
  std::optional<Clock::time_point> first_after_mark() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_.empty()) return std::nullopt;
    return std::min_element(first_.begin(), first_.end(), by_time)->second;
  }
  std::optional<Clock::time_point> every_partition_after_mark() const {
    std::lock_guard<std::mutex> lock(mutex_);
    if (first_.size() < static_cast<std::size_t>(partitions_)) return std::nullopt;
    return std::max_element(first_.begin(), first_.end(), by_time)->second;
  }

 private:
  void run() {
    rd_kafka_queue_t* queue = rd_kafka_queue_get_consumer(rk_);
    std::vector<rd_kafka_message_t*> batch(1000);
    while (!stop_) {
      const ssize_t n = rd_kafka_consume_batch_queue(queue, 50, batch.data(), batch.size());
      const auto now = Clock::now();
      std::lock_guard<std::mutex> lock(mutex_);
      for (ssize_t i = 0; i < n; ++i) {
        const rd_kafka_message_t* message = batch[static_cast<std::size_t>(i)];
        if (message->err == RD_KAFKA_RESP_ERR_NO_ERROR) {
          ++records_;
          if (!thresholds_.empty() &&
              message->offset >= thresholds_[static_cast<std::size_t>(message->partition)])
            first_.try_emplace(message->partition, now);
        }
        rd_kafka_message_destroy(batch[static_cast<std::size_t>(i)]);
      }
    }
    rd_kafka_queue_destroy(queue);
  }

  std::string topic_;
  int partitions_;
  rd_kafka_t* rk_ = nullptr;
  std::thread thread_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> records_{0};
  mutable std::mutex mutex_;
  std::vector<std::int64_t> thresholds_;
  std::map<std::int32_t, Clock::time_point> first_;  // partition -> its first record after the mark
  static bool by_time(const std::pair<const std::int32_t, Clock::time_point>& a,
                      const std::pair<const std::int32_t, Clock::time_point>& b) {
    return a.second < b.second;
  }
};

struct CrashRestart {
  double seconds = 0;          // restart to the first committed output
  double every_seconds = 0;    // restart until every partition had committed output
  std::uint64_t restored = 0;  // records the restarted instance restored
};

// `peer`: Kafka Streams' member (its failover-member mode) instead of ours. `protocol`: "classic"
// or "consumer" (ours only). `static_member`: group.instance.id set, the same in both incarnations.
CrashRestart crash_restart(const Config& config, bool peer, const std::string& protocol, bool static_member) {
  const std::string application = testing::unique_name(peer ? "bench-ks-crash" : "bench-ours-crash");
  const std::string input = application + "-input";
  const std::string output = application + "-output";
  const int keys = config.crash_keys;
  make_input(config, input, kPartitions, keys, keys, 8);
  testing::create_topic(config.bootstrap, output, kPartitions);
  bench::TempDir state("streams-crash");
  std::mt19937 random(5);
  const Trickle trickle(config.bootstrap, input, 8,
                        [&random, keys] { return std::uniform_int_distribution<int>(0, keys - 1)(random); });
  Members two;
  Member* incarnations = two.list;
  OutputWatch watch(config.bootstrap, output, kPartitions);
  std::vector<std::string> args;
  if (peer) {
    args = {config.peer,
            "failover-member",
            "--bootstrap",
            config.bootstrap,
            "--application-id",
            application,
            "--input",
            input,
            "--output",
            output,
            "--state-dir",
            state.path().string(),
            "--commit-interval-ms",
            std::to_string(kCommitIntervalMs),
            "--session-timeout-ms",
            std::to_string(kSessionTimeoutMs),
            "--transaction-timeout-ms",
            std::to_string(kTransactionTimeoutMs)};
  } else {
    args = {"bench_streams",    "--member",  "--bootstrap", config.bootstrap,
            "--application",    application, "--input",     input,
            "--output",         output,      "--state-dir", state.path().string(),
            "--group-protocol", protocol};
  }
  if (static_member) {
    args.push_back("--instance-id");
    args.push_back(application + "-member");
  }
  spawn_member(incarnations[0], args);
  const auto deadline = Clock::now() + std::chrono::minutes(5);
  while (watch.records() < static_cast<std::uint64_t>(keys)) {
    if (Clock::now() > deadline) throw std::runtime_error(application + ": the input was never processed");
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  std::this_thread::sleep_for(std::chrono::seconds(2));  // mid-stream: the trickle flows
  kill_member(incarnations[0]);
  // A commit whose request left before the kill lands within milliseconds; what is committed
  // after the mark is the new incarnation's.
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  watch.mark();
  const auto restarted = Clock::now();
  if (std::getenv("BENCH_MEMBER_TRACE") != nullptr)
    std::fprintf(stderr, "%lld restarting %s\n", static_cast<long long>(epoch_ms()), application.c_str());
  spawn_member(incarnations[1], args);
  const auto wait_until = Clock::now() + std::chrono::minutes(3);
  std::optional<Clock::time_point> first;
  while (!(first = watch.first_after_mark())) {
    if (Clock::now() > wait_until) throw std::runtime_error(application + ": no output after the restart");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CrashRestart result;
  result.seconds = std::chrono::duration<double>(*first - restarted).count();
  // Kafka Streams processes a partition as soon as it is restored, while others restore.
  std::optional<Clock::time_point> every;
  while (!(every = watch.every_partition_after_mark())) {
    if (Clock::now() > wait_until)
      throw std::runtime_error(application + ": a partition had no output after the restart");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  result.every_seconds = std::chrono::duration<double>(*every - restarted).count();
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the last restore reports
  {
    std::lock_guard<std::mutex> lock(incarnations[1].mutex);
    result.restored = incarnations[1].restored;
  }
  return result;
}

double median_of(std::vector<double> values) { return bench::median(std::move(values)); }

int run(const Config& config) {
  Summary summary("bench_streams");
  std::cout << "bench_streams: " << bench::machine_line() << std::endl;
  const bool peer = !config.peer.empty();
  if (!peer) summary.note("no Kafka Streams peer (--peer or PROCESSOR_STREAMS_PEER): ours only");

  if (!config.failover_only && !config.crash_only && !config.restore_only) {
    // 1. Throughput and CPU per record, alternating ours and the peer on one input.
    const std::string input = testing::unique_name("bench-streams-input");
    make_input(config, input, kPartitions, config.records, kKeys, 6);
    std::vector<double> ours_rate, ours_cpu, peer_rate, peer_cpu, floor_rate, floor_cpu, alo_rate, alo_cpu;
    auto report = [](const char* who, const Throughput& run) {
      std::cout << who << ": " << fmt(run.records_per_second) << " records/s, " << fmt(run.cpu_ns_per_record)
                << " ns CPU/record" << std::endl;
    };
    for (int r = 0; r < config.repetitions; ++r) {
      const Throughput ours = ours_throughput(config, input, config.records);
      report("ours", ours);
      ours_rate.push_back(ours.records_per_second);
      ours_cpu.push_back(ours.cpu_ns_per_record);
      const Throughput floor = floor_throughput(config, input, config.records);
      report("floor (at-least-once, no store)", floor);
      floor_rate.push_back(floor.records_per_second);
      floor_cpu.push_back(floor.cpu_ns_per_record);
      const Throughput alo =
          ours_throughput(config, input, config.records, streams::ProcessingGuarantee::AtLeastOnce);
      report("ours at-least-once", alo);
      alo_rate.push_back(alo.records_per_second);
      alo_cpu.push_back(alo.cpu_ns_per_record);
      if (peer) {
        const std::string application = testing::unique_name("bench-ks");
        testing::create_topic(config.bootstrap, application + "-output", kPartitions);
        const auto fields =
            run_peer(config, "throughput" + peer_common(application) + " --input " + input + " --output " +
                                 application + "-output --records " + std::to_string(config.records));
        std::cout << "Kafka Streams: " << fmt(field(fields, "records_per_s")) << " records/s, "
                  << fmt(field(fields, "cpu_ns_per_record")) << " ns CPU/record" << std::endl;
        peer_rate.push_back(field(fields, "records_per_s"));
        peer_cpu.push_back(field(fields, "cpu_ns_per_record"));
      }
    }
    {
      const double rate_ratio = median_of(ours_rate) / median_of(floor_rate);
      const double cpu_ratio = median_of(floor_cpu) / median_of(ours_cpu);
      summary.add(Result{"EOS throughput records/s vs its floor (at-least-once, no store)",
                         fmt(median_of(ours_rate)), fmt(median_of(floor_rate)), fmt(rate_ratio) + "x",
                         ">= 0.8x", met(rate_ratio >= 0.8)});
      summary.add(Result{"EOS CPU ns/record vs the floor's (floor/ours)", fmt(median_of(ours_cpu)),
                         fmt(median_of(floor_cpu)), fmt(cpu_ratio) + "x"});
      summary.add(Result{"at-least-once StreamProcessor records/s vs the floor", fmt(median_of(alo_rate)),
                         fmt(median_of(floor_rate)), fmt(median_of(alo_rate) / median_of(floor_rate)) + "x"});
    }
    const std::string size = std::to_string(config.records) + " records";
    if (peer) {
      const double rate_ratio = median_of(ours_rate) / median_of(peer_rate);
      const double cpu_ratio = median_of(ours_cpu) / median_of(peer_cpu);
      summary.add(Result{"EOS throughput records/s (" + size + ", vs Kafka Streams)",
                         fmt(median_of(ours_rate)), fmt(median_of(peer_rate)), fmt(rate_ratio) + "x", ">= 2x",
                         met(rate_ratio >= 2)});
      summary.add(Result{"EOS CPU ns/record (vs Kafka Streams)", fmt(median_of(ours_cpu)),
                         fmt(median_of(peer_cpu)), fmt(cpu_ratio) + "x", "<= 0.5x", met(cpu_ratio <= 0.5)});
    } else {
      summary.add(Result{"EOS throughput records/s (" + size + ")", fmt(median_of(ours_rate))});
      summary.add(Result{"EOS CPU ns/record", fmt(median_of(ours_cpu))});
    }
  }

  if (!config.failover_only && !config.crash_only) {
    // 2. Restoration of one partition from its changelog, alternating ours and the peer.
    const std::string restore_input = testing::unique_name("bench-streams-restore");
    make_input(config, restore_input, 1, config.restore_keys, config.restore_keys, 32);
    const std::string application = ours_restore_changelog(config, restore_input, config.restore_keys);
    std::vector<double> ours_seconds, ours_rate_mb, peer_seconds;
    double ours_mb = 0;
    for (int r = 0; r < config.repetitions; ++r) {
      const Restore ours = ours_restore(config, restore_input, application);
      ours_mb = ours.bytes / 1e6;
      std::cout << "ours: restored " << ours.records << " records, " << fmt(ours_mb) << " MB in "
                << fmt(ours.seconds) << " s (" << fmt(ours.records / ours.seconds) << " records/s)"
                << std::endl;
      ours_seconds.push_back(ours.seconds);
      ours_rate_mb.push_back(ours_mb / ours.seconds);
      if (peer) {
        const std::string peer_application = testing::unique_name("bench-ks-restore");
        testing::create_topic(config.bootstrap, peer_application + "-output", 1);
        const auto fields = run_peer(config, "restore" + peer_common(peer_application) + " --input " +
                                                 restore_input + " --output " + peer_application +
                                                 "-output --records " + std::to_string(config.restore_keys));
        peer_seconds.push_back(field(fields, "restore_seconds"));
        std::cout << "Kafka Streams: restored " << field(fields, "restored_records") << " records in "
                  << fmt(peer_seconds.back()) << " s" << std::endl;
      }
    }
    const std::string keys = std::to_string(config.restore_keys) + " keys";
    const double rate = median_of(ours_rate_mb);
    summary.add(Result{"restore MB/s (" + keys + ", " + fmt(ours_mb) + " MB)", fmt(rate), "100 MB/s floor",
                       fmt(rate / 100) + "x", ">= 1x", met(rate >= 100)});
    summary.add(
        Result{"restore records/s (" + keys + ")", fmt(config.restore_keys / median_of(ours_seconds))});
    if (peer) {
      const double ratio = median_of(ours_seconds) / median_of(peer_seconds);
      summary.add(Result{"restore seconds (" + keys + ", vs Kafka Streams)", fmt(median_of(ours_seconds)),
                         fmt(median_of(peer_seconds)), fmt(ratio) + "x", "<= 0.5x", met(ratio <= 0.5)});
    }
  }

  // 4. Crash restart on the same state directory, with and without static membership.
  if (!config.failover_only && config.crash_restart) {
    struct Variant {
      bool peer;
      const char* protocol;
      bool static_member;
      std::vector<double> seconds;
      std::vector<double> every_seconds;
      std::vector<double> restored;
    };
    std::vector<Variant> variants;
    for (const bool static_member : {false, true}) {
      if (config.smoke && !static_member) continue;  // the smoke run skips the session timeouts
      variants.push_back({false, "classic", static_member, {}, {}, {}});
      // A static member killed under the consumer protocol stays in the group until its session
      // expires; the restart waits for that (the coordinator would refuse it meanwhile:
      // UNRELEASED_INSTANCE_ID), so this row is session-bound too.
      if (!config.smoke) variants.push_back({false, "consumer", static_member, {}, {}, {}});
      if (peer) variants.push_back({true, "classic", static_member, {}, {}, {}});
    }
    for (int r = 0; r < config.repetitions; ++r) {
      for (auto& variant : variants) {
        const CrashRestart run = crash_restart(config, variant.peer, variant.protocol, variant.static_member);
        std::cout << (variant.peer ? "Kafka Streams" : "ours") << " (" << variant.protocol
                  << (variant.static_member ? ", static member" : ", dynamic member")
                  << "): crash restart to first committed output " << fmt(run.seconds)
                  << " s, every partition's " << fmt(run.every_seconds) << " s, restored " << run.restored
                  << " records" << std::endl;
        variant.seconds.push_back(run.seconds);
        variant.every_seconds.push_back(run.every_seconds);
        variant.restored.push_back(static_cast<double>(run.restored));
      }
    }
    const std::string keys = std::to_string(config.crash_keys) + " keys";
    for (const auto& variant : variants) {
      if (variant.peer) continue;
      const std::string name = "crash restart s to first committed output (" + keys + ", " +
                               variant.protocol +
                               (variant.static_member ? ", static member" : ", dynamic member") + ")";
      const double ours_seconds = median_of(variant.seconds);
      const auto anchor = std::find_if(variants.begin(), variants.end(), [&](const Variant& other) {
        return other.peer && other.static_member == variant.static_member &&
               std::string(variant.protocol) == "classic";
      });
      const std::string every = "  until every partition's first committed output, s";
      const std::string restored = "  records restored by that restart";
      if (anchor == variants.end()) {
        summary.add(Result{name, fmt(ours_seconds)});
        summary.add(Result{every, fmt(median_of(variant.every_seconds))});
        summary.add(Result{restored, fmt(median_of(variant.restored))});
        continue;
      }
      const double peer_seconds = median_of(anchor->seconds);
      summary.add(Result{name + " vs Kafka Streams", fmt(ours_seconds), fmt(peer_seconds),
                         fmt(ours_seconds / peer_seconds) + "x", "<= 0.5x",
                         met(ours_seconds <= 0.5 * peer_seconds)});
      const double ours_every = median_of(variant.every_seconds);
      const double peer_every = median_of(anchor->every_seconds);
      summary.add(Result{every, fmt(ours_every), fmt(peer_every), fmt(ours_every / peer_every) + "x"});
      summary.add(Result{restored, fmt(median_of(variant.restored)), fmt(median_of(anchor->restored))});
    }
  }

  // 3. Failover.
  if (config.failover) {
    const Failover ours_failover_result = ours_failover(config, "classic", 0);
    std::cout << "ours: failover of " << ours_failover_result.partitions << " partitions: first record after "
              << fmt(ours_failover_result.first_seconds) << " s, last partition after "
              << fmt(ours_failover_result.last_seconds) << " s" << std::endl;
    const std::string what = "failover s, kill to last partition's first record (session " +
                             std::to_string(kSessionTimeoutMs / 1000) + " s)";
    if (peer) {
      const std::string application = testing::unique_name("bench-ks-failover");
      const std::string topic = application + "-input";
      testing::create_topic(config.bootstrap, topic, kPartitions);
      testing::create_topic(config.bootstrap, application + "-output", kPartitions);
      const auto fields =
          run_peer(config, "failover" + peer_common(application) + " --input " + topic + " --output " +
                               application + "-output --rate 2000 --warmup-s 10");
      const double peer_last = field(fields, "failover_seconds_last");
      summary.add(Result{what + ", vs Kafka Streams", fmt(ours_failover_result.last_seconds), fmt(peer_last),
                         fmt(ours_failover_result.last_seconds / peer_last) + "x", "<= 0.5x",
                         met(ours_failover_result.last_seconds <= 0.5 * peer_last)});
    } else {
      summary.add(Result{what, fmt(ours_failover_result.last_seconds)});
    }
    // The consumer protocol, and each protocol with one standby replica per partition (the
    // consumer protocol's session timeout is the broker's group.consumer.session.timeout.ms: 6 s
    // on scripts/kafka/broker.sh's broker, as the classic members' session.timeout.ms here).
    const std::pair<const char*, int> variants[] = {{"consumer", 0}, {"classic", 1}, {"consumer", 1}};
    for (const auto& [protocol, standbys] : variants) {
      const Failover variant = ours_failover(config, protocol, standbys);
      const std::string name = std::string("group.protocol=") + protocol +
                               (standbys == 0 ? ", no standby" : ", 1 standby replica");
      std::cout << "ours (" << name << "): failover of " << variant.partitions
                << " partitions: first record after " << fmt(variant.first_seconds)
                << " s, last partition after " << fmt(variant.last_seconds) << " s" << std::endl;
      summary.add(Result{"failover s, " + name, fmt(variant.last_seconds)});
    }
  }
  summary.print(std::cout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::map<std::string, std::string> args;
    bool member = false;
    Config config;
    for (int i = 1; i < argc; ++i) {
      const std::string arg = argv[i];
      if (arg == "--member") {
        member = true;
      } else if (arg == "--smoke") {
        config.smoke = true;
      } else if (arg == "--no-failover") {
        config.failover = false;
      } else if (arg == "--no-crash-restart") {
        config.crash_restart = false;
      } else if (arg == "--crash-restart-only") {
        config.crash_only = true;
        config.failover = false;
      } else if (arg == "--restore-only") {
        config.restore_only = true;
        config.failover = false;
        config.crash_restart = false;
      } else if (arg == "--failover-only") {
        config.failover_only = true;
      } else if (arg.rfind("--", 0) == 0 && i + 1 < argc) {
        args[arg.substr(2)] = argv[++i];
      } else {
        throw std::invalid_argument("unexpected argument " + arg);
      }
    }
    if (member) return member_main(args);
    set_log_level(LogLevel::Warning);
    if (std::getenv("BENCH_VERBOSE") != nullptr) {
      // Info logs, each with the CLOCK_MONOTONIC time (perf's -k CLOCK_MONOTONIC).
      set_log_level(LogLevel::Info);
      set_log_sink([](LogLevel, std::string_view component, std::string_view message) {
        timespec now{};
        clock_gettime(CLOCK_MONOTONIC, &now);
        std::printf("%.3f %.*s %.*s\n",
                    static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) / 1e9,
                    static_cast<int>(component.size()), component.data(), static_cast<int>(message.size()),
                    message.data());
        std::fflush(stdout);
      });
    }
    const char* bootstrap = std::getenv("KAFKA_BOOTSTRAP");
    if (bootstrap == nullptr || *bootstrap == '\0') throw std::invalid_argument("KAFKA_BOOTSTRAP is not set");
    config.bootstrap = bootstrap;
    if (const char* peer = std::getenv("PROCESSOR_STREAMS_PEER")) config.peer = peer;
    if (args.count("peer")) config.peer = args["peer"];
    if (config.smoke) {
      config.records = 20'000;
      config.restore_keys = 20'000;
      config.crash_keys = 20'000;
      config.repetitions = 1;
      config.failover = false;
    }
    if (args.count("records")) config.records = std::stoi(args["records"]);
    if (args.count("restore-keys")) config.restore_keys = std::stoi(args["restore-keys"]);
    if (args.count("crash-keys")) config.crash_keys = std::stoi(args["crash-keys"]);
    if (args.count("repetitions")) config.repetitions = std::stoi(args["repetitions"]);
    return run(config);
  } catch (const std::exception& error) {
    std::cerr << "bench_streams: FAILED: " << error.what() << std::endl;
    return 1;
  }
}
