// The log sink: where the library's warnings go, the level filter, the default stderr sink.
#include "processor/log.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "processor/kafka.hpp"
#include "recording_log_sink.hpp"

namespace processor {
namespace {

const std::string kAcksWarning =
    "ignoring the acknowledgement metadata of t:0: it was written for committed offset 0, not for 1000; "
    "every record from 1000 is processed again";

// An OffsetManager whose store holds, for t:0, acknowledgement metadata written for committed
// offset 0 but stored with offset 1000: each acked_after_restart("t", 0) ignores it and logs
// kAcksWarning, a real library warning that needs no broker.
class MovedAckMetadata {
 public:
  MovedAckMetadata() {
    kafka::PartitionAcks acks(0);
    EXPECT_TRUE(acks.try_track(0));
    EXPECT_TRUE(acks.try_track(5));
    EXPECT_TRUE(acks.ack(5));  // record 0 holds the committable offset at 0
    kafka::OffsetInfo moved(1000);
    moved.metadata = acks.encode_metadata();
    store_->store_offset("group", {"t", 0}, moved);
    manager_.restore();
  }

  void log_warning() { EXPECT_FALSE(manager_.acked_after_restart("t", 0)); }

 private:
  std::shared_ptr<kafka::InMemoryOffsetStore> store_ = std::make_shared<kafka::InMemoryOffsetStore>();
  kafka::OffsetManager manager_{"group", nullptr, store_, kafka::OffsetCommitStrategy::manual()};
};

using testing::LogRecord;
using testing::RecordingSink;

class Log : public ::testing::Test {
 protected:
  void TearDown() override {
    set_log_sink({});
    set_log_level(LogLevel::Info);
  }

  MovedAckMetadata source_;
};

TEST_F(Log, DefaultSinkWritesLibraryWarningsToStderrAsOneLine) {
  EXPECT_EQ(log_level(), LogLevel::Info);
  ::testing::internal::CaptureStderr();
  source_.log_warning();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "processor [acks] Warning: " + kAcksWarning + "\n");
}

TEST_F(Log, SetSinkReceivesLibraryWarningsAndNothingGoesToStderr) {
  RecordingSink recording;
  set_log_sink(recording.sink());
  ::testing::internal::CaptureStderr();
  source_.log_warning();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  const auto records = recording.records();
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].level, LogLevel::Warning);
  EXPECT_EQ(records[0].component, "acks");
  EXPECT_EQ(records[0].message, kAcksWarning);
}

TEST_F(Log, RecordsBelowTheMinimumLevelAreDropped) {
  RecordingSink recording;
  set_log_sink(recording.sink());
  set_log_level(LogLevel::Error);
  EXPECT_EQ(log_level(), LogLevel::Error);
  ::testing::internal::CaptureStderr();
  source_.log_warning();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_TRUE(recording.records().empty());

  set_log_level(LogLevel::Warning);
  source_.log_warning();
  EXPECT_EQ(recording.records().size(), 1u);
}

TEST_F(Log, AnEmptySinkRestoresTheDefaultStderrSink) {
  RecordingSink recording;
  set_log_sink(recording.sink());
  set_log_sink({});
  ::testing::internal::CaptureStderr();
  source_.log_warning();
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "processor [acks] Warning: " + kAcksWarning + "\n");
  EXPECT_TRUE(recording.records().empty());
}

TEST_F(Log, AThrowingSinkDoesNotBreakTheLibrary) {
  auto calls = std::make_shared<std::atomic<int>>(0);
  set_log_sink([calls](LogLevel, std::string_view, std::string_view) {
    if (calls->fetch_add(1) == 0) throw std::runtime_error("sink on fire");
    throw 42;  // not even a std::exception
  });
  ::testing::internal::CaptureStderr();
  EXPECT_NO_THROW(source_.log_warning());
  EXPECT_NO_THROW(source_.log_warning());
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), "");
  EXPECT_EQ(calls->load(), 2);
}

TEST_F(Log, ReplacingTheSinkWhileThreadsLogDeliversEveryRecordExactlyOnce) {
  constexpr int kThreads = 4;
  constexpr int kRecordsPerThread = 300;
  auto first = std::make_shared<std::atomic<int>>(0);
  auto second = std::make_shared<std::atomic<int>>(0);
  auto counting = [](std::shared_ptr<std::atomic<int>> count) -> LogSink {
    return [count](LogLevel, std::string_view, std::string_view) { count->fetch_add(1); };
  };
  set_log_sink(counting(first));
  std::atomic<int> running{kThreads};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kRecordsPerThread; ++i) source_.log_warning();
      running.fetch_sub(1);
    });
  }
  for (int swap = 0; running.load() > 0; ++swap) set_log_sink(counting(swap % 2 == 0 ? second : first));
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(first->load() + second->load(), kThreads * kRecordsPerThread);
}

}  // namespace
}  // namespace processor
