// Exactly-once dead letters across a SIGKILL, on the real broker: a streams_worker counts records
// per key, dead-letters the records it cannot process, and kills itself right after its first
// dead letter, while that dead letter is in the open transaction. Restarted under the same
// instance id, it must leave exactly one dead letter per bad record, process no skipped offset
// twice, and leave every count exact, as a read_committed reader sees them.

#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <string>

#include "child_process.hpp"
#include "kafka_test_support.hpp"
#include "topic_reader.hpp"

#ifndef STREAMS_WORKER_PATH
#error "STREAMS_WORKER_PATH must name the streams_worker executable"
#endif

namespace processor::testing {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr int kPartitions = 4;
constexpr int kRecords = 2'000;
constexpr int kKeys = 40;
// Every 97th record is bad: 20 of them, none the last of its partition.
bool bad(int index) { return index % 97 == 50; }

class StreamsDeadLetterKill : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    bootstrap_ = real_broker();
    if (bootstrap_.empty()) GTEST_SKIP() << "KAFKA_BOOTSTRAP is not set: no real broker";
    application_ = unique_name("dlq-kill");
    input_ = application_ + "-input";
    output_ = application_ + "-output";
    dead_letters_ = application_ + "-dlq";
    dir_ = fs::temp_directory_path() / application_;
    fs::create_directories(dir_);
    create_topic(bootstrap_, input_, kPartitions);
    create_topic(bootstrap_, output_, kPartitions);
    create_topic(bootstrap_, dead_letters_, 1);
    Producer producer(bootstrap_);
    for (int i = 0; i < kRecords; ++i) {
      const int key = i % kKeys;
      const std::string value = bad(i) ? "bad-" + std::to_string(i) : "v" + std::to_string(i);
      producer.send(input_, key % kPartitions, "k" + std::to_string(key), value);
      if (bad(i)) {
        ++bad_records_;
      } else {
        ++expected_[key];
      }
    }
    producer.flush();
  }
  void TearDown() override {
    if (!HasFailure()) fs::remove_all(dir_);
  }

  std::unique_ptr<ChildProcess> start_worker() const {
    auto worker = std::make_unique<ChildProcess>(std::vector<std::string>{
        STREAMS_WORKER_PATH, "--bootstrap", bootstrap_, "--application", application_, "--input", input_,
        "--output", output_, "--state-dir", (dir_ / "state").string(), "--assignment", GetParam(),
        "--instance-id", "w1", "--dead-letter-topic", dead_letters_, "--kill-marker",
        (dir_ / "killed").string()});
    // Its log lines come first, on the same pipe.
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    std::string line;
    while (line.rfind("started", 0) != 0 && Clock::now() < deadline)
      line = worker->read_line(std::chrono::seconds(5));
    EXPECT_EQ(line.rfind("started", 0), 0u) << "the worker did not start";
    return worker;
  }

  std::string bootstrap_, application_, input_, output_, dead_letters_;
  fs::path dir_;
  std::map<int, int> expected_;  // good records per key
  int bad_records_ = 0;
};

TEST_P(StreamsDeadLetterKill, ADeadLetterInTheOpenTransactionAtAKillIsWrittenOnceAndItsOffsetProcessedOnce) {
  // The first run kills itself after its first dead letter.
  auto first = start_worker();
  EXPECT_EQ(first->stop(0, std::chrono::seconds(120)), -1);
  ASSERT_EQ(first->signal(), SIGKILL) << first->read_rest(std::chrono::seconds(1));
  ASSERT_TRUE(fs::exists(dir_ / "killed"));
  std::cout << "[ killed   ] " << std::ifstream(dir_ / "killed").rdbuf();

  // The second, under the same instance id, fences the first's transaction and goes on.
  auto second = start_worker();
  std::size_t results = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(120);
  while (results < static_cast<std::size_t>(kRecords - bad_records_)) {
    ASSERT_LT(Clock::now(), deadline) << results << " results of " << kRecords - bad_records_;
    std::this_thread::sleep_for(std::chrono::seconds(1));
    results = read_topic(bootstrap_, output_).size();
  }
  ASSERT_EQ(second->stop(SIGTERM, std::chrono::seconds(60)), 0) << second->read_rest(std::chrono::seconds(1));

  // One dead letter per bad record: no more, no fewer.
  std::multiset<std::string> dead;
  for (const auto& record : read_topic(bootstrap_, dead_letters_)) dead.insert(record.value.value_or(""));
  std::size_t duplicate_letters = 0;
  for (const auto& value : dead) duplicate_letters += dead.count(value) > 1 ? 1 : 0;
  EXPECT_EQ(dead.size(), static_cast<std::size_t>(bad_records_));
  EXPECT_EQ(duplicate_letters, 0u);
  for (const auto& value : dead) EXPECT_EQ(value.rfind("bad-", 0), 0u) << value;

  // Every good record's result once, none for a bad one, and the counts 1..n per key in order.
  std::map<std::string, std::set<std::string>> inputs_seen;  // key -> "partition:offset"
  std::map<std::string, std::vector<long long>> counts;
  std::size_t duplicates = 0;
  for (const auto& record : read_topic(bootstrap_, output_)) {
    const std::string& value = *record.value;
    const auto last = value.rfind(':');
    if (!inputs_seen[record.key].insert(value.substr(0, last)).second) ++duplicates;
    counts[record.key].push_back(std::stoll(value.substr(last + 1)));
  }
  EXPECT_EQ(duplicates, 0u);
  std::size_t wrong_counts = 0;
  for (const auto& [key, expected] : expected_) {
    const auto& seen = counts["k" + std::to_string(key)];
    bool exact = seen.size() == static_cast<std::size_t>(expected);
    for (std::size_t i = 0; exact && i < seen.size(); ++i) exact = seen[i] == static_cast<long long>(i + 1);
    wrong_counts += exact ? 0 : 1;
  }
  EXPECT_EQ(wrong_counts, 0u);
  std::cout << "[ outcome  ] " << dead.size() << " dead letters for " << bad_records_ << " bad records, "
            << duplicate_letters << " duplicated; " << results << " results, " << duplicates
            << " duplicated; " << wrong_counts << " keys with wrong counts\n";
}

INSTANTIATE_TEST_SUITE_P(Protocols, StreamsDeadLetterKill,
                         ::testing::Values("cooperative-sticky", "consumer"),
                         [](const ::testing::TestParamInfo<std::string>& param_info) {
                           return group_protocol_name(param_info.param);
                         });

}  // namespace
}  // namespace processor::testing
