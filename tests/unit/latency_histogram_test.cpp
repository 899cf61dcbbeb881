// LatencyHistogram: the bucket layout, rounding, percentiles within the stated error, and the
// Prometheus buckets.

#include "processor/latency_histogram.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "processor/error.hpp"

namespace processor {
namespace {

using std::chrono::microseconds;
using std::chrono::nanoseconds;

// |estimate - exact| <= exact / 64: the promised error of a percentile.
void expect_within_promise(std::uint64_t estimate, std::uint64_t exact) {
  const double error = std::abs(static_cast<double>(estimate) - static_cast<double>(exact));
  EXPECT_LE(error, static_cast<double>(exact) / 64.0) << "estimate " << estimate << ", exact " << exact;
}

TEST(LatencyHistogram, EachMicrosecondUpTo64HasABucketOfItsOwn) {
  for (std::uint64_t micros = 0; micros <= 64; ++micros) {
    const std::size_t index = LatencyHistogram::bucket_index(micros);
    EXPECT_EQ(index, micros);
    EXPECT_EQ(LatencyHistogram::bucket_lower_micros(index), micros);
    EXPECT_EQ(LatencyHistogram::bucket_upper_micros(index), micros);
  }
}

TEST(LatencyHistogram, BucketsAboveTileTheRangeAtMostAThirtySecondOfTheirLowerBoundWide) {
  for (std::size_t index = 65; index + 1 < LatencyHistogram::kBucketCount; ++index) {
    const std::uint64_t lower = LatencyHistogram::bucket_lower_micros(index);
    const std::uint64_t upper = LatencyHistogram::bucket_upper_micros(index);
    ASSERT_EQ(lower, LatencyHistogram::bucket_upper_micros(index - 1) + 1) << "index " << index;
    ASSERT_EQ(LatencyHistogram::bucket_index(lower), index);
    ASSERT_EQ(LatencyHistogram::bucket_index(upper), index);
    ASSERT_LE((upper - lower + 1) * 32, lower - 1) << "index " << index;
  }
  const std::size_t last = LatencyHistogram::kBucketCount - 2;
  EXPECT_EQ(LatencyHistogram::bucket_upper_micros(last), LatencyHistogram::kMaxTrackedMicros);
  const std::size_t overflow = LatencyHistogram::kBucketCount - 1;
  EXPECT_EQ(LatencyHistogram::bucket_index(LatencyHistogram::kMaxTrackedMicros + 1), overflow);
  EXPECT_EQ(LatencyHistogram::bucket_index(UINT64_MAX), overflow);
}

TEST(LatencyHistogram, UpperBoundsAreInclusiveAsPrometheusLe) {
  // (64, 128] is split in buckets 2 µs wide, (128, 256] in buckets 4 µs wide.
  EXPECT_EQ(LatencyHistogram::bucket_index(65), LatencyHistogram::bucket_index(66));
  EXPECT_NE(LatencyHistogram::bucket_index(66), LatencyHistogram::bucket_index(67));
  EXPECT_EQ(LatencyHistogram::bucket_upper_micros(LatencyHistogram::bucket_index(128)), 128u);
  EXPECT_EQ(LatencyHistogram::bucket_lower_micros(LatencyHistogram::bucket_index(129)), 129u);
  EXPECT_EQ(LatencyHistogram::bucket_upper_micros(LatencyHistogram::bucket_index(129)), 132u);
}

TEST(LatencyHistogram, RecordRoundsUpToWholeMicrosecondsAndKeepsTheExactSum) {
  LatencyHistogram histogram;
  histogram.record(nanoseconds(1));     // 1 µs
  histogram.record(nanoseconds(1000));  // 1 µs
  histogram.record(nanoseconds(1001));  // 2 µs
  histogram.record(nanoseconds(-5));    // 0 µs
  EXPECT_EQ(histogram.count(), 4u);
  EXPECT_EQ(histogram.bucket_count(0), 1u);
  EXPECT_EQ(histogram.bucket_count(1), 2u);
  EXPECT_EQ(histogram.bucket_count(2), 1u);
  EXPECT_EQ(histogram.sum(), nanoseconds(2002));
  EXPECT_EQ(histogram.min_micros(), 0u);
  EXPECT_EQ(histogram.max_micros(), 2u);
}

TEST(LatencyHistogram, EmptyReportsZeros) {
  const LatencyHistogram histogram;
  EXPECT_EQ(histogram.percentile_micros(0.99), 0u);
  EXPECT_EQ(histogram.max_micros(), 0u);
  EXPECT_EQ(histogram.min_micros(), 0u);
  EXPECT_EQ(histogram.cumulative_buckets().back().cumulative_count, 0u);
}

TEST(LatencyHistogram, PercentilesOfUniformDurationsAreWithinASixtyFourthOfExact) {
  LatencyHistogram histogram;
  for (std::uint64_t micros = 1; micros <= 100'000; ++micros) histogram.record(microseconds(micros));
  expect_within_promise(histogram.percentile_micros(0.50), 50'000);
  expect_within_promise(histogram.percentile_micros(0.90), 90'000);
  expect_within_promise(histogram.percentile_micros(0.99), 99'000);
  EXPECT_EQ(histogram.percentile_micros(1.0), 100'000u);
  EXPECT_EQ(histogram.percentile_micros(0.0), 1u);
  EXPECT_EQ(histogram.max_micros(), 100'000u);
}

TEST(LatencyHistogram, PercentilesOfLogNormalDurationsAreWithinTheStatedError) {
  // Commit-like durations: a median near 300 µs with a long tail.
  std::mt19937_64 random(42);
  std::lognormal_distribution<double> duration(std::log(300.0), 1.0);
  LatencyHistogram histogram;
  std::vector<std::uint64_t> recorded;
  for (int i = 0; i < 20'000; ++i) {
    const auto micros = static_cast<std::uint64_t>(duration(random));
    recorded.push_back(micros);
    histogram.record_micros(micros);
  }
  std::sort(recorded.begin(), recorded.end());
  for (const double quantile : {0.5, 0.9, 0.99, 0.999}) {
    const auto rank = static_cast<std::size_t>(std::ceil(quantile * static_cast<double>(recorded.size())));
    SCOPED_TRACE(quantile);
    expect_within_promise(histogram.percentile_micros(quantile), recorded[rank - 1]);
  }
  EXPECT_EQ(histogram.max_micros(), recorded.back());
}

TEST(LatencyHistogram, RareSlowCommitsMoveOnlyTheTail) {
  LatencyHistogram histogram;
  for (int i = 0; i < 990; ++i) histogram.record(microseconds(300));
  for (int i = 0; i < 10; ++i) histogram.record(microseconds(50'000));
  expect_within_promise(histogram.percentile_micros(0.99), 300);
  expect_within_promise(histogram.percentile_micros(0.995), 50'000);
  EXPECT_EQ(histogram.max_micros(), 50'000u);
}

TEST(LatencyHistogram, CumulativeBucketsArePowersOfTwoMicrosecondsInSecondsThenInf) {
  LatencyHistogram histogram;
  for (const std::uint64_t micros : {64ull, 65ull, 128ull, 129ull, 1ull << 32, (1ull << 32) + 1}) {
    histogram.record_micros(micros);
  }
  const auto buckets = histogram.cumulative_buckets();
  ASSERT_EQ(buckets.size(), 34u);
  for (int exponent = 0; exponent <= 32; ++exponent) {
    EXPECT_DOUBLE_EQ(buckets[exponent].upper_bound_seconds, std::ldexp(1.0, exponent) / 1e6);
  }
  EXPECT_TRUE(std::isinf(buckets.back().upper_bound_seconds));
  EXPECT_EQ(buckets[5].cumulative_count, 0u);  // le 32 µs
  EXPECT_EQ(buckets[6].cumulative_count, 1u);  // le 64 µs: 64 itself
  EXPECT_EQ(buckets[7].cumulative_count, 3u);  // le 128 µs
  EXPECT_EQ(buckets[8].cumulative_count, 4u);  // le 256 µs
  EXPECT_EQ(buckets[31].cumulative_count, 4u);
  EXPECT_EQ(buckets[32].cumulative_count, 5u);  // le 2^32 µs
  EXPECT_EQ(buckets[33].cumulative_count, 6u);  // +Inf: the overflow too
}

TEST(LatencyHistogram, RefusesAQuantileOutsideZeroToOneNamingIt) {
  const LatencyHistogram histogram;
  try {
    histogram.percentile_micros(1.5);
    FAIL() << "no error";
  } catch (const StateError& error) {
    EXPECT_EQ(error.kind(), ErrorKind::InvalidArgument);
    EXPECT_NE(std::string(error.what()).find("1.5"), std::string::npos) << error.what();
  }
  EXPECT_THROW(histogram.percentile_micros(std::nan("")), StateError);
  EXPECT_THROW(histogram.percentile_micros(-0.1), StateError);
  EXPECT_THROW(LatencyHistogram::bucket_lower_micros(LatencyHistogram::kBucketCount), StateError);
  EXPECT_THROW(histogram.bucket_count(LatencyHistogram::kBucketCount), StateError);
}

}  // namespace
}  // namespace processor
