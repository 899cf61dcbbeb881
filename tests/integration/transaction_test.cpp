// Consume-transform-produce with offsets in the producer's transaction, on the real broker.

#include <gtest/gtest.h>

#include <map>

#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"

namespace processor::kafka {
namespace {

using testing::create_topic;
using testing::group_properties;
using testing::Producer;
using testing::unique_name;

// One instance of the transforming application: a consumer of the input and a transactional
// producer of the output, committing every `batch` records.
struct Transformer {
  Transformer(const std::string& bootstrap, const std::string& group, const std::string& input,
              const std::string& transactional_id)
      : client(KafkaClient::create(group_properties(bootstrap, group, "range"))),
        store(std::make_shared<KafkaOffsetStore>(client)),
        manager(group, nullptr, store, OffsetCommitStrategy::manual()),
        producer(
            {{"bootstrap.servers", bootstrap}, {"transactional.id", transactional_id}, {"log_level", "3"}}),
        consumer(client, manager, options(input)) {}

  static KafkaConsumerOptions options(const std::string& input) {
    KafkaConsumerOptions consumer_options;
    consumer_options.topics = {input};
    consumer_options.poll_timeout = std::chrono::milliseconds(50);
    consumer_options.commit_on_revoke = false;  // offsets only ever move inside a transaction
    return consumer_options;
  }

  // Processes up to `limit` records in one transaction; commits it unless `abort` is set.
  int run_transaction(const std::string& output, int limit, bool abort) {
    producer.begin();
    int handled = 0;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (handled < limit && std::chrono::steady_clock::now() < deadline) {
      consumer.poll([&](const ConsumedRecord& r) {
        producer.produce(output, r.key, "out-" + std::string(r.value));
        if (++handled == limit) consumer.stop();
      });
    }
    if (abort) {
      producer.abort();
      consumer.rewind_to_committed();
    } else {
      producer.commit(*client, manager);
    }
    return handled;
  }

  std::shared_ptr<KafkaClient> client;
  std::shared_ptr<KafkaOffsetStore> store;
  OffsetManager manager;
  TransactionalProducer producer;
  KafkaConsumer consumer;
};

TEST(Transactions, OutputIsExactlyOnceAcrossAnAbortAndAProducerRestart) {
  const std::string bootstrap = testing::real_broker();
  if (bootstrap.empty())
    GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
  const std::string input = unique_name("tx-in");
  const std::string output = unique_name("tx-out");
  const std::string group = unique_name("tx-group");
  const std::string transactional_id = unique_name("tx-app");
  create_topic(bootstrap, input, 3);
  create_topic(bootstrap, output, 3);
  {
    Producer producer(bootstrap);
    for (int p = 0; p < 3; ++p) producer.produce(input, p, 100, p * 100);  // values 0..299, unique
  }

  int processed = 0;
  {
    auto first = std::make_unique<Transformer>(bootstrap, group, input, transactional_id);
    processed += first->run_transaction(output, 60, false);
    processed += first->run_transaction(output, 40, true);  // injected abort: redone below
    processed += first->run_transaction(output, 50, false);
    // The process "dies" mid-transaction: a new instance with the same transactional.id fences
    // it, and its open transaction is aborted by the coordinator.
    first->producer.begin();
    first->consumer.poll([&](const ConsumedRecord& r) { first->producer.produce(output, r.key, "zombie"); });
    auto second_producer = std::make_unique<TransactionalProducer>(KafkaProperties{
        {"bootstrap.servers", bootstrap}, {"transactional.id", transactional_id}, {"log_level", "3"}});
    second_producer.reset();
    first.reset();  // its consumer leaves the group without committing anything
  }
  Transformer second(bootstrap, group, input, transactional_id);
  while (true) {
    const int handled = second.run_transaction(output, 100, false);
    processed += handled;
    std::int64_t committed = 0;
    for (const auto& [tp, info] : second.store->committed({{input, 0}, {input, 1}, {input, 2}}))
      committed += info.offset;
    if (committed == 300) break;
    ASSERT_LT(processed, 2000) << "no progress";
  }

  // A read_committed reader of the output sees every input value exactly once.
  auto reader_client = KafkaClient::create({{"bootstrap.servers", bootstrap},
                                            {"group.id", unique_name("tx-reader")},
                                            {"isolation.level", "read_committed"}});
  OffsetManager reader_manager(reader_client->group_id(), nullptr, std::make_shared<InMemoryOffsetStore>(),
                               OffsetCommitStrategy::manual());
  KafkaConsumerOptions reader_options;
  reader_options.topics = {output};
  reader_options.poll_timeout = std::chrono::milliseconds(100);
  KafkaConsumer reader(reader_client, reader_manager, reader_options);
  std::map<std::string, int> seen;
  int zombies = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (seen.size() < 300 && std::chrono::steady_clock::now() < deadline) {
    reader.poll([&](const ConsumedRecord& r) {
      if (r.value == "zombie")
        ++zombies;
      else
        ++seen[std::string(r.value)];
    });
  }
  // Drain a little longer to catch duplicates that would arrive after the 300th value.
  for (int i = 0; i < 10; ++i) {
    reader.poll([&](const ConsumedRecord& r) {
      if (r.value == "zombie")
        ++zombies;
      else
        ++seen[std::string(r.value)];
    });
  }
  EXPECT_EQ(zombies, 0);
  ASSERT_EQ(seen.size(), 300u);
  for (int value = 0; value < 300; ++value) {
    EXPECT_EQ(seen["out-value-" + std::to_string(value)], 1) << "value " << value;
  }
  EXPECT_GT(processed, 300);  // the aborted and fenced records were processed twice, output once
  // The group's committed offsets match the output: every input record, no more.
  for (const auto& [tp, info] : second.store->committed({{input, 0}, {input, 1}, {input, 2}})) {
    EXPECT_EQ(info.offset, 100) << tp;
  }
}

}  // namespace
}  // namespace processor::kafka
