#pragma once
// Times as the stored formats keep them: i64 microseconds since the Unix epoch (stored offsets in
// kafka/store/stored_offset_format.cpp, checkpoint records in kafka/checkpoint/checkpoint_record.cpp).

#include <chrono>
#include <cstdint>
#include <optional>

namespace processor::encoding {

inline std::int64_t to_epoch_micros(std::chrono::system_clock::time_point at) noexcept {
  return std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
}

// The time point `micros` names, or nullopt when system_clock cannot hold it (its ticks are
// nanoseconds with libstdc++: about ±292 years). Stored bytes are untrusted: converting an
// out-of-range value would overflow.
inline std::optional<std::chrono::system_clock::time_point> from_epoch_micros(std::int64_t micros) noexcept {
  using Clock = std::chrono::system_clock;
  constexpr auto kMax = std::chrono::duration_cast<std::chrono::microseconds>(Clock::duration::max()).count();
  constexpr auto kMin = std::chrono::duration_cast<std::chrono::microseconds>(Clock::duration::min()).count();
  if (micros > kMax || micros < kMin) return std::nullopt;
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::microseconds(micros)));
}

}  // namespace processor::encoding
