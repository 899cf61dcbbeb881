#pragma once
// processor::Watermark, an event-time watermark.

#include <chrono>
#include <compare>
#include <cstdint>
#include <ostream>

namespace processor {

// An event-time watermark in epoch milliseconds: the assertion that no event older than it is
// still to come. Ordered; a plain value type, safe to copy between threads.
class Watermark {
 public:
  explicit constexpr Watermark(std::int64_t epoch_ms) noexcept : epoch_ms_(epoch_ms) {}

  // The watermark at a wall-clock time point (truncated to milliseconds).
  static Watermark from_time_point(std::chrono::system_clock::time_point time) noexcept {
    return Watermark(std::chrono::duration_cast<std::chrono::milliseconds>(time.time_since_epoch()).count());
  }

  // The watermark in milliseconds since the Unix epoch.
  constexpr std::int64_t millis() const noexcept { return epoch_ms_; }

  friend constexpr auto operator<=>(Watermark, Watermark) noexcept = default;

 private:
  std::int64_t epoch_ms_;
};

inline std::ostream& operator<<(std::ostream& out, Watermark watermark) {
  return out << "Watermark(" << watermark.millis() << "ms)";
}

}  // namespace processor
