// `offsetctl state` verbs that also ask the cluster (--bootstrap-server), on the real broker:
// describe with LOG-END-OFFSET and LAG, and diff, the restore journal against the group's
// committed offsets. Skipped without KAFKA_BOOTSTRAP, as every real-broker test.

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "kafka_test_support.hpp"
#include "offsetctl_process.hpp"
#include "processor/kafka.hpp"
#include "processor/state.hpp"

namespace processor::kafka {
namespace {

namespace fs = std::filesystem;
using processor::testing::unique_name;

// A cell of kafka-consumer-groups' tables: left-aligned to `width`, one space after.
std::string cell(const std::string& text, std::size_t width) {
  return text + std::string(std::max(width, text.size()) - text.size() + 1, ' ');
}

class OffsetctlStateOnBroker : public ::testing::Test {
 protected:
  void SetUp() override {
    bootstrap_ = testing::real_broker();
    if (bootstrap_.empty())
      GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
    topic_ = unique_name("offsetctl-state");
    group_ = unique_name("offsetctl-state-group");
    dir_ = fs::temp_directory_path() / unique_name("offsetctl-state-dir");
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  testing::OffsetctlResult run(std::vector<std::string> args) {
    args.insert(args.begin(), {"state", "--state-dir", dir_.string()});
    return testing::run_offsetctl(OFFSETCTL_PATH, args);
  }

  std::string bootstrap_;
  std::string topic_;
  std::string group_;
  fs::path dir_;
};

TEST_F(OffsetctlStateOnBroker, DescribeShowsLogEndAndLagNeverNegativeAndADashWhereUnknown) {
  testing::create_topic(bootstrap_, topic_, 2);
  {
    testing::Producer producer(bootstrap_);
    producer.produce(topic_, 0, 10);
    producer.produce(topic_, 1, 2);
  }
  {
    auto backend = std::make_shared<state::RocksDbStateBackend>(dir_);
    OffsetManager manager(group_, backend, std::make_shared<StateBackendOffsetStore>(backend),
                          OffsetCommitStrategy::manual());
    manager.update_offset(topic_, 0, 3);
    manager.update_offset(topic_, 1, 5);  // past the log end: lag 0, never -3
    manager.update_offset(topic_, 7, 1);  // a partition the topic does not have
    manager.commit();
  }
  const auto result = run({"describe", "--group", group_, "--bootstrap-server", bootstrap_});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  const std::size_t group_width = std::max<std::size_t>(15, group_.size());
  const std::size_t topic_width = std::max<std::size_t>(15, topic_.size());
  const auto row = [&](const std::string& group, const std::string& topic, const std::string& partition,
                       const std::string& current, const std::string& end, const std::string& lag) {
    return cell(group, group_width) + cell(topic, topic_width) + cell(partition, 10) + cell(current, 15) +
           cell(end, 15) + lag + "\n";
  };
  EXPECT_EQ(result.out, row("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG") +
                            row(group_, topic_, "0", "3", "10", "7") +
                            row(group_, topic_, "1", "5", "2", "0") +
                            row(group_, topic_, "7", "1", "-", "-"));
}

TEST_F(OffsetctlStateOnBroker, DiffReportsEachPartitionAsTheRestoreJournalSeesIt) {
  testing::create_topic(bootstrap_, topic_, 4);
  {
    auto backend = std::make_shared<state::RocksDbStateBackend>(dir_);
    OffsetManager manager(group_, backend, std::make_shared<StateBackendOffsetStore>(backend),
                          OffsetCommitStrategy::manual());
    manager.update_offset(topic_, 0, 3);
    manager.update_offset(topic_, 1, 4);
    manager.update_offset(topic_, 2, 5);
    manager.checkpoint(1);
    manager.update_offset(topic_, 0, 6);
    manager.update_offset(topic_, 1, 8);
    manager.update_offset(topic_, 2, 9);
    manager.update_offset(topic_, 3, 2);
    manager.checkpoint(2);
  }
  {
    // The cluster: partition 0 at checkpoint 2 (ours), 1 at checkpoint 1 (the store is behind),
    // 2 moved by someone else, 3 never committed.
    KafkaOffsetStore cluster(KafkaClient::create(testing::group_properties(bootstrap_, group_)));
    const std::vector<PartitionOffset> committed = {{TopicPartition(topic_, 0), OffsetInfo(6)},
                                                    {TopicPartition(topic_, 1), OffsetInfo(4)},
                                                    {TopicPartition(topic_, 2), OffsetInfo(7)}};
    cluster.store_offsets(group_, committed);
  }
  const auto latest = run({"diff", "--group", group_, "--bootstrap-server", bootstrap_});
  ASSERT_EQ(latest.exit_code, 0) << latest.err;
  const auto row = [&](const std::string& partition, const std::string& checkpoint,
                       const std::string& committed, const std::string& status) {
    return cell(topic_, 15) + cell(partition, 10) + cell(checkpoint, 17) + cell(committed, 16) + status +
           "\n";
  };
  const auto body = [](const std::string& out) { return out.substr(out.find('\n', out.find('\n') + 1) + 1); };
  EXPECT_EQ(body(latest.out), row("0", "6", "6", "ours") + row("1", "8", "4", "store behind") +
                                  row("2", "9", "7", "external move") + row("3", "2", "-", "no offset"))
      << latest.out;

  const auto first = run({"diff", "--group", group_, "--bootstrap-server", bootstrap_, "--checkpoint", "1"});
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_EQ(body(first.out), row("0", "3", "6", "store ahead") + row("1", "4", "4", "ours") +
                                 row("2", "5", "7", "external move"))
      << first.out;
}

TEST_F(OffsetctlStateOnBroker, ResetToEarliestAndLatestAndClampsIntoTheLogRange) {
  testing::create_topic(bootstrap_, topic_, 2);
  {
    testing::Producer producer(bootstrap_);
    producer.produce(topic_, 0, 10);
    producer.produce(topic_, 1, 4);
  }
  {
    auto backend = std::make_shared<state::RocksDbStateBackend>(dir_);
    OffsetManager manager(group_, backend, std::make_shared<StateBackendOffsetStore>(backend),
                          OffsetCommitStrategy::manual());
    manager.update_offset(topic_, 0, 3);
    manager.update_offset(topic_, 1, 2);
    manager.commit();
  }
  const auto stored = [&] {
    auto backend =
        std::make_shared<state::RocksDbStateBackend>(dir_, state::RocksDbOptions{.read_only = true});
    StateBackendOffsetStore store(backend);
    return std::to_string(store.get_offset(group_, TopicPartition(topic_, 0))->offset) + " " +
           std::to_string(store.get_offset(group_, TopicPartition(topic_, 1))->offset);
  };
  const auto reset = [&](const std::string& spec, const std::vector<std::string>& value) {
    std::vector<std::string> args = {"reset", "--group", group_, "--all-topics", spec};
    args.insert(args.end(), value.begin(), value.end());
    args.insert(args.end(), {"--bootstrap-server", bootstrap_, "--execute"});
    const auto result = run(args);
    EXPECT_EQ(result.exit_code, 0) << spec << ": " << result.err;
  };
  reset("--to-latest", {});
  EXPECT_EQ(stored(), "10 4");
  reset("--to-earliest", {});
  EXPECT_EQ(stored(), "0 0");
  reset("--to-offset", {"7"});
  EXPECT_EQ(stored(), "7 4");
  reset("--shift-by", {"100"});
  EXPECT_EQ(stored(), "10 4");
}

}  // namespace
}  // namespace processor::kafka
