// StreamProcessor on the real broker: per-key counting with a changelog-backed store, restarts
// that reuse or rebuild local state, aborts, and the options it refuses.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <vector>

#include "kafka_test_support.hpp"
#include "processor/kafka.hpp"
#include "processor/log.hpp"
#include "processor/streams.hpp"
#include "recording_log_sink.hpp"
#include "state_dir_holder_process.hpp"
#include "state_error_of.hpp"
#include "topic_reader.hpp"

#ifndef STATE_DIR_HOLDER_PATH
#error "STATE_DIR_HOLDER_PATH must name the state_dir_holder executable"
#endif

namespace processor::streams {
namespace {

using testing::create_topic;
using testing::Producer;
using testing::read_topic;
using testing::unique_name;

constexpr int kPartitions = 4;
constexpr int kKeys = 100;

class StreamProcessorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty()) GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: no real broker";
    application_ = unique_name("wordcount");
    input_ = application_ + "-input";
    output_ = application_ + "-output";
    create_topic(bootstrap_, input_, kPartitions);
    create_topic(bootstrap_, output_, kPartitions);
    state_dir_ = std::filesystem::temp_directory_path() / unique_name("streams-state");
  }
  void TearDown() override { std::filesystem::remove_all(state_dir_); }

  // `count` records over kKeys keys; a key always goes to the same partition.
  void produce(int count) {
    Producer producer(bootstrap_);
    for (int i = 0; i < count; ++i) {
      const int key = (produced_ + i) % kKeys;
      producer.send(input_, key % kPartitions, "w" + std::to_string(key), "v");
      ++expected_[key];
      ++produced_in_[key % kPartitions];
    }
    produced_ += count;
    producer.flush();
  }

  StreamProcessorOptions options() const {
    StreamProcessorOptions o;
    o.application_id = application_;
    o.input_topic = input_;
    o.stores = {"counts"};
    o.state_dir = state_dir_;
    o.properties = {{"bootstrap.servers", bootstrap_}, {"session.timeout.ms", "6000"}, {"log_level", "3"}};
    o.poll_timeout = std::chrono::milliseconds(20);
    return o;
  }

  // The per-key counting function: count in the store, the new count to the output.
  RecordFunction count_words(std::function<void(const kafka::ConsumedRecord&)> before = {}) const {
    return [this, before](const kafka::ConsumedRecord& record, RecordContext& context) {
      if (before) before(record);
      PartitionStore& counts = context.store(std::size_t{0});
      const auto current = counts.get(record.key);
      const std::string next = std::to_string((current ? std::stoll(*current) : 0) + 1);
      counts.put(record.key, next);
      context.output().send(output_, record.key, next, record.partition);
    };
  }

  // Polls until `records` records were processed in total by this processor, then commits.
  static void process(StreamProcessor& processor, std::uint64_t records) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (processor.stats().records < records) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline)
          << "processed " << processor.stats().records << " of " << records;
      processor.poll();
    }
    ASSERT_TRUE(processor.commit());
  }

  // A read_committed reader of the output sees, for every key, the counts 1..n exactly once.
  void expect_output_exactly_once() const {
    std::map<std::string, std::multiset<long long>> seen;
    for (const auto& record : read_topic(bootstrap_, output_))
      seen[record.key].insert(std::stoll(*record.value));
    ASSERT_EQ(seen.size(), expected_.size());
    for (const auto& [key, count] : expected_) {
      const auto& values = seen["w" + std::to_string(key)];
      ASSERT_EQ(values.size(), static_cast<std::size_t>(count)) << "key w" << key;
      long long next = 1;
      for (const long long value : values) EXPECT_EQ(value, next++) << "key w" << key;
    }
  }

  // The changelog's last value of every key is its count (after the version byte).
  void expect_changelog_counts() const {
    std::map<std::string, std::string> last;
    for (const auto& record : read_topic(bootstrap_, changelog_topic(application_, "counts"))) {
      ASSERT_TRUE(record.value.has_value());
      ASSERT_EQ((*record.value)[0], '\x01');
      last[record.key] = record.value->substr(1);
    }
    ASSERT_EQ(last.size(), expected_.size());
    for (const auto& [key, count] : expected_)
      EXPECT_EQ(last["w" + std::to_string(key)], std::to_string(count));
  }

  void expect_departed_member_fenced(const std::string& successor_client_id);

  // Polls until the group's committed offsets, as the broker holds them, reach the end of every
  // input partition: with aborts, the records processed (stats().records) count replays too.
  void process_to_the_end(StreamProcessor& processor) const {
    kafka::KafkaOffsetStore reader(
        kafka::KafkaClient::create({{"bootstrap.servers", bootstrap_}, {"group.id", application_}}));
    std::vector<kafka::TopicPartition> partitions;
    for (int p = 0; p < kPartitions; ++p) partitions.emplace_back(input_, p);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    auto next_look = std::chrono::steady_clock::now();
    for (;;) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "processed " << processor.stats().records;
      processor.poll();
      if (std::chrono::steady_clock::now() < next_look) continue;
      next_look = std::chrono::steady_clock::now() + std::chrono::milliseconds(500);
      const auto committed = reader.committed(partitions);
      const bool done =
          std::all_of(partitions.begin(), partitions.end(), [&](const kafka::TopicPartition& tp) {
            const auto it = committed.find(tp);
            const auto end = produced_in_.find(tp.partition);
            return it != committed.end() && end != produced_in_.end() && it->second.offset == end->second;
          });
      if (done) return;
    }
  }

  std::string bootstrap_;
  std::string application_;
  std::string input_;
  std::string output_;
  std::filesystem::path state_dir_;
  std::map<int, int> expected_;
  std::map<int, std::int64_t> produced_in_;  // records per input partition
  int produced_ = 0;
};

TEST_F(StreamProcessorTest, CountsEachKeyExactlyOnceWithAChangelogPerInputPartition) {
  produce(2'000);
  {
    StreamProcessor processor(options(), count_words());
    process(processor, 2'000);
    EXPECT_GE(processor.stats().commits, 1u);
    EXPECT_EQ(processor.stats().aborts, 0u);
    EXPECT_EQ(processor.transactional_id().rfind(application_ + "-", 0), 0u);
  }
  expect_output_exactly_once();
  // The offsets committed in the transactions carry their records' leader epoch (KIP-320).
  const auto committed =
      kafka::KafkaOffsetStore(
          kafka::KafkaClient::create({{"bootstrap.servers", bootstrap_}, {"group.id", application_}}))
          .get_all_offsets(application_);
  ASSERT_EQ(committed.size(), static_cast<std::size_t>(kPartitions));
  for (const auto& [tp, info] : committed)
    EXPECT_EQ(info.leader_epoch, std::optional<std::int32_t>(0)) << tp.to_key();
  expect_changelog_counts();
  // The changelog has the input's partitions, and each key's state sits in its input partition.
  for (const auto& record : read_topic(bootstrap_, changelog_topic(application_, "counts"))) {
    EXPECT_EQ(std::stoi(record.key.substr(1)) % kPartitions, record.partition) << record.key;
  }
}

// Issue 25: one properties map went to the consumer, the producer and the restore consumer, so
// the group settings every deployment tunes made librdkafka warn at each start (CONFWARN: "is a
// consumer property and will be ignored by this producer instance"). Each client now takes the
// properties that apply to it. The start's log also says where a partition without a committed
// offset starts, in words and at an offset (never a logical one), and "created" once per
// changelog topic.
TEST_F(StreamProcessorTest, GroupAndProducerPropertiesInTheSharedMapStartEveryClientWithoutAWarning) {
  produce(100);
  testing::RecordingSink recording;
  set_log_sink(recording.sink());
  {
    auto o = options();
    // librdkafka's default log level (6): its configuration warnings (level 4) are logged.
    o.properties = {{"bootstrap.servers", bootstrap_},
                    {"partition.assignment.strategy", "cooperative-sticky"},
                    {"session.timeout.ms", "6000"},
                    {"heartbeat.interval.ms", "500"},
                    {"linger.ms", "5"}};
    o.producer_properties = {{"compression.type", "lz4"}};
    StreamProcessor processor(o, count_words());
    process(processor, 100);
    StreamProcessor second(
        [&] {
          auto other = o;
          other.state_dir = state_dir_ / "second";
          return other;
        }(),
        count_words());
  }
  set_log_sink({});
  int created = 0;
  int from_log_start = 0;
  for (const auto& record : recording.records()) {
    EXPECT_EQ(record.message.find("CONFWARN"), std::string::npos) << record.message;
    EXPECT_EQ(record.message.find("offset -"), std::string::npos) << record.message;
    if (record.message.starts_with("created changelog topic")) ++created;
    if (record.message.find(" has no committed offset (position none, log [0, ") != std::string::npos &&
        record.message.ends_with(": starting at 0")) {
      ++from_log_start;
    }
  }
  EXPECT_EQ(created, 1) << "one changelog topic, created by the first processor";
  EXPECT_EQ(from_log_start, kPartitions);
  expect_output_exactly_once();
}

// A fresh group's partitions are assigned without an offset, and librdkafka looks their committed
// offsets up by itself meanwhile: with none and auto.offset.reset=error, it answers "no previously
// committed offset available" (offset -1001), sometimes only after the processor positioned the
// partition at the start it decided. That answer is not about the position: no moved log is
// reported, and nothing is rewound.
TEST_F(StreamProcessorTest, AFreshGroupsStartReportsNoMovedLogAndRewindsNothing) {
  produce(2'000);
  testing::RecordingSink recording;
  set_log_sink(recording.sink());
  {
    StreamProcessor processor(options(), count_words());
    process(processor, 2'000);
    EXPECT_EQ(processor.stats().aborts, 0u);
  }
  set_log_sink({});
  for (const auto& record : recording.records()) {
    EXPECT_EQ(record.message.find(" has no record at "), std::string::npos) << record.message;
  }
  expect_output_exactly_once();
}

TEST_F(StreamProcessorTest, ARestartReusesTheLocalStateAndReplaysNothing) {
  produce(1'000);
  {
    StreamProcessor processor(options(), count_words());
    process(processor, 1'000);
  }
  produce(1'000);
  {
    StreamProcessor processor(options(), count_words());
    process(processor, 1'000);
    const auto stats = processor.stats();
    EXPECT_EQ(stats.local_state_reused, static_cast<std::uint64_t>(kPartitions));
    EXPECT_EQ(stats.local_state_wiped, 0u);
    EXPECT_EQ(stats.restored_records, 0u);
    EXPECT_EQ(stats.records, 1'000u);
  }
  expect_output_exactly_once();
  expect_changelog_counts();
}

// A departed member's transaction left open on a changelog (the member died mid-transaction):
// its partition's new owner fences the transactional.id that last committed the partition (read
// from the committed offset's metadata), so the coordinator aborts the transaction at once
// instead of after its timeout (60 s here, longer than this test waits), and the departed
// producer can commit nothing after that. With the default client.id the group's description
// tells it is no longer a member (fenced at once); with a client.id of the user's, after the
// transaction has blocked the restoration for 2 s.
void StreamProcessorTest::expect_departed_member_fenced(const std::string& successor_client_id) {
  produce(400);
  std::string departed_id;
  {
    StreamProcessorOptions first = options();
    first.instance_id = "departed";
    StreamProcessor processor(first, count_words());
    process(processor, 400);
    departed_id = processor.transactional_id();
  }
  // The departed member as it would be had it died: a producer of its transactional.id with a
  // changelog record in a transaction that it neither commits nor aborts.
  char error[512];
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  for (const auto& [name, value] : std::map<std::string, std::string>{{"bootstrap.servers", bootstrap_},
                                                                      {"transactional.id", departed_id},
                                                                      {"transaction.timeout.ms", "60000"},
                                                                      {"log_level", "0"}}) {
    ASSERT_EQ(rd_kafka_conf_set(conf, name.c_str(), value.c_str(), error, sizeof error), RD_KAFKA_CONF_OK)
        << error;
  }
  std::unique_ptr<rd_kafka_t, decltype(&rd_kafka_destroy)> zombie(
      rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error), rd_kafka_destroy);
  ASSERT_NE(zombie, nullptr) << error;
  ASSERT_EQ(rd_kafka_init_transactions(zombie.get(), 30'000), nullptr);
  ASSERT_EQ(rd_kafka_begin_transaction(zombie.get()), nullptr);
  const std::string changelog = changelog_topic(application_, "counts");
  const std::string poisoned = std::string("\x01") + "999999";
  ASSERT_EQ(rd_kafka_producev(zombie.get(), RD_KAFKA_V_TOPIC(changelog.c_str()), RD_KAFKA_V_PARTITION(0),
                              RD_KAFKA_V_KEY("w0", 2),
                              RD_KAFKA_V_VALUE(const_cast<char*>(poisoned.data()), poisoned.size()),
                              RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
            RD_KAFKA_RESP_ERR_NO_ERROR);
  ASSERT_EQ(rd_kafka_flush(zombie.get(), 10'000), RD_KAFKA_RESP_ERR_NO_ERROR);

  // Its successor, another member with an empty state directory, restores every partition.
  StreamProcessorOptions second = options();
  second.instance_id = "successor";
  second.state_dir = state_dir_ / "successor";
  if (!successor_client_id.empty()) second.properties["client.id"] = successor_client_id;
  StreamProcessor successor(second, count_words());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (successor.active_partitions().size() < static_cast<std::size_t>(kPartitions)) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline)
        << "the departed member's transaction still blocks the restoration after 30 s";
    successor.poll();
  }
  EXPECT_EQ(successor.stats().departed_fenced, 1u);
  // The departed producer is fenced: its transaction cannot commit.
  std::unique_ptr<rd_kafka_error_t, decltype(&rd_kafka_error_destroy)> refused(
      rd_kafka_commit_transaction(zombie.get(), 10'000), rd_kafka_error_destroy);
  ASSERT_NE(refused, nullptr) << "the departed member's transaction committed after it was fenced";
  EXPECT_TRUE(rd_kafka_error_is_fatal(refused.get())) << rd_kafka_error_string(refused.get());
  EXPECT_EQ(rd_kafka_error_code(refused.get()), RD_KAFKA_RESP_ERR__FENCED)
      << rd_kafka_error_string(refused.get());

  produce(400);
  process(successor, 400);
  successor.close();
  expect_output_exactly_once();
  expect_changelog_counts();  // the poisoned count is not among them
}

TEST_F(StreamProcessorTest, TheNewOwnerFencesADepartedMembersOpenTransactionAndTheZombieCannotCommit) {
  expect_departed_member_fenced("");
}

TEST_F(StreamProcessorTest, WithTheUsersClientIdTheDepartedMemberIsFencedAfterTwoSeconds) {
  expect_departed_member_fenced("my-service");
}

// A fenced producer is replaced (its coordinator aborted a transaction it timed out), unless
// another member runs under the same transactional.id: two instances given one instance_id would
// fence each other for ever. One of them fails, naming the id; the other processes everything.
TEST_F(StreamProcessorTest, TwoMembersUnderOneTransactionalIdEndWithAClearErrorNotAFencingLoop) {
  produce(400);
  StreamProcessorOptions first = options();
  first.instance_id = "twin";
  StreamProcessorOptions second = first;
  second.state_dir = state_dir_ / "second";
  std::vector<std::unique_ptr<StreamProcessor>> twins;
  twins.push_back(std::make_unique<StreamProcessor>(first, count_words()));
  process(*twins[0], 400);
  twins.push_back(std::make_unique<StreamProcessor>(second, count_words()));  // fences the first
  produce(400);
  std::optional<StateError> failure;
  std::size_t failed = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!failure && std::chrono::steady_clock::now() < deadline) {
    for (std::size_t i = 0; i < twins.size() && !failure; ++i) {
      try {
        twins[i]->poll();
      } catch (const StateError& error) {
        failure = error;
        failed = i;
      }
    }
  }
  ASSERT_TRUE(failure) << "neither twin failed: " << twins[0]->stats().producers_replaced << " and "
                       << twins[1]->stats().producers_replaced << " producers replaced";
  EXPECT_NE(std::string(failure->what()).find("runs as transactional.id '" + application_ + "-twin' too"),
            std::string::npos)
      << failure->what();
  twins[failed].reset();
  StreamProcessor& survivor = *twins[1 - failed];
  // The survivor takes every partition over and processes until nothing is left.
  auto quiet_since = std::chrono::steady_clock::now();
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (survivor.active_partitions().size() < static_cast<std::size_t>(kPartitions) ||
         std::chrono::steady_clock::now() - quiet_since < std::chrono::seconds(3)) {
    ASSERT_LT(std::chrono::steady_clock::now(), end) << "the survivor did not take every partition over";
    if (survivor.poll() > 0) quiet_since = std::chrono::steady_clock::now();
  }
  ASSERT_TRUE(survivor.commit());
  survivor.close();
  expect_output_exactly_once();
}

TEST_F(StreamProcessorTest, ALostStateDirectoryIsRestoredFromTheChangelog) {
  produce(1'000);
  {
    StreamProcessor processor(options(), count_words());
    process(processor, 1'000);
  }
  std::filesystem::remove_all(state_dir_);
  produce(1'000);
  std::vector<RestoreProgress> done;
  LatencyHistogram restore_duration;
  auto with_progress = options();
  with_progress.on_restore_progress = [&](const RestoreProgress& progress) {
    if (progress.done) done.push_back(progress);
  };
  {
    StreamProcessor processor(with_progress, count_words());
    process(processor, 1'000);
    EXPECT_EQ(processor.stats().restorations, static_cast<std::uint64_t>(kPartitions));
    EXPECT_EQ(processor.stats().restored_records, static_cast<std::uint64_t>(kKeys));
    restore_duration = processor.stats().restore_duration;
  }
  ASSERT_EQ(done.size(), static_cast<std::size_t>(kPartitions));
  std::uint64_t restored = 0;
  std::chrono::nanoseconds restoring{0};
  for (const auto& progress : done) {
    EXPECT_EQ(progress.store, "counts");
    EXPECT_EQ(progress.position, progress.end_offset);
    restored += progress.records;
    restoring += progress.elapsed;
  }
  // Each completed restoration is timed as its last report says (the user's callback still got it).
  EXPECT_EQ(restore_duration.count(), static_cast<std::uint64_t>(kPartitions));
  EXPECT_EQ(restore_duration.sum(), restoring);
  EXPECT_EQ(restored, static_cast<std::uint64_t>(kKeys));
  expect_output_exactly_once();
  expect_changelog_counts();
}

// The poll() whose rebalance assigns partitions to restore returns once the assignment is served,
// not at its poll_timeout: the partitions stay paused while they restore, so nothing else would
// end its wait, and the restorations start reading at the next poll() instead of a poll_timeout
// later (bench_streams' restore of 1M keys began ~100 ms late with the default 100 ms).
TEST_F(StreamProcessorTest, APollThatAssignsPartitionsToRestoreReturnsWithoutWaitingOutItsTimeout) {
  produce(1'000);
  {
    StreamProcessor processor(options(), count_words());
    process(processor, 1'000);
  }
  std::filesystem::remove_all(state_dir_);
  auto patient = options();
  patient.poll_timeout = std::chrono::seconds(60);
  StreamProcessor processor(patient, count_words());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(90);
  for (;;) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "no partition was assigned";
    const auto started = std::chrono::steady_clock::now();
    processor.poll();
    const auto took = std::chrono::steady_clock::now() - started;
    if (processor.stats().restorations == 0 && processor.restoring_partitions().empty()) continue;
    // Joining takes a few seconds; a wait out of its timeout, 60.
    EXPECT_LT(took, std::chrono::seconds(30))
        << "the poll() that assigned the partitions took "
        << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
    break;
  }
  // The restorations it started read the changelogs from the next poll() on.
  EXPECT_EQ(processor.restoring_partitions().size(), static_cast<std::size_t>(kPartitions));
}

TEST_F(StreamProcessorTest, AFailingRecordFunctionAbortsTheTransactionAndTheRecordIsTriedAgain) {
  produce(2'000);
  int calls = 0;
  {
    // A transient failure: the default failure policy tries the record again (after the records
    // of the aborted transaction before it), and poll() never throws.
    StreamProcessor processor(options(), count_words([&](const kafka::ConsumedRecord&) {
                                if (++calls == 700) throw std::runtime_error("injected failure");
                              }));
    process_to_the_end(processor);
    EXPECT_EQ(processor.stats().aborts, 1u);
    EXPECT_EQ(processor.stats().failed_attempts, 1u);
    EXPECT_TRUE(processor.stats().failed_records.empty());
  }
  EXPECT_GT(calls, 2'000);  // the aborted transaction's records were processed again
  expect_output_exactly_once();
  expect_changelog_counts();
}

// A store that fails under the function is the processor's failure: even under the skip policy,
// nothing is skipped for it, and poll() throws it.
TEST_F(StreamProcessorTest, AStoreFailureIsNeverSkippedByTheFailurePolicy) {
  produce(200);
  auto o = options();
  o.failure.action = kafka::FailureAction::Skip;
  int calls = 0;
  StreamProcessor processor(o, count_words([&](const kafka::ConsumedRecord&) {
                              if (++calls == 50) throw StateError(ErrorKind::Storage, "the disk is gone");
                            }));
  std::optional<StateError> thrown;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!thrown && std::chrono::steady_clock::now() < deadline) {
    try {
      processor.poll();
    } catch (const StateError& error) {
      thrown = error;
    }
  }
  ASSERT_TRUE(thrown) << "poll() never threw the store's failure";
  EXPECT_EQ(thrown->kind(), ErrorKind::Storage);
  EXPECT_STREQ(thrown->what(), "the disk is gone");
  EXPECT_EQ(processor.stats().failed_attempts, 0u);
  EXPECT_TRUE(processor.stats().failed_records.empty());
}

// ---- Bad input: a clear StateError, and nothing created or written.

bool topic_exists(const std::string& bootstrap, const std::string& topic) {
  Producer client(bootstrap);
  const rd_kafka_metadata_t* metadata = nullptr;
  if (rd_kafka_metadata(client.handle(), 1, nullptr, &metadata, 10'000) != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw std::runtime_error("no metadata");
  }
  bool found = false;
  for (int i = 0; i < metadata->topic_cnt; ++i) found = found || topic == metadata->topics[i].topic;
  rd_kafka_metadata_destroy(metadata);
  return found;
}

TEST_F(StreamProcessorTest, RefusesAMissingApplicationIdAndCreatesNothing) {
  auto o = options();
  o.application_id.clear();
  const auto error = testing::error_of([&] { StreamProcessor(o, count_words()); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::mentions(error, "application_id"));
  EXPECT_FALSE(std::filesystem::exists(state_dir_));
}

TEST_F(StreamProcessorTest, RefusesAStoreNameThatIsNotAValidTopicName) {
  auto o = options();
  o.stores = {"counts", "bad store"};
  const auto error = testing::error_of([&] { StreamProcessor(o, count_words()); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::mentions(error, "'bad store'"));
  EXPECT_FALSE(std::filesystem::exists(state_dir_));
  EXPECT_FALSE(topic_exists(bootstrap_, changelog_topic(application_, "counts")));
}

TEST_F(StreamProcessorTest, RefusesAChangelogWithAnotherPartitionCountAndCreatesNoOtherChangelog) {
  create_topic(bootstrap_, changelog_topic(application_, "counts"), kPartitions / 2);
  auto o = options();
  o.stores = {"sums", "counts"};
  const auto error = testing::error_of([&] { StreamProcessor(o, count_words()); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::mentions(error, "'" + changelog_topic(application_, "counts") + "' has 2 partitions"));
  EXPECT_TRUE(testing::mentions(error, "has 4"));
  EXPECT_FALSE(topic_exists(bootstrap_, changelog_topic(application_, "sums")));
}

TEST_F(StreamProcessorTest, RefusesAStateDirectoryLockedByAnotherProcessAndCreatesNothing) {
  testing::HolderProcess holder(STATE_DIR_HOLDER_PATH, state_dir_);
  ASSERT_EQ(holder.first_line(), "opened");
  const auto error = testing::error_of([&] { StreamProcessor(options(), count_words()); });
  EXPECT_EQ(error.kind(), ErrorKind::Storage);
  EXPECT_TRUE(testing::mentions(error, state_dir_.string()));
  EXPECT_TRUE(testing::mentions(error, "is locked by another process"));
  EXPECT_FALSE(topic_exists(bootstrap_, changelog_topic(application_, "counts")));
}

TEST_F(StreamProcessorTest, RefusesAnInputTopicThatDoesNotExist) {
  auto o = options();
  o.input_topic = application_ + "-missing";
  const auto error = testing::error_of([&] { StreamProcessor(o, count_words()); });
  EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
  EXPECT_TRUE(testing::mentions(error, "'" + o.input_topic + "' does not exist"));
  EXPECT_FALSE(topic_exists(bootstrap_, changelog_topic(application_, "counts")));
}

TEST_F(StreamProcessorTest, RefusesADeadLetterTopicThatDoesNotExistAndCreatesNothing) {
  auto o = options();
  o.failure.action = kafka::FailureAction::DeadLetter;
  o.failure.dead_letter_topic = application_ + "-dlq";
  const auto error = testing::error_of([&] { StreamProcessor(o, count_words()); });
  EXPECT_EQ(error.kind(), ErrorKind::Kafka);
  EXPECT_TRUE(
      testing::mentions(error, "dead-letter topic '" + o.failure.dead_letter_topic + "' does not exist"))
      << error.what();
  EXPECT_FALSE(topic_exists(bootstrap_, o.failure.dead_letter_topic));
  EXPECT_FALSE(topic_exists(bootstrap_, changelog_topic(application_, "counts")));
  EXPECT_FALSE(std::filesystem::exists(state_dir_));
}

}  // namespace
}  // namespace processor::streams
