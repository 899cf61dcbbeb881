#include <gtest/gtest.h>

#include "processor/kafka.hpp"
#include "test_support.hpp"

namespace processor::kafka {
namespace {

TEST(OffsetInfo, ConstructorStampsTheCurrentTime) {
  const auto before = std::chrono::system_clock::now();
  const OffsetInfo info(42);
  EXPECT_EQ(info.offset, 42);
  EXPECT_FALSE(info.high_watermark);
  EXPECT_GE(info.last_updated, before);
  EXPECT_LE(info.last_updated, std::chrono::system_clock::now());
}

TEST(OffsetInfo, LagIsHighWatermarkMinusOffsetWhenKnown) {
  EXPECT_EQ(OffsetInfo(10).lag(), std::nullopt);
  EXPECT_EQ(OffsetInfo::with_high_watermark(100, 250).lag(), 150);
  EXPECT_EQ(OffsetInfo::with_high_watermark(300, 250).lag(), -50);  // not clamped
}

TEST(OffsetCommitStrategy, FactoriesCarryTheirParameters) {
  const auto periodic = OffsetCommitStrategy::periodic(std::chrono::seconds(5));
  EXPECT_EQ(periodic.kind(), OffsetCommitStrategy::Kind::Periodic);
  EXPECT_EQ(periodic.interval(), std::chrono::seconds(5));
  EXPECT_EQ(OffsetCommitStrategy::periodic(std::chrono::milliseconds(250)).interval(),
            std::chrono::milliseconds(250));
  EXPECT_EQ(OffsetCommitStrategy::every_n_events(10).events(), 10);
  EXPECT_EQ(OffsetCommitStrategy::on_watermark().kind(), OffsetCommitStrategy::Kind::OnWatermark);
  EXPECT_EQ(OffsetCommitStrategy::on_checkpoint().kind(), OffsetCommitStrategy::Kind::OnCheckpoint);
  EXPECT_EQ(OffsetCommitStrategy::manual().kind(), OffsetCommitStrategy::Kind::Manual);
  EXPECT_EQ(to_string(periodic), "periodic(5000ms)");
}

TEST(OffsetCommitStrategy, RejectsNonPositiveIntervalAndCount) {
  EXPECT_STATE_ERROR(OffsetCommitStrategy::periodic(std::chrono::seconds(0)), ErrorKind::InvalidArgument,
                     "0ns");
  EXPECT_STATE_ERROR(OffsetCommitStrategy::periodic(std::chrono::milliseconds(-5)),
                     ErrorKind::InvalidArgument, "-5000000ns");
  EXPECT_STATE_ERROR(OffsetCommitStrategy::every_n_events(0), ErrorKind::InvalidArgument, "0");
  EXPECT_STATE_ERROR(OffsetCommitStrategy::every_n_events(-3), ErrorKind::InvalidArgument, "-3");
}

TEST(OffsetCommitStrategy, RefusesAnIntervalTooLongForNanosecondsNamingTheCallersValue) {
  EXPECT_STATE_ERROR(OffsetCommitStrategy::periodic(std::chrono::milliseconds::max()),
                     ErrorKind::InvalidArgument,
                     "interval 9223372036854775807ms: it is longer than the longest supported");
  EXPECT_STATE_ERROR(OffsetCommitStrategy::periodic(std::chrono::hours(3'000'000)),
                     ErrorKind::InvalidArgument, "3000000h");
  EXPECT_STATE_ERROR(OffsetCommitStrategy::periodic(std::chrono::duration<double>(1e300)),
                     ErrorKind::InvalidArgument, "longer than the longest supported");
  // The longest interval that fits is accepted, and a manager with it never commits on its own.
  const auto longest = OffsetCommitStrategy::periodic(std::chrono::nanoseconds::max());
  EXPECT_EQ(longest.interval(), std::chrono::nanoseconds::max());
  OffsetManager manager("g", nullptr, std::make_shared<InMemoryOffsetStore>(), longest);
  manager.update_offset("t", 0, 5);
  EXPECT_EQ(manager.poll(), 0u);
  EXPECT_EQ(manager.stats().total_commits, 0u);
}

TEST(OffsetResetStrategy, RefusesADurationTooLongForMillisecondsNamingTheCallersValue) {
  EXPECT_STATE_ERROR(OffsetResetStrategy::by_duration(std::chrono::hours::max()), ErrorKind::InvalidArgument,
                     "invalid reset duration 9223372036854775807h: it is longer than the longest supported");
  EXPECT_EQ(OffsetResetStrategy::by_duration(std::chrono::milliseconds::max()).value(),
            std::numeric_limits<std::int64_t>::max());
}

TEST(OffsetResetStrategy, FactoriesCarryTheirValues) {
  EXPECT_EQ(OffsetResetStrategy::earliest().kind(), OffsetResetStrategy::Kind::Earliest);
  EXPECT_EQ(OffsetResetStrategy::latest().kind(), OffsetResetStrategy::Kind::Latest);
  EXPECT_EQ(OffsetResetStrategy::specific(17).value(), 17);
  EXPECT_EQ(OffsetResetStrategy::timestamp(1700000000000).value(), 1700000000000);
  EXPECT_EQ(OffsetResetStrategy::shift_by(-5).value(), -5);
  EXPECT_EQ(OffsetResetStrategy::by_duration(std::chrono::minutes(2)).value(), 120000);
  EXPECT_EQ(to_string(OffsetResetStrategy::specific(17)), "specific(17)");
}

TEST(OffsetResetStrategy, RejectsNegativeOffsetTimestampAndDuration) {
  EXPECT_STATE_ERROR(OffsetResetStrategy::specific(-1), ErrorKind::InvalidArgument, "-1");
  EXPECT_STATE_ERROR(OffsetResetStrategy::timestamp(-2), ErrorKind::InvalidArgument, "-2");
  EXPECT_STATE_ERROR(OffsetResetStrategy::by_duration(std::chrono::seconds(-1)), ErrorKind::InvalidArgument,
                     "-1000");
}

TEST(Watermark, IsOrderedByMilliseconds) {
  EXPECT_LT(Watermark(1), Watermark(2));
  EXPECT_EQ(Watermark(5), Watermark(5));
  EXPECT_EQ(Watermark(7).millis(), 7);
}

TEST(StateError, CarriesKindAndKafkaCode) {
  const StateError plain(ErrorKind::Storage, "boom");
  EXPECT_EQ(plain.kind(), ErrorKind::Storage);
  EXPECT_FALSE(plain.kafka_error_code());
  const StateError kafka(ErrorKind::Kafka, "rebalance", 27, true);
  EXPECT_EQ(kafka.kafka_error_code(), 27);
  EXPECT_TRUE(kafka.retriable());
  EXPECT_EQ(to_string(ErrorKind::CommitFailed), "CommitFailed");
}

}  // namespace
}  // namespace processor::kafka
