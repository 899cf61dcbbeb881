// One member of the parallel-consumer robustness test (parallel_kill_test.cpp): a ParallelConsumer
// (key order) whose handler sleeps a random 0..max-latency ms and throws a transient error on
// fail-permille of its tries, and journals every try, so that the test can check afterwards,
// even of a SIGKILLed process, which records were processed, when, and in which order.
//
//   parallel_worker --bootstrap B --group G --input T --journal FILE --state-dir DIR
//                   [--mode journal|transactional] [--output O]
//                   [--assignment cooperative-sticky|range|consumer] [--session-timeout-ms 3000 (classic)]
//                   [--seed N] [--max-latency-ms 20] [--fail-permille 10] [--metadata-budget 4096]
//                   [--slow-partition P --slow-offset O --slow-ms MS --slow-done FILE]
//
// Modes:
// - journal: at least once. Offsets go to the group through a KafkaOffsetStore every 200 ms (the
//   acknowledged records above the committed offset in the commit metadata).
// - transactional: exactly once. Each record's handler produces one output record
//   "<partition>:<offset>:<seq>" (key: the input key, partition: the input's) into the open
//   transaction of a TransactionalProducer; a checkpoint (requested every 200 ms) commits the
//   transaction with the manager's committable offsets and begins the next. produce() is
//   serialized by a mutex: TransactionalProducer promises no concurrent use. The transactional.id
//   is new for every process; a zombie is fenced by the group metadata (KIP-447).
//
// The slow record (--slow-partition/--slow-offset): its handler sleeps --slow-ms until one
// process has finished that sleep (it then creates --slow-done), while the records behind it
// go on: the acknowledged set above it grows past the metadata budget and the manager, which has
// a RocksDB state backend in --state-dir, spills it there.
//
// Journal lines (one write() each on an O_APPEND file, so they survive SIGKILL):
//   A p1 p2 ..           partitions assigned          V p1 ..   revoked    L p1 ..   lost
//   S p o key seq n      try n of a record started
//   F p o key seq n      that try threw (transient failure)
//   D p o key seq n t    that try returned at t (ms since the epoch): the record is done
//   W p o key seq        the slow record's long sleep starts (Z when it ends)
// Stdout, every 200 ms: "stats processed P failed F skipped S abandoned A in_flight I
// metadata_warnings M poll_errors E longest_poll_ms L" (E: poll() calls that threw; L: the
// longest poll(), rebalance callbacks included).
// SIGTERM: close (journal mode; a final commit) and exit 0. Exit 2: a checkpoint's transaction
// failed; 3: partitions were lost with a transaction open (transactional mode). The test
// restarts such a worker as if it had crashed. Errors at start: exit 1.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "append_only_log.hpp"
#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/kafka/parallel_consumer.hpp"
#include "processor/state.hpp"

namespace {

using namespace processor::kafka;
using processor::testing::AppendOnlyLog;

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_sigterm(int) { g_stop = 1; }

struct Arguments {
  std::map<std::string, std::string> named;
  std::string get(const std::string& name, const std::string& fallback = "") const {
    const auto it = named.find(name);
    return it == named.end() ? fallback : it->second;
  }
  std::string required(const std::string& name) const {
    const auto it = named.find(name);
    if (it == named.end()) throw std::invalid_argument("missing --" + name);
    return it->second;
  }
};

Arguments parse(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (name.rfind("--", 0) != 0 || i + 1 >= argc) throw std::invalid_argument("bad argument " + name);
    args.named[name.substr(2)] = argv[i + 1];
  }
  return args;
}

std::string partition_line(char kind, const std::vector<TopicPartition>& partitions) {
  std::string line(1, kind);
  for (const auto& tp : partitions) line += " " + std::to_string(tp.partition);
  return line + "\n";
}

std::string record_line(char kind, const ConsumedRecord& record, int attempt) {
  std::string line(1, kind);
  line += " " + std::to_string(record.partition) + " " + std::to_string(record.offset) + " ";
  line.append(record.key);
  line += " ";
  line.append(record.value);
  if (attempt > 0) line += " " + std::to_string(attempt);
  if (kind == 'D') {
    // When it was done, to order one record's D lines across processes.
    line += " " + std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::system_clock::now().time_since_epoch())
                                     .count());
  }
  return line + "\n";
}

// Which try of a record this is, per (partition, offset) of this process.
class Attempts {
 public:
  int next(std::int32_t partition, std::int64_t offset) {
    std::lock_guard lock(mutex_);
    return ++tries_[{partition, offset}];
  }

 private:
  std::mutex mutex_;
  std::map<std::pair<std::int32_t, std::int64_t>, int> tries_;
};

int run(const Arguments& args) {
  const AppendOnlyLog journal(args.required("journal"));
  const std::string input = args.required("input");
  const std::string group = args.required("group");
  const bool transactional = args.get("mode", "journal") == "transactional";
  const std::string output = transactional ? args.required("output") : "";
  const int max_latency_ms = std::stoi(args.get("max-latency-ms", "20"));
  const int fail_permille = std::stoi(args.get("fail-permille", "10"));
  const int slow_partition = std::stoi(args.get("slow-partition", "-1"));
  const std::int64_t slow_offset = std::stoll(args.get("slow-offset", "-1"));
  const auto slow_for = std::chrono::milliseconds(std::stoll(args.get("slow-ms", "0")));
  const std::filesystem::path slow_done = args.get("slow-done", "/nonexistent/slow-done");
  const unsigned seed = static_cast<unsigned>(std::stoul(args.get("seed", "1")));

  auto properties = processor::testing::group_properties(args.required("bootstrap"), group,
                                                         args.get("assignment", "cooperative-sticky"));
  if (properties.count("partition.assignment.strategy") != 0)  // classic
    properties["session.timeout.ms"] = args.get("session-timeout-ms", "3000");
  auto client = KafkaClient::create(properties);
  KafkaOffsetStoreOptions store_options = processor::testing::fast_retries();
  store_options.retry_deadline =
      std::chrono::seconds(30);  // rides out offsets left unstable by a killed transaction
  auto store = std::make_shared<KafkaOffsetStore>(client, store_options);
  auto backend = std::make_shared<processor::state::RocksDbStateBackend>(args.required("state-dir"));
  OffsetManagerOptions manager_options;
  manager_options.broker = std::make_shared<KafkaBrokerMetadata>(client);
  manager_options.acks.metadata_budget_bytes = std::stoul(args.get("metadata-budget", "4096"));
  // Spilled sets stay in this process's state directory: fine for at-least-once (a new owner
  // processes the records again), wrong for the transactional results, which are committed.
  manager_options.spill_ack_metadata = !transactional;
  // Transactional mode: offsets reach the group only inside a transaction.
  OffsetManager manager(group, backend, store,
                        transactional ? OffsetCommitStrategy::manual()
                                      : OffsetCommitStrategy::periodic(std::chrono::milliseconds(200)),
                        manager_options);

  std::unique_ptr<TransactionalProducer> producer;
  std::mutex producer_mutex;  // TransactionalProducer is not safe for concurrent use
  if (transactional) {
    producer = std::make_unique<TransactionalProducer>(KafkaProperties{
        {"bootstrap.servers", args.required("bootstrap")},
        {"transactional.id", group + "-" + std::to_string(::getpid()) + "-" + std::to_string(seed)},
        {"transaction.timeout.ms",
         "10000"},  // above the slow record's 8 s: the checkpoint barrier waits for it
        {"log_level", "3"}});
    producer->begin();
  }

  ParallelConsumerOptions options;
  options.consumer.topics = {input};
  options.consumer.poll_timeout = std::chrono::milliseconds(50);
  options.consumer.request_timeout = std::chrono::seconds(30);
  options.consumer.commit_on_revoke = !transactional;
  options.consumer.on_assigned = [&](const std::vector<TopicPartition>& partitions) {
    journal.write(partition_line('A', partitions));
  };
  options.consumer.on_revoked = [&](const std::vector<TopicPartition>& partitions) {
    journal.write(partition_line('V', partitions));
  };
  options.consumer.on_lost = [&](const std::vector<TopicPartition>& partitions) {
    journal.write(partition_line('L', partitions));
    if (transactional) {
      // The open transaction holds results of the lost partitions, whose new owner processes
      // them again: it must not commit. Exit as a crash would; the coordinator aborts it.
      std::cerr << "parallel_worker: partitions lost with a transaction open: exiting" << std::endl;
      std::_Exit(3);
    }
  };
  if (transactional) {
    // At a barrier: no handler runs, so the transaction holds exactly the results of the
    // records acknowledged since the last commit.
    options.consumer.take_checkpoint = [&] {
      std::lock_guard lock(producer_mutex);
      producer->commit(*client, manager);
      producer->begin();
    };
  }
  options.ordering = ProcessingOrder::Key;
  options.max_concurrency = 32;
  options.drain_timeout = std::chrono::seconds(20);
  options.consumer.failure.retry.max_attempts = 10;  // 1% transient failures: ten in a row never happen
  options.consumer.failure.retry.initial_backoff = std::chrono::milliseconds(5);
  options.consumer.failure.retry.max_backoff = std::chrono::milliseconds(50);

  Attempts attempts;
  auto handler = [&](const ConsumedRecord& record) {
    thread_local std::mt19937 random(
        seed ^ static_cast<unsigned>(std::hash<std::thread::id>{}(std::this_thread::get_id())));
    const int attempt = attempts.next(record.partition, record.offset);
    journal.write(record_line('S', record, attempt));
    if (record.partition == slow_partition && record.offset == slow_offset &&
        !std::filesystem::exists(slow_done)) {
      journal.write(record_line('W', record, 0));
      std::this_thread::sleep_for(slow_for);
      ::close(::open(slow_done.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644));
      journal.write(record_line('Z', record, 0));
    }
    std::this_thread::sleep_for(
        std::chrono::milliseconds(std::uniform_int_distribution<int>(0, max_latency_ms)(random)));
    if (std::uniform_int_distribution<int>(0, 999)(random) < fail_permille) {
      journal.write(record_line('F', record, attempt));
      throw std::runtime_error("transient failure of " + std::to_string(record.partition) + "/" +
                               std::to_string(record.offset));
    }
    if (transactional) {
      const std::string value = std::to_string(record.partition) + ":" + std::to_string(record.offset) + ":" +
                                std::string(record.value);
      std::lock_guard lock(producer_mutex);
      producer->produce(output, record.key, value, record.partition);
    }
    journal.write(record_line('D', record, attempt));
  };

  ParallelConsumer consumer(client, manager, options, handler);
  std::cout << "started" << std::endl;
  auto last_report = std::chrono::steady_clock::now();
  auto last_checkpoint = last_report;
  long long poll_errors = 0;
  std::chrono::steady_clock::duration longest_poll{};
  while (g_stop == 0) {
    const auto poll_started = std::chrono::steady_clock::now();
    try {
      consumer.poll();
    } catch (const processor::StateError& error) {
      ++poll_errors;
      if (transactional && error.kind() != processor::ErrorKind::InvalidArgument) {
        // A failed commit of the transaction (or the consumer failing under it): as a crash.
        std::cerr << "parallel_worker: " << error.what() << ": exiting" << std::endl;
        std::_Exit(2);
      }
      std::cerr << "parallel_worker: poll: " << error.what() << std::endl;
    } catch (const std::exception& error) {
      // A record that failed every try (never expected: see max_attempts); it is tried again.
      ++poll_errors;
      std::cerr << "parallel_worker: poll: " << error.what() << std::endl;
    }
    const auto now = std::chrono::steady_clock::now();
    longest_poll = std::max(longest_poll, now - poll_started);
    if (transactional && now - last_checkpoint >= std::chrono::milliseconds(200)) {
      consumer.request_checkpoint();
      last_checkpoint = now;
    }
    if (now - last_report >= std::chrono::milliseconds(200)) {
      last_report = now;
      const auto stats = consumer.stats();
      std::cout << "stats processed " << stats.processed << " failed " << stats.failed_attempts << " skipped "
                << stats.skipped_after_restart << " abandoned " << stats.abandoned_on_revoke << " in_flight "
                << stats.in_flight << " metadata_warnings " << stats.metadata_warnings << " poll_errors "
                << poll_errors << " longest_poll_ms "
                << std::chrono::duration_cast<std::chrono::milliseconds>(longest_poll).count() << std::endl;
    }
  }
  if (transactional) {
    std::_Exit(0);  // nothing to commit outside a transaction; the open one is left to time out
  }
  consumer.close();
  std::cout << "stopped" << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    std::signal(SIGTERM, on_sigterm);
    processor::set_log_level(processor::LogLevel::Warning);
    return run(parse(argc, argv));
  } catch (const std::exception& error) {
    std::cerr << "parallel_worker: " << error.what() << std::endl;
    return 1;
  }
}
