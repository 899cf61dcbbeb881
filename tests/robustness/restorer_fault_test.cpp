// The fault matrix, changelog restoration: a changelog partition whose offsets cannot be read at
// the start or at the end of its restoration (ListOffsets refused, as while its leader moves to
// another broker) on librdkafka's mock cluster. The restorer asks again at later polls, one query
// per poll (its two ListOffsets requests), and completes once the leader answers; neither add()
// (called inside a rebalance callback) nor any poll() fails on it. And a poll() ends once its
// restoration completes, not at its timeout.

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "fault_matrix_cases.hpp"
#include "fault_matrix_support.hpp"
#include "kafka_test_support.hpp"
#include "processor/log.hpp"
#include "processor/state/rocksdb_state_backend.hpp"
#include "streams/changelog_format.hpp"
#include "streams/changelog_restorer.hpp"
#include "streams/store_partition.hpp"

namespace processor::streams::internal {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kRecords = 50;
// More refusals in a row than one retry loop over the request timeout rides out (its back-off
// doubles from 100 ms to 1 s: 6 tries in 2 s), so that a restorer that retries the end check
// within one poll and then fails is seen to fail.
constexpr int kRefusals = 12;

// kRecords changelog records in partition 0: key k<i>, value <i>.
void fill_changelog(testing::MockCluster& cluster, const std::string& changelog) {
  testing::Producer producer(cluster.bootstrap());
  for (int i = 0; i < kRecords; ++i) {
    std::string value;
    append_changelog_value(value, std::to_string(i));
    producer.send(changelog, 0, "k" + std::to_string(i), value);
  }
  producer.flush();
}

enum class Refused { AtTheStart, AtTheEnd };

class RestorerFault : public ::testing::TestWithParam<Refused> {};

TEST_P(RestorerFault, ChangelogOffsetsThatCannotBeReadAreAskedAgainAtLaterPollsUntilTheyAnswer) {
  processor::set_log_level(LogLevel::Error);
  testing::MockCluster cluster{3};
  const std::string changelog = testing::unique_name("app") + "-counts-changelog";
  cluster.create_topic(changelog, 1);
  rd_kafka_mock_partition_set_leader(cluster.get(), changelog.c_str(), 0, testing::kCoordinator);
  fill_changelog(cluster, changelog);

  const fs::path dir = fs::temp_directory_path() / testing::unique_name("restorer-fault");
  {
    state::RocksDbStateBackend db(dir);
    const std::string name = "counts";
    StorePartition store(db, name, 0);
    ChangelogRestorer restorer({{"bootstrap.servers", cluster.bootstrap()}, {"log_level", "0"}}, {},
                               std::chrono::seconds(10), std::chrono::seconds(2));
    // Every offsets request from then on is refused, kRefusals times.
    const auto refuse = [&] {
      for (int i = 0; i < kRefusals; ++i) {
        rd_kafka_mock_broker_push_request_error_rtts(cluster.get(), testing::kCoordinator,
                                                     testing::kListOffsetsApiKey, 1,
                                                     RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR, 0);
      }
    };
    const auto refusals_left = [&] {
      std::size_t left = 0;
      rd_kafka_mock_broker_error_stack_cnt(cluster.get(), testing::kCoordinator, testing::kListOffsetsApiKey,
                                           &left);
      return static_cast<int>(left);
    };
    if (GetParam() == Refused::AtTheStart) {
      refuse();
      bool done = true;
      ASSERT_NO_THROW(done = restorer.add(store, changelog));
      EXPECT_FALSE(done) << "restored without reading the changelog";
      EXPECT_LE(kRefusals - refusals_left(), 2) << "add() asked more than once";
      EXPECT_FALSE(restorer.idle());
    } else {
      ASSERT_FALSE(restorer.add(store, changelog)) << "the changelog has records to restore";
      refuse();
    }

    std::vector<std::int32_t> completed;
    int polls = 0;
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (completed.empty() && Clock::now() < deadline) {
      const int before = refusals_left();
      ASSERT_NO_THROW(completed = restorer.poll(std::chrono::milliseconds(50)))
          << "poll " << polls << ", with " << before << " refusals left";
      // One query: librdkafka asks for the log start and for the high watermark, two requests.
      EXPECT_LE(before - refusals_left(), 2) << "poll " << polls << " asked more than once";
      ++polls;
    }
    EXPECT_EQ(refusals_left(), 0) << "the restoration completed before every refusal was met";
    ASSERT_EQ(completed, std::vector<std::int32_t>{0}) << "not restored in 60 s, " << polls << " polls";
    EXPECT_EQ(restorer.counters().records, static_cast<std::uint64_t>(kRecords));
    EXPECT_EQ(store.position(), kRecords);
    EXPECT_EQ(store.get("k0"), "0");
    EXPECT_EQ(store.get("k" + std::to_string(kRecords - 1)), std::to_string(kRecords - 1));
  }
  fs::remove_all(dir);
}

// The end of the changelog is queued right behind its last records: the poll that reads them
// completes the restoration and returns, instead of waiting out its timeout for a full batch (the
// restore of bench_streams' 1M records spent a tenth of its time there).
TEST(RestorerPoll, EndsOnceItsRestorationCompletesNotAtItsTimeout) {
  processor::set_log_level(LogLevel::Error);
  testing::MockCluster cluster{1};
  const std::string changelog = testing::unique_name("app") + "-counts-changelog";
  cluster.create_topic(changelog, 1);
  fill_changelog(cluster, changelog);
  const fs::path dir = fs::temp_directory_path() / testing::unique_name("restorer-poll");
  {
    state::RocksDbStateBackend db(dir);
    StorePartition store(db, "counts", 0);
    ChangelogRestorer restorer({{"bootstrap.servers", cluster.bootstrap()}, {"log_level", "0"}}, {},
                               std::chrono::seconds(10), std::chrono::seconds(5));
    ASSERT_FALSE(restorer.add(store, changelog)) << "the changelog has records to restore";
    std::vector<std::int32_t> completed;
    const auto deadline = Clock::now() + std::chrono::seconds(120);
    while (completed.empty() && Clock::now() < deadline) {
      const auto started = Clock::now();
      completed = restorer.poll(std::chrono::seconds(30));
      const auto took = Clock::now() - started;
      if (completed.empty()) continue;  // the fetcher starts: the first poll may see nothing
      // Reading 50 records and their end takes milliseconds; a wait for a full batch, 30 s.
      EXPECT_LT(took, std::chrono::seconds(15))
          << "the poll that completed the restoration took "
          << std::chrono::duration_cast<std::chrono::milliseconds>(took).count() << " ms";
    }
    ASSERT_EQ(completed, std::vector<std::int32_t>{0});
    EXPECT_EQ(store.position(), kRecords);
    EXPECT_EQ(store.get("k" + std::to_string(kRecords - 1)), std::to_string(kRecords - 1));
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(Refused, RestorerFault, ::testing::Values(Refused::AtTheStart, Refused::AtTheEnd),
                         [](const auto& param_info) {
                           return param_info.param == Refused::AtTheStart ? std::string("AtTheStart")
                                                                          : std::string("AtTheEnd");
                         });

}  // namespace
}  // namespace processor::streams::internal
