// The lag in seconds read from a table of (log-end offset, time) samples (kafka-lag-exporter's
// method): interpolation, extrapolation and its guards, and the table's own edges.

#include "monitor/lag/log_end_table.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace processor::monitor::internal {
namespace {

constexpr Micros kSecond = 1'000'000;
constexpr Micros kNoCap = 1'000'000 * kSecond;

TEST(LogEndTable, EmptyTableGivesNoEstimate) {
  const LogEndTable table(10);
  const TimeLagEstimate estimate = table.lag_at(5, 100 * kSecond, kNoCap);
  EXPECT_FALSE(estimate.seconds);
  EXPECT_EQ(estimate.source, TimeLagSource::None);
}

TEST(LogEndTable, CommittedAtOrPastTheLogEndIsZeroSecondsBehind) {
  LogEndTable table(10);
  table.record(100, 10 * kSecond);
  EXPECT_EQ(table.lag_at(100, 50 * kSecond, kNoCap).seconds, 0.0);
  EXPECT_EQ(table.lag_at(150, 50 * kSecond, kNoCap).seconds, 0.0);  // past the end: still 0, never negative
  EXPECT_EQ(table.lag_at(100, 50 * kSecond, kNoCap).source, TimeLagSource::Interpolated);
}

TEST(LogEndTable, OneSampleGivesALowerBoundForAnOlderOffset) {
  LogEndTable table(10);
  table.record(100, 10 * kSecond);
  // At the poll that took the sample, nothing is known yet.
  EXPECT_FALSE(table.lag_at(40, 10 * kSecond, kNoCap).seconds);
  EXPECT_EQ(table.lag_at(40, 10 * kSecond, kNoCap).source, TimeLagSource::None);
  // Later, with the log end still idle at 100: offset 40 was produced before 10 s.
  const TimeLagEstimate estimate = table.lag_at(40, 25 * kSecond, kNoCap);
  ASSERT_TRUE(estimate.seconds);
  EXPECT_DOUBLE_EQ(*estimate.seconds, 15.0);
  EXPECT_EQ(estimate.source, TimeLagSource::LowerBound);
}

TEST(LogEndTable, InterpolatesBetweenTheTwoSamplesAroundTheCommittedOffset) {
  LogEndTable table(10);
  table.record(100, 10 * kSecond);
  table.record(200, 20 * kSecond);
  table.record(300, 30 * kSecond);
  // Offset 250 was the log end half way between 20 s and 30 s.
  const TimeLagEstimate estimate = table.lag_at(250, 40 * kSecond, kNoCap);
  ASSERT_TRUE(estimate.seconds);
  EXPECT_DOUBLE_EQ(*estimate.seconds, 15.0);
  EXPECT_EQ(estimate.source, TimeLagSource::Interpolated);
  EXPECT_DOUBLE_EQ(*table.lag_at(100, 40 * kSecond, kNoCap).seconds, 30.0);  // exactly on a sample
}

TEST(LogEndTable, ExtrapolatesAnOffsetOlderThanTheTableWithItsRate) {
  LogEndTable table(10);
  table.record(1000, 100 * kSecond);
  table.record(1100, 110 * kSecond);  // 10 records per second
  const TimeLagEstimate estimate = table.lag_at(900, 120 * kSecond, kNoCap);
  ASSERT_TRUE(estimate.seconds);
  EXPECT_DOUBLE_EQ(*estimate.seconds, 30.0);  // offset 900 was the end at 90 s
  EXPECT_EQ(estimate.source, TimeLagSource::Extrapolated);
}

TEST(LogEndTable, ExtrapolationIsCapped) {
  LogEndTable table(10);
  table.record(1'000'000, 100 * kSecond);
  table.record(1'000'001, 200 * kSecond);  // 0.01 records per second: 0 would be 10^8 s before
  const TimeLagEstimate estimate = table.lag_at(0, 200 * kSecond, 60 * kSecond);
  ASSERT_TRUE(estimate.seconds);
  EXPECT_DOUBLE_EQ(*estimate.seconds, 100.0 + 60.0);  // the table's age plus the cap
  EXPECT_EQ(estimate.source, TimeLagSource::Extrapolated);
}

TEST(LogEndTable, FlatLogEndKeepsTheTimeItFirstReachedTheOffset) {
  LogEndTable table(3);
  table.record(100, 10 * kSecond);
  table.record(200, 20 * kSecond);
  for (int i = 3; i <= 50; ++i) table.record(200, i * 10 * kSecond);  // idle for 480 s
  EXPECT_EQ(table.size(), 2u);  // the idle polls did not push the rate out of the table
  // Caught up, then idle: no lag however long the topic stays idle.
  EXPECT_EQ(table.lag_at(200, 500 * kSecond, kNoCap).seconds, 0.0);
  // Behind by offsets produced before the idle period: measured from when they were produced.
  EXPECT_DOUBLE_EQ(*table.lag_at(150, 500 * kSecond, kNoCap).seconds, 485.0);
  // Still extrapolates with the rate measured before going idle (10 records/s).
  EXPECT_DOUBLE_EQ(*table.lag_at(50, 500 * kSecond, kNoCap).seconds, 495.0);
}

TEST(LogEndTable, RecordsAfterAnIdlePeriodAreDatedAfterIt) {
  LogEndTable table(10);
  table.record(100, 0);
  table.record(100, 100 * kSecond);  // idle from 0 s to 100 s
  table.record(110, 101 * kSecond);  // 10 records between 100 s and 101 s
  const TimeLagEstimate estimate = table.lag_at(105, 102 * kSecond, kNoCap);
  EXPECT_DOUBLE_EQ(*estimate.seconds, 1.5);  // not 52 s, as spreading them over the idle period would say
}

TEST(LogEndTable, OnlyFlatSamplesGiveNoRateOnlyALowerBound) {
  LogEndTable table(10);
  for (int i = 0; i < 5; ++i) table.record(100, i * kSecond);
  // A consumer stopped 50 records behind an idle topic: at least 10 s behind (the log end was
  // already at 100 when first seen at 0 s), and the figure grows while it stays stopped.
  const TimeLagEstimate estimate = table.lag_at(50, 10 * kSecond, kNoCap);
  EXPECT_EQ(estimate.source, TimeLagSource::LowerBound);
  EXPECT_DOUBLE_EQ(*estimate.seconds, 10.0);
  EXPECT_DOUBLE_EQ(*table.lag_at(50, 70 * kSecond, kNoCap).seconds, 70.0);
}

TEST(LogEndTable, ClockGoingBackwardsRestartsTheTableAndNeverGivesANegativeLag) {
  LogEndTable table(10);
  table.record(100, 100 * kSecond);
  table.record(200, 110 * kSecond);
  table.record(300, 50 * kSecond);  // the clock went back 60 s
  EXPECT_EQ(table.size(), 1u);
  // `now` before a sample's time: 0, not negative, not NaN.
  table.record(400, 60 * kSecond);
  const TimeLagEstimate estimate = table.lag_at(350, 40 * kSecond, kNoCap);
  ASSERT_TRUE(estimate.seconds);
  EXPECT_EQ(*estimate.seconds, 0.0);
  EXPECT_FALSE(std::isnan(*estimate.seconds));
}

TEST(LogEndTable, LogEndGoingBackwardsRestartsTheTable) {
  LogEndTable table(10);
  table.record(1000, 10 * kSecond);
  table.record(2000, 20 * kSecond);
  table.record(5, 30 * kSecond);  // topic deleted and recreated
  EXPECT_EQ(table.size(), 1u);
  EXPECT_EQ(table.newest_log_end(), 5);
  // One sample: no rate yet, only a bound from the new log's first sample (not from the old log's).
  EXPECT_EQ(table.lag_at(1, 40 * kSecond, kNoCap).source, TimeLagSource::LowerBound);
  EXPECT_DOUBLE_EQ(*table.lag_at(1, 40 * kSecond, kNoCap).seconds, 10.0);
  EXPECT_EQ(table.lag_at(1500, 40 * kSecond, kNoCap).seconds, 0.0);  // ahead of the new log: 0
}

TEST(LogEndTable, FullTableForgetsItsOldestSample) {
  LogEndTable table(3);
  for (int i = 1; i <= 5; ++i) table.record(i * 100, i * 10 * kSecond);  // keeps 300, 400, 500
  EXPECT_EQ(table.size(), 3u);
  EXPECT_EQ(table.newest_log_end(), 500);
  EXPECT_EQ(table.lag_at(350, 60 * kSecond, kNoCap).source, TimeLagSource::Interpolated);
  EXPECT_DOUBLE_EQ(*table.lag_at(350, 60 * kSecond, kNoCap).seconds, 25.0);
  // 150 fell out of the table: extrapolated at 10 records/s from (300, 30 s).
  const TimeLagEstimate older = table.lag_at(150, 60 * kSecond, kNoCap);
  EXPECT_EQ(older.source, TimeLagSource::Extrapolated);
  EXPECT_DOUBLE_EQ(*older.seconds, 45.0);
  // The ring keeps working after wrapping many times.
  for (int i = 6; i <= 100; ++i) table.record(i * 100, i * 10 * kSecond);
  EXPECT_EQ(table.size(), 3u);
  EXPECT_DOUBLE_EQ(*table.lag_at(9850, 1000 * kSecond, kNoCap).seconds, 15.0);
}

}  // namespace
}  // namespace processor::monitor::internal
