// `offsetctl changelog` on the real broker: a StreamProcessor's changelog topic, its log ranges
// beside the local state's positions, and its records decoded, against what a read_committed
// reader of the topic sees. Skipped without KAFKA_BOOTSTRAP, as every real-broker test.

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <sstream>

#include "kafka_test_support.hpp"
#include "offsetctl_process.hpp"
#include "processor/streams.hpp"
#include "topic_reader.hpp"

namespace processor::streams {
namespace {

namespace fs = std::filesystem;
using processor::testing::unique_name;

constexpr int kPartitions = 3;

std::vector<std::vector<std::string>> rows_of(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::vector<std::string> row;
    for (std::string word; words >> word;) row.push_back(word);
    rows.push_back(row);
  }
  return rows;
}

TEST(OffsetctlChangelog, ShowsEachPartitionsRangeBesideTheLocalPositionAndDecodesTheRecords) {
  const std::string bootstrap = testing::real_broker();
  if (bootstrap.empty())
    GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: start a broker with scripts/kafka/broker.sh";
  const std::string application = unique_name("changelog-app");
  const std::string input = application + "-input";
  const fs::path dir = fs::temp_directory_path() / unique_name("changelog-state");
  const fs::path other_dir = dir.string() + "-other";
  testing::create_topic(bootstrap, input, kPartitions);
  {
    testing::Producer producer(bootstrap);
    for (int i = 0; i < 60; ++i) producer.send(input, i % kPartitions, "k" + std::to_string(i % 6), "v");
    producer.send(input, 0, "gone", "v");  // put...
    producer.send(input, 0, "gone", "v");  // ...then removed: a tombstone
    producer.flush();
  }
  // Counts per key; "gone" is put, then removed (a tombstone). Processes until `records` are done.
  const auto run_processor = [&](const fs::path& state_dir, std::uint64_t records) {
    StreamProcessorOptions options;
    options.application_id = application;
    options.input_topic = input;
    options.stores = {"counts"};
    options.state_dir = state_dir;
    options.properties = {{"bootstrap.servers", bootstrap}, {"log_level", "3"}};
    options.poll_timeout = std::chrono::milliseconds(20);
    StreamProcessor processor(options, [](const kafka::ConsumedRecord& record, RecordContext& context) {
      PartitionStore& counts = context.store(std::size_t{0});
      const auto current = counts.get(record.key);
      if (record.key == "gone" && current) {
        counts.remove(record.key);
        return;
      }
      counts.put(record.key, std::to_string((current ? std::stoll(*current) : 0) + 1));
    });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (processor.stats().records < records) {
      ASSERT_LT(std::chrono::steady_clock::now(), deadline) << processor.stats().records << " of " << records;
      processor.poll();
    }
    ASSERT_TRUE(processor.commit());
  };
  run_processor(dir, 62);
  // Another member's state directory goes on: `dir` is now behind the changelog.
  {
    testing::Producer producer(bootstrap);
    for (int i = 0; i < 30; ++i) producer.send(input, i % kPartitions, "k" + std::to_string(i % 6), "v");
    producer.flush();
  }
  run_processor(other_dir, 30);
  const std::string topic = changelog_topic(application, "counts");
  const auto records = testing::read_topic(bootstrap, topic);
  ASSERT_FALSE(records.empty());

  const auto changelog = [&](const fs::path& state_dir) {
    return testing::run_offsetctl(
        OFFSETCTL_PATH, {"changelog", "--bootstrap-server", bootstrap, "--application", application,
                         "--store", "counts", "--state-dir", state_dir.string(), "--records", "1000"});
  };
  const auto up_to_date = changelog(other_dir);
  const auto result = changelog(dir);
  fs::remove_all(dir);
  fs::remove_all(other_dir);
  ASSERT_EQ(up_to_date.exit_code, 0) << up_to_date.err;
  ASSERT_EQ(result.exit_code, 0) << result.err;
  // RECORDS-BEHIND: the changelog records at or above the local position, which a restore on
  // that member would replay (transaction markers take offsets but are no records).
  const auto check_ranges = [&](const testing::OffsetctlResult& run, bool behind) {
    const auto rows = rows_of(run.out);
    ASSERT_GE(rows.size(), 1u + kPartitions) << run.out;
    EXPECT_EQ(rows[0], (std::vector<std::string>{"TOPIC", "PARTITION", "LOG-START", "LOG-END",
                                                 "LOCAL-POSITION", "RECORDS-BEHIND"}));
    std::int64_t total_behind = 0;
    for (int p = 0; p < kPartitions; ++p) {
      const auto& row = rows[1 + p];
      ASSERT_EQ(row.size(), 6u) << run.out;
      EXPECT_EQ(row[0], topic);
      EXPECT_EQ(row[1], std::to_string(p));
      const std::int64_t position = std::stoll(row[4]);
      std::int64_t expected = 0;
      for (const auto& record : records)
        expected += record.partition == p && record.offset >= position ? 1 : 0;
      EXPECT_EQ(row[5], std::to_string(expected)) << run.out;
      total_behind += expected;
    }
    EXPECT_EQ(total_behind > 0, behind) << run.out;
  };
  check_ranges(up_to_date, false);
  check_ranges(result, true);
  // The records, decoded: each key's value as the store holds it, a tombstone named.
  std::map<std::string, std::string> expected;  // "<partition> <offset> <key> -> <value>" lines
  std::size_t expected_lines = 0;
  for (const auto& record : records) {
    ++expected_lines;
    const std::string value = record.value ? record.value->substr(1) : "(deleted: tombstone)";
    expected[std::to_string(record.partition) + " " + std::to_string(record.offset)] =
        record.key + " -> " + value;
  }
  std::size_t record_lines = 0;
  std::istringstream lines(result.out);
  bool in_records = false;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with("PARTITION")) {
      in_records = true;
      continue;
    }
    if (!in_records || line.empty()) continue;
    ++record_lines;
    std::istringstream words(line);
    std::string partition, offset;
    words >> partition >> offset;
    std::string rest;
    std::getline(words >> std::ws, rest);
    EXPECT_EQ(rest, expected[partition + " " + offset]) << line;
  }
  EXPECT_EQ(record_lines, expected_lines) << result.out;
  EXPECT_NE(result.out.find("gone -> (deleted: tombstone)"), std::string::npos) << result.out;

  // A store without a changelog: Kafka's answer, named, and exit 1.
  const auto missing = testing::run_offsetctl(
      OFFSETCTL_PATH,
      {"changelog", "--bootstrap-server", bootstrap, "--application", application, "--store", "none"});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find(changelog_topic(application, "none")), std::string::npos) << missing.err;
}

}  // namespace
}  // namespace processor::streams
