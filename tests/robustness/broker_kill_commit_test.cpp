// Real-broker faults, case 1: the broker is SIGKILLed while a consumer commits offsets to the
// group coordinator every few records, and restarted on the same data and ports, twice.
//
// The application is what a user would write: a KafkaConsumer with an OffsetManager that
// commits every 20 records through a KafkaOffsetStore (retries cut short, so that an outage
// surfaces as errors instead of one long block), plus a manager.commit() of its own every 200 ms
// that catches StateError and carries on. The records are produced before the first kill and
// "processed" at 2 ms each, so that the stream lasts across both outages.
//
// What a user can observe, and what must hold:
// - every produced record reaches the handler at least once (repeats are allowed: records after
//   the last commit before a kill may be handled again);
// - the group's committed offsets, read from the broker every 100 ms by a separate client of the
//   group (a KafkaOffsetStore that never joins), never move backwards; nor does the consumer's
//   own committed view (OffsetManager::get_all_committed());
// - the consumer resumes by itself after each restart, and at the end the broker holds every
//   partition's log end as the committed offset;
// - poll() throws nothing but StateError of kind Kafka or Timeout (which the loop retries), and
//   a commit() that fails throws one of those kinds with retriable() true.
//
// Durability: the broker runs with Kafka's own log.flush defaults, so it acknowledges a write
// (a commit is a write to __consumer_offsets) once it is in the page cache, before any fsync. A
// SIGKILL ends the process, not the machine: the page cache keeps every acknowledged write and
// the restarted broker recovers its unflushed segments from it. A power loss could lose
// acknowledged commits; no test here simulates one.

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "kafka_test_support.hpp"
#include "owned_broker.hpp"
#include "processor/kafka.hpp"

namespace processor::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kPartitions = 3;
constexpr int kPerPartition = 1000;
constexpr int kRecords = kPartitions * kPerPartition;
constexpr int kKills = 2;
constexpr auto kRecordDelay = std::chrono::milliseconds(2);
constexpr auto kDownTime = std::chrono::seconds(1);  // between the SIGKILL and the restart
constexpr auto kDeadline = std::chrono::seconds(150);

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// Retries short enough that a commit during an outage fails within seconds: the error reaches
// the application (which retries), and the consumer keeps polling meanwhile.
kafka::KafkaOffsetStoreOptions outage_retries() {
  return fast_retries(std::chrono::seconds(2), std::chrono::seconds(4));
}

std::vector<kafka::TopicPartition> partitions_of(const std::string& topic) {
  std::vector<kafka::TopicPartition> partitions;
  for (int p = 0; p < kPartitions; ++p) partitions.emplace_back(topic, p);
  return partitions;
}

// A running maximum of committed offsets per partition that counts every step back.
class MonotonicCheck {
 public:
  explicit MonotonicCheck(std::string source) : source_(std::move(source)), max_(kPartitions, -1) {}

  void observe(int partition, std::int64_t offset) {
    auto& max = max_[static_cast<std::size_t>(partition)];
    if (offset < max) {
      ++regressions_;
      if (first_regression_.empty()) {
        first_regression_ = source_ + ": partition " + std::to_string(partition) + " went back from " +
                            std::to_string(max) + " to " + std::to_string(offset);
      }
    }
    max = std::max(max, offset);
  }
  int regressions() const { return regressions_; }
  const std::string& first_regression() const { return first_regression_; }
  std::int64_t max(int partition) const { return max_[static_cast<std::size_t>(partition)]; }

 private:
  std::string source_;
  std::vector<std::int64_t> max_;
  int regressions_ = 0;
  std::string first_regression_;
};

// The group's committed offsets as the broker serves them (OffsetFetch), read every 100 ms on a
// thread of its own by a client of the group that never joins it.
class CommittedWatch {
 public:
  CommittedWatch(const std::string& bootstrap, const std::string& group, const std::string& topic)
      : client_(kafka::KafkaClient::create(
            {{"bootstrap.servers", bootstrap}, {"group.id", group}, {"log_level", "0"}})),
        store_(client_, outage_retries()),
        partitions_(partitions_of(topic)),
        thread_([this] { run(); }) {}
  ~CommittedWatch() { stop(); }

  void stop() {
    stopping_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // The results, after stop().
  const MonotonicCheck& check() const { return check_; }
  int reads() const { return reads_; }
  int failed_reads() const { return failed_reads_; }
  // When the sum of the committed offsets last changed.
  std::vector<Clock::time_point> advances() const { return advances_; }

 private:
  void run() {
    std::int64_t last_sum = -1;
    while (!stopping_) {
      try {
        const auto committed = store_.committed(partitions_);
        std::int64_t sum = 0;
        for (const auto& [tp, info] : committed) {
          check_.observe(tp.partition, info.offset);
          sum += info.offset;
        }
        if (sum != last_sum) advances_.push_back(Clock::now());
        last_sum = sum;
        ++reads_;
      } catch (const StateError&) {
        ++failed_reads_;  // the broker is down: keep watching
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  std::shared_ptr<kafka::KafkaClient> client_;
  kafka::KafkaOffsetStore store_;
  std::vector<kafka::TopicPartition> partitions_;
  std::atomic<bool> stopping_{false};
  MonotonicCheck check_{"broker's committed offsets"};
  int reads_ = 0;
  int failed_reads_ = 0;
  std::vector<Clock::time_point> advances_;
  std::thread thread_;  // last: starts once everything above exists
};

// What the fault thread did.
struct Outage {
  int records_seen_at_kill = 0;
  double restart_seconds = 0;
  Clock::time_point back;  // when the restarted broker served again
};

TEST(BrokerKill, CommittedOffsetsNeverMoveBackAndNoRecordIsLostAcrossBrokerKills) {
  const std::string script = broker_script();
  if (script.empty())
    GTEST_SKIP() << "KAFKA_BROKER_SCRIPT is not set: this test starts (and kills) a broker of its own "
                    "with scripts/kafka/broker.sh";
  const auto started = Clock::now();
  OwnedBroker broker(script, fs::temp_directory_path() / unique_name("processor-broker-kill-commits"));
  const std::string& bootstrap = broker.bootstrap();
  const std::string topic = "commits";
  const std::string group = "committer";
  create_topic(bootstrap, topic, kPartitions);
  {
    Producer producer(bootstrap);
    for (int p = 0; p < kPartitions; ++p) producer.produce(topic, p, kPerPartition, p * kPerPartition);
  }
  std::printf("broker kill (commits): broker %s up and %d records produced in %.1f s\n", bootstrap.c_str(),
              kRecords, seconds_since(started));

  CommittedWatch watch(bootstrap, group, topic);
  auto client = kafka::KafkaClient::create(group_properties(bootstrap, group, "range"));
  auto store = std::make_shared<kafka::KafkaOffsetStore>(client, outage_retries());
  kafka::OffsetManager manager(
      group, nullptr, store, kafka::OffsetCommitStrategy::every_n_events(20),
      kafka::OffsetManagerOptions{std::make_shared<kafka::KafkaBrokerMetadata>(client),
                                  std::chrono::milliseconds(100)});
  kafka::KafkaConsumer consumer(client, manager, GroupMember::options_for(topic));

  std::map<std::pair<int, std::int64_t>, int> times_seen;  // (partition, offset) -> handled
  std::atomic<int> records_seen{0};                        // distinct records handled
  const auto handler = [&](const kafka::ConsumedRecord& record) {
    std::this_thread::sleep_for(kRecordDelay);  // "processing"
    if (++times_seen[{record.partition, record.offset}] == 1) ++records_seen;
  };

  // The faults: a SIGKILL once a third, then two thirds, of the records were handled; each
  // time the broker is down for kDownTime plus its restart.
  std::vector<Outage> outages;
  std::string fault_error;
  std::atomic<bool> faults_done{false};
  std::atomic<bool> abandon{false};
  std::thread faults([&] {
    try {
      for (int kill = 1; kill <= kKills && !abandon; ++kill) {
        while (records_seen < kill * kRecords / (kKills + 1) && !abandon) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        if (abandon) break;
        Outage outage;
        outage.records_seen_at_kill = records_seen;
        broker.kill();
        std::this_thread::sleep_for(kDownTime);
        outage.restart_seconds = broker.restart();
        outage.back = Clock::now();
        outages.push_back(outage);
      }
    } catch (const std::exception& error) {
      fault_error = error.what();
    }
    faults_done = true;
  });

  MonotonicCheck consumer_view("the consumer's committed view");
  std::vector<std::string> poll_errors;  // what poll() threw
  int explicit_commits = 0;
  int failed_explicit_commits = 0;
  std::string first_commit_error;
  std::vector<std::string> unclear_commit_errors;  // not retriable, or not of kind Kafka or Timeout
  auto next_commit = Clock::now();
  const auto deadline = Clock::now() + kDeadline;
  bool finished = false;
  while (Clock::now() < deadline) {
    try {
      consumer.poll(handler);
    } catch (const StateError& error) {
      poll_errors.push_back(std::string(to_string(error.kind())) + ": " + error.what());
      if (error.kind() != ErrorKind::Kafka && error.kind() != ErrorKind::Timeout) break;
    }
    if (Clock::now() >= next_commit) {
      next_commit = Clock::now() + std::chrono::milliseconds(200);
      try {
        ++explicit_commits;
        manager.commit();
      } catch (const StateError& error) {
        if (first_commit_error.empty())
          first_commit_error = std::string(to_string(error.kind())) + ": " + error.what();
        ++failed_explicit_commits;
        // An outage is worth a retry, and must say so.
        if (!error.retriable() || (error.kind() != ErrorKind::Kafka && error.kind() != ErrorKind::Timeout)) {
          unclear_commit_errors.push_back(std::string(to_string(error.kind())) + ": " + error.what());
        }
      }
    }
    std::int64_t committed_sum = 0;
    for (const auto& [tp, info] : manager.get_all_committed()) {
      consumer_view.observe(tp.partition, info.offset);
      committed_sum += info.offset;
    }
    if (faults_done && records_seen == kRecords && committed_sum == kRecords) {
      finished = true;
      break;
    }
  }
  abandon = true;
  faults.join();
  try {
    consumer.close();
  } catch (const StateError& error) {
    ADD_FAILURE() << "closing the consumer failed: " << error.what();
  }
  watch.stop();

  // The broker's committed offsets at the end, from a fresh client of the group.
  std::map<int, std::int64_t> final_committed;
  {
    auto reader = kafka::KafkaClient::create(
        {{"bootstrap.servers", bootstrap}, {"group.id", group}, {"log_level", "3"}});
    for (const auto& [tp, info] :
         kafka::KafkaOffsetStore(reader, fast_retries()).committed(partitions_of(topic))) {
      final_committed[tp.partition] = info.offset;
    }
  }

  int losses = 0;
  int repeats = 0;
  for (int p = 0; p < kPartitions; ++p) {
    for (std::int64_t offset = 0; offset < kPerPartition; ++offset) {
      const auto found = times_seen.find({p, offset});
      if (found == times_seen.end()) {
        ++losses;
      } else {
        repeats += found->second - 1;
      }
    }
  }
  const auto stats = consumer.stats();
  for (std::size_t i = 0; i < outages.size(); ++i) {
    const auto advances = watch.advances();
    const auto resumed =
        std::find_if(advances.begin(), advances.end(), [&](auto t) { return t > outages[i].back; });
    std::printf(
        "broker kill (commits): kill %zu at %d/%d records handled; broker back in %.1f s; first commit seen "
        "%s\n",
        i + 1, outages[i].records_seen_at_kill, kRecords, outages[i].restart_seconds,
        resumed == advances.end()
            ? "never"
            : (std::to_string(std::chrono::duration<double>(*resumed - outages[i].back).count())
                   .substr(0, 4) +
               " s after")
                  .c_str());
  }
  std::printf(
      "broker kill (commits): %d records, %d handled again, %d lost; %llu automatic commits failed, %d of %d "
      "explicit commits failed (first: %s); poll() threw %zu times; broker view read %d times (%d failed); "
      "regressions: broker %d, consumer %d; rebalances: %llu assigned, %llu revoked, %llu lost; total %.1f "
      "s\n",
      kRecords, repeats, losses, static_cast<unsigned long long>(stats.failed_automatic_commits),
      failed_explicit_commits, explicit_commits,
      first_commit_error.empty() ? "-" : first_commit_error.c_str(), poll_errors.size(), watch.reads(),
      watch.failed_reads(), watch.check().regressions(), consumer_view.regressions(),
      static_cast<unsigned long long>(stats.assignments), static_cast<unsigned long long>(stats.revocations),
      static_cast<unsigned long long>(stats.lost), seconds_since(started));
  for (const auto& error : poll_errors)
    std::printf("broker kill (commits): poll() threw %s\n", error.c_str());
  std::fflush(stdout);

  EXPECT_EQ(fault_error, "");
  EXPECT_EQ(outages.size(), static_cast<std::size_t>(kKills)) << "kills done";
  for (const auto& outage : outages)
    EXPECT_LT(outage.records_seen_at_kill, kRecords) << "a kill came after the work";
  EXPECT_TRUE(finished) << "the consumer did not handle and commit every record within " << kDeadline.count()
                        << " s: " << records_seen << " of " << kRecords << " handled";
  EXPECT_EQ(losses, 0);
  EXPECT_EQ(watch.check().regressions(), 0) << watch.check().first_regression();
  EXPECT_EQ(consumer_view.regressions(), 0) << consumer_view.first_regression();
  for (const auto& error : poll_errors) {
    EXPECT_TRUE(error.rfind("Kafka: ", 0) == 0 || error.rfind("Timeout: ", 0) == 0)
        << "poll() threw " << error;
  }
  for (const auto& error : unclear_commit_errors) ADD_FAILURE() << "commit() threw " << error;
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(final_committed[p], kPerPartition) << "the broker's committed offset of partition " << p;
  }
  if (::testing::Test::HasFailure()) broker.keep_directory();
}

}  // namespace
}  // namespace processor::testing
