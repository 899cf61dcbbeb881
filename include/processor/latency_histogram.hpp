#pragma once
// processor::LatencyHistogram, durations counted in fixed log-linear buckets.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace processor {

// LatencyHistogram counts durations in whole microseconds (rounded up) in fixed buckets laid out
// as HdrHistogram lays them out: one bucket per microsecond up to 64 µs, then every power of two
// (2^k, 2^(k+1)] µs split into 32 equal buckets, up to 2^32 µs (71.6 minutes); longer durations
// go to one overflow bucket. A bucket is therefore at most 1/32 of its lower bound wide, and a
// percentile, reported at its bucket's midpoint, is within 1/64 (1.6%) of the exact value.
//
// Bucket upper bounds are inclusive, as Prometheus' `le`: a duration of exactly 128 µs counts in
// the bucket that ends at 128 µs. Recording allocates nothing and costs a few instructions; the
// histogram is about 7 KiB, held inline.
//
// A plain value type, not synchronized: its owner guards it (OffsetManager under its stats
// mutex) and hands out copies.
class LatencyHistogram {
 public:
  // Durations above this many microseconds go to the overflow bucket.
  static constexpr std::uint64_t kMaxTrackedMicros = std::uint64_t{1} << 32;
  // 0..64 µs, 26 powers of two of 32 buckets each, and the overflow bucket.
  static constexpr std::size_t kBucketCount = 65 + 26 * 32 + 1;

  // Counts one duration. Negative durations count as 0; a fraction of a microsecond rounds up.
  void record(std::chrono::nanoseconds duration) noexcept;
  void record_micros(std::uint64_t micros) noexcept;

  std::uint64_t count() const noexcept { return count_; }
  // The sum of the recorded durations, exact to the nanosecond given to record().
  std::chrono::nanoseconds sum() const noexcept { return std::chrono::nanoseconds(sum_nanos_); }
  double sum_seconds() const noexcept { return static_cast<double>(sum_nanos_) / 1e9; }
  // The longest and shortest recorded durations in (rounded-up) microseconds, exactly; 0 when empty.
  std::uint64_t max_micros() const noexcept { return max_micros_; }
  std::uint64_t min_micros() const noexcept { return count_ == 0 ? 0 : min_micros_; }

  // The duration in microseconds below or at which a fraction `quantile` of the recorded ones
  // lie: the midpoint of the bucket holding the ceil(quantile * count())-th shortest, kept within
  // [min_micros(), max_micros()], so within 1/64 of it; quantile 1 gives max_micros() exactly.
  // 0 when empty. Throws StateError(InvalidArgument) when quantile is not in [0, 1].
  std::uint64_t percentile_micros(double quantile) const;

  // One bucket of the Prometheus exposition: how many durations are at or below the bound.
  struct CumulativeBucket {
    double upper_bound_seconds = 0;  // +infinity for the last bucket
    std::uint64_t cumulative_count = 0;
  };
  // The buckets for a Prometheus histogram in seconds: one per power of two microseconds, from
  // 1 µs to 2^32 µs (33 bounds, each an exact bucket edge, so the counts are exact), then +Inf,
  // whose count is count(). The bounds never change, so series stay the same across scrapes.
  std::vector<CumulativeBucket> cumulative_buckets() const;

  // ---- The fine buckets, by index in [0, kBucketCount) ----

  // The index of the bucket that counts `micros`.
  static std::size_t bucket_index(std::uint64_t micros) noexcept;
  // The bucket's smallest and largest durations in microseconds (both inclusive; the overflow
  // bucket's upper is UINT64_MAX). Throws StateError(InvalidArgument) for an index out of range.
  static std::uint64_t bucket_lower_micros(std::size_t index);
  static std::uint64_t bucket_upper_micros(std::size_t index);
  // How many recorded durations the bucket counts. Throws as above.
  std::uint64_t bucket_count(std::size_t index) const;

  friend bool operator==(const LatencyHistogram&, const LatencyHistogram&) = default;

 private:
  std::array<std::uint64_t, kBucketCount> counts_{};
  std::uint64_t count_ = 0;
  std::uint64_t sum_nanos_ = 0;
  std::uint64_t min_micros_ = UINT64_MAX;
  std::uint64_t max_micros_ = 0;
};

}  // namespace processor
