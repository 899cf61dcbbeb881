#include "processor/latency_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <string>

#include "processor/error.hpp"

namespace processor {

namespace {

// Durations 0..kLinear µs have a bucket each; above, (2^k, 2^(k+1)] is split in kSubBuckets.
constexpr std::uint64_t kLinear = 64;
constexpr int kSubBucketBits = 5;
constexpr std::uint64_t kSubBuckets = std::uint64_t{1} << kSubBucketBits;
constexpr int kFirstExponent = 6;  // log2(kLinear)
constexpr std::size_t kOverflow = LatencyHistogram::kBucketCount - 1;
static_assert(kOverflow == kLinear + 1 + (32 - kFirstExponent) * kSubBuckets);

void check_index(std::size_t index) {
  if (index >= LatencyHistogram::kBucketCount) {
    throw StateError(ErrorKind::InvalidArgument, "histogram bucket index " + std::to_string(index) +
                                                     " is not below " +
                                                     std::to_string(LatencyHistogram::kBucketCount));
  }
}

}  // namespace

std::size_t LatencyHistogram::bucket_index(std::uint64_t micros) noexcept {
  if (micros <= kLinear) return static_cast<std::size_t>(micros);
  if (micros > kMaxTrackedMicros) return kOverflow;
  // Buckets end at their upper bound: (lower, upper]. Indexing micros - 1 in the half-open
  // layout [2^k, 2^(k+1)) gives exactly that.
  const std::uint64_t below = micros - 1;
  const int exponent = std::bit_width(below) - 1;  // >= kFirstExponent
  const std::uint64_t sub_bucket = (below >> (exponent - kSubBucketBits)) - kSubBuckets;
  return static_cast<std::size_t>(
      kLinear + 1 + static_cast<std::uint64_t>(exponent - kFirstExponent) * kSubBuckets + sub_bucket);
}

std::uint64_t LatencyHistogram::bucket_lower_micros(std::size_t index) {
  check_index(index);
  if (index <= kLinear) return index;
  if (index == kOverflow) return kMaxTrackedMicros + 1;
  const std::size_t fine = index - kLinear - 1;
  const int exponent = static_cast<int>(fine / kSubBuckets) + kFirstExponent;
  return ((kSubBuckets + fine % kSubBuckets) << (exponent - kSubBucketBits)) + 1;
}

std::uint64_t LatencyHistogram::bucket_upper_micros(std::size_t index) {
  check_index(index);
  if (index <= kLinear) return index;
  if (index == kOverflow) return std::numeric_limits<std::uint64_t>::max();
  const std::size_t fine = index - kLinear - 1;
  const int exponent = static_cast<int>(fine / kSubBuckets) + kFirstExponent;
  return (kSubBuckets + fine % kSubBuckets + 1) << (exponent - kSubBucketBits);
}

std::uint64_t LatencyHistogram::bucket_count(std::size_t index) const {
  check_index(index);
  return counts_[index];
}

void LatencyHistogram::record(std::chrono::nanoseconds duration) noexcept {
  const std::uint64_t nanos = duration.count() > 0 ? static_cast<std::uint64_t>(duration.count()) : 0;
  const std::uint64_t micros = nanos / 1000 + (nanos % 1000 != 0 ? 1 : 0);
  ++counts_[bucket_index(micros)];
  ++count_;
  sum_nanos_ += nanos;
  min_micros_ = std::min(min_micros_, micros);
  max_micros_ = std::max(max_micros_, micros);
}

void LatencyHistogram::record_micros(std::uint64_t micros) noexcept {
  ++counts_[bucket_index(micros)];
  ++count_;
  sum_nanos_ += micros * 1000;
  min_micros_ = std::min(min_micros_, micros);
  max_micros_ = std::max(max_micros_, micros);
}

std::uint64_t LatencyHistogram::percentile_micros(double quantile) const {
  if (!(quantile >= 0.0 && quantile <= 1.0)) {
    throw StateError(ErrorKind::InvalidArgument,
                     "quantile " + std::to_string(quantile) + " is not in [0, 1]");
  }
  if (count_ == 0) return 0;
  if (quantile == 1.0) return max_micros_;
  const auto rank = std::max<std::uint64_t>(
      1, static_cast<std::uint64_t>(std::ceil(quantile * static_cast<double>(count_))));
  std::uint64_t seen = 0;
  for (std::size_t index = 0; index < kBucketCount; ++index) {
    seen += counts_[index];
    if (seen < rank) continue;
    if (index == kOverflow) return max_micros_;
    const std::uint64_t lower = bucket_lower_micros(index);
    const std::uint64_t midpoint = lower + (bucket_upper_micros(index) - lower) / 2;
    return std::clamp(midpoint, min_micros_, max_micros_);
  }
  return max_micros_;  // not reached: the counts sum to count_
}

std::vector<LatencyHistogram::CumulativeBucket> LatencyHistogram::cumulative_buckets() const {
  std::vector<CumulativeBucket> buckets;
  buckets.reserve(34);
  std::uint64_t seen = 0;
  std::size_t index = 0;
  for (int exponent = 0; exponent <= 32; ++exponent) {
    const std::uint64_t bound = std::uint64_t{1} << exponent;
    // Every power of two is some bucket's upper bound, so the count at it is exact.
    for (; index < kOverflow && bucket_upper_micros(index) <= bound; ++index) seen += counts_[index];
    buckets.push_back({static_cast<double>(bound) / 1e6, seen});
  }
  buckets.push_back({std::numeric_limits<double>::infinity(), count_});
  return buckets;
}

}  // namespace processor
