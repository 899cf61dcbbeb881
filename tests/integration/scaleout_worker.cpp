// One consumer process of the scale-out acceptance test (scaleout_test.cpp): a member of a
// consumer group on the real broker that logs what it does to a file, one line per event, so
// that the test can check the run afterwards, even when this process was killed with SIGKILL.
//
//   scaleout_worker --bootstrap B --group G --topic T --log FILE [--assignment cooperative-sticky|range]
//
// Log lines (each written with one write() on an O_APPEND descriptor, so they survive SIGKILL):
//   A p1 p2 ..     partitions assigned (on_assigned)
//   V p1 p2 ..     partitions being revoked (on_revoked; their final commit follows at once)
//   L p1 p2 ..     partitions lost (on_lost; dropped without a commit)
//   R p o          the record at offset o of partition p was handled
//   C p o          about to commit offset o for partition p (one line per entry of a commit)
//   K p o          that commit succeeded
//   E message      an error the worker survived (also printed on stderr)
//
// SIGTERM stops the consume loop; the worker then closes the consumer (final commit, leaves the
// group) and exits 0. It prints nothing on stdout; errors go to stderr and exit 1.

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "append_only_log.hpp"
#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"

namespace {

using namespace processor::kafka;

volatile std::sig_atomic_t g_stop = 0;

extern "C" void on_sigterm(int) { g_stop = 1; }

using EventLog = processor::testing::AppendOnlyLog;

std::string partition_line(char kind, const std::vector<TopicPartition>& partitions) {
  std::string line(1, kind);
  for (const auto& tp : partitions) line += " " + std::to_string(tp.partition);
  return line + "\n";
}

std::string offset_lines(char kind, std::span<const PartitionOffset> offsets) {
  std::string lines;
  for (const auto& [tp, info] : offsets) {
    lines += kind;
    lines += " " + std::to_string(tp.partition) + " " + std::to_string(info.offset) + "\n";
  }
  return lines;
}

// Forwards everything to a KafkaOffsetStore and logs each commit: "C" lines before it is sent,
// "K" lines after it succeeded.
class LoggingOffsetStore : public OffsetStore {
 public:
  LoggingOffsetStore(std::shared_ptr<KafkaOffsetStore> inner, const EventLog& log)
      : inner_(std::move(inner)), log_(log) {}

  void store_offset(std::string_view group, const TopicPartition& tp, const OffsetInfo& info) override {
    const PartitionOffset entry{tp, info};
    store_offsets(group, std::span<const PartitionOffset>(&entry, 1));
  }
  std::optional<OffsetInfo> get_offset(std::string_view group, const TopicPartition& tp) override {
    return inner_->get_offset(group, tp);
  }
  std::unordered_map<TopicPartition, OffsetInfo> get_all_offsets(std::string_view group) override {
    return inner_->get_all_offsets(group);
  }
  void delete_offset(std::string_view group, const TopicPartition& tp) override {
    inner_->delete_offset(group, tp);
  }
  void clear_offsets(std::string_view group) override { inner_->clear_offsets(group); }
  void store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) override {
    log_.write(offset_lines('C', offsets));
    inner_->store_offsets(group, offsets);
    log_.write(offset_lines('K', offsets));
  }

 private:
  std::shared_ptr<KafkaOffsetStore> inner_;
  const EventLog& log_;
};

struct Arguments {
  std::string bootstrap;
  std::string group;
  std::string topic;
  std::string log;
  std::string assignment = "cooperative-sticky";
};

[[noreturn]] void usage(const std::string& problem) {
  std::cerr << "scaleout_worker: " << problem << "\n"
            << "usage: scaleout_worker --bootstrap B --group G --topic T --log FILE "
               "[--assignment cooperative-sticky|range]\n";
  std::exit(2);
}

Arguments parse(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i < argc; ++i) {
    const std::string_view flag = argv[i];
    if (i + 1 >= argc) usage("missing value for " + std::string(flag));
    const std::string value = argv[++i];
    if (flag == "--bootstrap") {
      args.bootstrap = value;
    } else if (flag == "--group") {
      args.group = value;
    } else if (flag == "--topic") {
      args.topic = value;
    } else if (flag == "--log") {
      args.log = value;
    } else if (flag == "--assignment") {
      if (value != "cooperative-sticky" && value != "range") usage("unknown assignment strategy " + value);
      args.assignment = value;
    } else {
      usage("unknown argument " + std::string(flag));
    }
  }
  if (args.bootstrap.empty() || args.group.empty() || args.topic.empty() || args.log.empty()) {
    usage("--bootstrap, --group, --topic and --log are required");
  }
  return args;
}

int run(const Arguments& args) {
  const EventLog log(args.log);

  KafkaOffsetStoreOptions store_options;
  store_options.request_timeout = std::chrono::seconds(5);
  store_options.retry_backoff = std::chrono::milliseconds(20);
  store_options.retry_backoff_max = std::chrono::milliseconds(200);
  store_options.retry_deadline = std::chrono::seconds(10);

  auto client =
      KafkaClient::create(processor::testing::group_properties(args.bootstrap, args.group, args.assignment));
  auto kafka_store = std::make_shared<KafkaOffsetStore>(client, store_options);
  auto store = std::make_shared<LoggingOffsetStore>(kafka_store, log);
  OffsetManager manager(args.group, nullptr, store,
                        OffsetCommitStrategy::periodic(std::chrono::milliseconds(200)));

  KafkaConsumerOptions options;
  options.topics = {args.topic};
  options.poll_timeout = std::chrono::milliseconds(50);
  options.on_assigned = [&log](const std::vector<TopicPartition>& partitions) {
    log.write(partition_line('A', partitions));
  };
  options.on_revoked = [&log](const std::vector<TopicPartition>& partitions) {
    log.write(partition_line('V', partitions));
  };
  options.on_lost = [&log](const std::vector<TopicPartition>& partitions) {
    log.write(partition_line('L', partitions));
  };
  KafkaConsumer consumer(client, manager, std::move(options));

  const KafkaConsumer::RecordHandler handler = [&](const ConsumedRecord& record) {
    log.write("R " + std::to_string(record.partition) + " " + std::to_string(record.offset) + "\n");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    if (g_stop != 0) consumer.stop();  // the current poll() returns after this record
  };

  while (g_stop == 0) {
    try {
      consumer.poll(handler);
    } catch (const processor::StateError& error) {
      // A failed automatic commit stays pending and is retried: keep consuming.
      log.write(std::string("E ") + error.what() + "\n");
      std::cerr << "scaleout_worker: " << error.what() << "\n";
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  consumer.close();  // commits pending offsets and leaves the group
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Arguments args = parse(argc, argv);
  struct sigaction action {};
  action.sa_handler = on_sigterm;
  sigemptyset(&action.sa_mask);
  ::sigaction(SIGTERM, &action, nullptr);
  try {
    return run(args);
  } catch (const std::exception& error) {
    std::cerr << "scaleout_worker: " << error.what() << "\n";
    return 1;
  }
}
