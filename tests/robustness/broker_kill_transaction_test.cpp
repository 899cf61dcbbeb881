// Real-broker faults, case 2: the broker is SIGKILLed in the middle of a transaction of a
// consume-transform-produce application (TransactionalProducer, offsets sent to the
// transaction), and restarted on the same data and ports, twice.
//
// The application does what TransactionalProducer's contract asks: transactions of up to 50
// records; when a transaction fails (the commit, the send of offsets, a poll, or the creation of
// the producer throws StateError) it aborts, and when the abort fails too it drops the producer
// (a new one with the same transactional.id fences it, and the coordinator finishes its
// transaction); then KafkaConsumer::rewind_to_committed() and on. A transaction during which
// partitions were revoked or lost is aborted too: its offsets were dropped with the partitions.
//
// What a user can observe, and what must hold: a read_committed reader of the output sees the
// result of every input record exactly once (none twice, none lost), no record of an aborted or
// fenced transaction, and the group's committed offsets end at the input's log end.
//
// Kafka acknowledges before fsync: a SIGKILL of the process leaves its writes in the page cache
// (see broker_kill_commit_test.cpp).

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
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
constexpr int kPerPartition = 300;
constexpr int kRecords = kPartitions * kPerPartition;
constexpr int kBatch = 50;
constexpr int kKills = 2;
constexpr auto kDownTime = std::chrono::seconds(1);
constexpr auto kProducerTimeout = std::chrono::seconds(10);  // of each transactional call
constexpr auto kDeadline = std::chrono::seconds(150);

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// One instance of the transforming application.
struct Transformer {
  Transformer(const std::string& bootstrap, const std::string& group, const std::string& input)
      : client(kafka::KafkaClient::create(group_properties(bootstrap, group, "range"))),
        store(std::make_shared<kafka::KafkaOffsetStore>(client, fast_retries())),
        manager(group, nullptr, store, kafka::OffsetCommitStrategy::manual()),
        consumer(client, manager, options(input)) {}

  kafka::KafkaConsumerOptions options(const std::string& input) {
    kafka::KafkaConsumerOptions consumer_options;
    consumer_options.topics = {input};
    consumer_options.poll_timeout = std::chrono::milliseconds(50);
    consumer_options.commit_on_revoke = false;  // offsets only ever move inside a transaction
    consumer_options.on_revoked = [this](const auto&) { rebalanced = true; };
    consumer_options.on_lost = [this](const auto&) { rebalanced = true; };
    return consumer_options;
  }

  std::int64_t committed_sum() const {
    std::int64_t sum = 0;
    for (const auto& [tp, info] : manager.get_all_committed()) sum += info.offset;
    return sum;
  }

  std::shared_ptr<kafka::KafkaClient> client;
  std::shared_ptr<kafka::KafkaOffsetStore> store;
  kafka::OffsetManager manager;
  bool rebalanced = false;  // partitions revoked or lost since the transaction began
  kafka::KafkaConsumer consumer;
  std::unique_ptr<kafka::TransactionalProducer> producer;  // null after a failed abort
};

TEST(BrokerKill, TransactionalOutputIsExactlyOnceAcrossBrokerKillsMidTransaction) {
  const std::string script = broker_script();
  if (script.empty())
    GTEST_SKIP() << "KAFKA_BROKER_SCRIPT is not set: this test starts (and kills) a broker of its own "
                    "with scripts/kafka/broker.sh";
  const auto started = Clock::now();
  OwnedBroker broker(script, fs::temp_directory_path() / unique_name("processor-broker-kill-transactions"));
  const std::string& bootstrap = broker.bootstrap();
  const std::string input = "tx-in";
  const std::string output = "tx-out";
  create_topic(bootstrap, input, kPartitions);
  create_topic(bootstrap, output, kPartitions);
  {
    Producer producer(bootstrap);
    for (int p = 0; p < kPartitions; ++p)
      producer.produce(input, p, kPerPartition, p * kPerPartition);  // unique values
  }
  std::printf("broker kill (transactions): broker %s up and %d records produced in %.1f s\n",
              bootstrap.c_str(), kRecords, seconds_since(started));

  const kafka::KafkaProperties producer_properties{
      {"bootstrap.servers", bootstrap}, {"transactional.id", "tx-app"}, {"log_level", "3"}};
  Transformer app(bootstrap, "tx-group", input);

  int committed_transactions = 0;
  int failed_transactions = 0;
  int rebalanced_transactions = 0;
  int failed_aborts = 0;
  int producers_created = 0;
  int processed = 0;
  std::vector<std::string> failures;
  std::vector<std::string> kill_outcomes;  // what became of each transaction the broker died in
  int kills = 0;
  std::atomic<bool> restart_done{true};
  std::string restart_error;
  std::vector<double> restart_seconds;
  std::thread restarter;
  int commits_since_back = 0;

  auto recover = [&](const std::string& why) {
    ++failed_transactions;
    failures.push_back(why);
    if (app.producer) {
      try {
        app.producer->abort();
      } catch (const StateError& error) {
        ++failed_aborts;
        failures.push_back(std::string("abort: ") + error.what());
        app.producer.reset();  // the next transaction makes a new one, which fences this one
      }
    }
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    for (;;) {
      try {
        app.consumer.rewind_to_committed();
        return;
      } catch (const StateError& error) {
        if (Clock::now() > deadline) throw;
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
      }
    }
  };

  const auto deadline = Clock::now() + kDeadline;
  while (app.committed_sum() < kRecords && Clock::now() < deadline) {
    // The first kill lands in the 4th transaction, the second in the 3rd committed after the
    // broker came back; each after half of the transaction's records were produced.
    const bool kill_in_this = kills < kKills && restart_done &&
                              (kills == 0 ? committed_transactions >= 3 : commits_since_back >= 2);
    bool killed_in_this = false;
    try {
      if (!app.producer) {
        ++producers_created;
        app.producer = std::make_unique<kafka::TransactionalProducer>(producer_properties, kProducerTimeout);
      }
      app.producer->begin();
      app.rebalanced = false;
      int handled = 0;
      int idle_polls = 0;
      const auto transaction_deadline = Clock::now() + std::chrono::seconds(20);
      while (handled < kBatch && Clock::now() < transaction_deadline && !(handled > 0 && idle_polls >= 20)) {
        const std::size_t polled = app.consumer.poll([&](const kafka::ConsumedRecord& record) {
          app.producer->produce(output, record.key, "out-" + std::string(record.value));
          ++handled;
          if (kill_in_this && !killed_in_this && handled == kBatch / 2) {
            broker.kill();
            killed_in_this = true;
            ++kills;
            restart_done = false;
            if (restarter.joinable()) restarter.join();
            restarter = std::thread([&] {
              try {
                std::this_thread::sleep_for(kDownTime);
                restart_seconds.push_back(broker.restart());
              } catch (const std::exception& error) {
                restart_error = error.what();
              }
              restart_done = true;
            });
          }
          if (handled == kBatch) app.consumer.stop();
        });
        idle_polls = polled == 0 ? idle_polls + 1 : 0;
      }
      processed += handled;
      if (app.rebalanced) {
        ++rebalanced_transactions;
        recover("partitions were revoked or lost during the transaction");
        if (killed_in_this) kill_outcomes.push_back("aborted after a rebalance");
        continue;
      }
      app.producer->commit(*app.client, app.manager);
      ++committed_transactions;
      if (kills > 0 && restart_done) ++commits_since_back;
      if (kills > 0 && !restart_done) commits_since_back = 0;
      if (killed_in_this) kill_outcomes.push_back("committed after the broker came back");
    } catch (const StateError& error) {
      if (killed_in_this)
        kill_outcomes.push_back(std::string("failed, aborted and retried: ") + error.what());
      recover(std::string(to_string(error.kind())) + ": " + error.what());
    }
  }
  if (restarter.joinable()) restarter.join();

  // A read_committed reader of the output.
  auto reader_client = kafka::KafkaClient::create({{"bootstrap.servers", bootstrap},
                                                   {"group.id", "tx-reader"},
                                                   {"isolation.level", "read_committed"},
                                                   {"log_level", "3"}});
  kafka::OffsetManager reader_manager("tx-reader", nullptr, std::make_shared<kafka::InMemoryOffsetStore>(),
                                      kafka::OffsetCommitStrategy::manual());
  kafka::KafkaConsumerOptions reader_options;
  reader_options.topics = {output};
  reader_options.poll_timeout = std::chrono::milliseconds(100);
  kafka::KafkaConsumer reader(reader_client, reader_manager, reader_options);
  std::map<std::string, int> seen;
  int read = 0;
  const auto note = [&](const kafka::ConsumedRecord& record) {
    ++seen[std::string(record.value)];
    ++read;
  };
  const auto read_deadline = Clock::now() + std::chrono::seconds(30);
  while (static_cast<int>(seen.size()) < kRecords && Clock::now() < read_deadline) reader.poll(note);
  for (int i = 0; i < 10; ++i) reader.poll(note);  // duplicates that would come after the last new value

  int lost = 0;
  int twice = 0;
  std::string first_difference;
  for (int value = 0; value < kRecords; ++value) {
    const auto found = seen.find("out-value-" + std::to_string(value));
    const int times = found == seen.end() ? 0 : found->second;
    if (times == 0) ++lost;
    if (times > 1) twice += times - 1;
    if (times != 1 && first_difference.empty()) {
      first_difference = "out-value-" + std::to_string(value) + " seen " + std::to_string(times) + " times";
    }
  }
  const int unexpected = read - (kRecords - lost) - twice;  // values that no input record gives
  std::map<int, std::int64_t> final_committed;
  for (const auto& [tp, info] : app.store->committed({{input, 0}, {input, 1}, {input, 2}})) {
    final_committed[tp.partition] = info.offset;
  }

  for (std::size_t i = 0; i < kill_outcomes.size(); ++i) {
    std::printf("broker kill (transactions): kill %zu, %d records into an open transaction: %s\n", i + 1,
                kBatch / 2, kill_outcomes[i].c_str());
  }
  for (std::size_t i = 0; i < restart_seconds.size(); ++i) {
    std::printf("broker kill (transactions): restart %zu served after %.1f s\n", i + 1, restart_seconds[i]);
  }
  for (const auto& failure : failures)
    std::printf("broker kill (transactions): failure: %s\n", failure.c_str());
  std::printf(
      "broker kill (transactions): %d input records, %d processed; transactions: %d committed, %d failed "
      "(%d after a rebalance), %d aborts failed, %d producers created after the first; read_committed "
      "output: %d records, %d lost, %d twice, %d unexpected; total %.1f s\n",
      kRecords, processed, committed_transactions, failed_transactions, rebalanced_transactions,
      failed_aborts, producers_created - 1, read, lost, twice, unexpected, seconds_since(started));
  std::fflush(stdout);

  EXPECT_EQ(restart_error, "");
  EXPECT_EQ(kills, kKills);
  EXPECT_EQ(restart_seconds.size(), static_cast<std::size_t>(kKills));
  EXPECT_EQ(app.committed_sum(), kRecords)
      << "the application did not finish within " << kDeadline.count() << " s";
  EXPECT_EQ(lost, 0) << first_difference;
  EXPECT_EQ(twice, 0) << first_difference;
  EXPECT_EQ(unexpected, 0);
  for (int p = 0; p < kPartitions; ++p) {
    EXPECT_EQ(final_committed[p], kPerPartition) << "the broker's committed offset of partition " << p;
  }
  if (::testing::Test::HasFailure()) broker.keep_directory();
}

}  // namespace
}  // namespace processor::testing
