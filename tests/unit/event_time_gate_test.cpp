// The event-time gate's memory bound, tested on the internal structure.
#include "kafka/manager/event_time_gate.hpp"

#include <gtest/gtest.h>

#include <random>

namespace processor::kafka::detail {
namespace {

// The exact rule: the highest offset whose event time and every earlier one are <= watermark.
std::int64_t exact_committable(const std::vector<std::pair<std::int64_t, std::int64_t>>& tracked,
                               std::int64_t watermark) {
  std::int64_t result = kNoOffset;
  std::int64_t prefix_max = std::numeric_limits<std::int64_t>::min();
  for (const auto& [offset, event_time] : tracked) {
    prefix_max = std::max(prefix_max, event_time);
    if (prefix_max > watermark) break;
    result = offset;
  }
  return result;
}

TEST(EventTimeGate, EqualGatingStatesShareOneRun) {
  EventTimeGate gate;
  for (std::int64_t offset = 0; offset < 1'000'000; ++offset) gate.add(offset, 5000, kNoOffset);
  EXPECT_EQ(gate.runs.size(), 1u);
  EXPECT_EQ(gate.committable(5000, kNoOffset), 999'999);
}

TEST(EventTimeGate, AMillionRisingEventTimesUnderAStalledWatermarkStayBounded) {
  EventTimeGate gate;
  for (std::int64_t offset = 0; offset < 1'000'000; ++offset) gate.add(offset, offset * 10, kNoOffset);
  EXPECT_LE(gate.runs.size(), EventTimeGate::kMaxRuns);
  EXPECT_EQ(gate.committable(-1, kNoOffset), kNoOffset);
  // Once the watermark catches up, everything is released.
  EXPECT_EQ(gate.committable(10'000'000, kNoOffset), 999'999);
}

TEST(EventTimeGate, MergedRunsNeverReleaseAnOffsetEarly) {
  std::mt19937_64 random(42);
  EventTimeGate gate;
  std::vector<std::pair<std::int64_t, std::int64_t>> tracked;
  for (std::int64_t offset = 0; offset < 50'000; ++offset) {
    const std::int64_t event_time = offset * 3 + static_cast<std::int64_t>(random() % 1000);
    gate.add(offset, event_time, kNoOffset);
    tracked.emplace_back(offset, event_time);
  }
  ASSERT_LE(gate.runs.size(), EventTimeGate::kMaxRuns);
  for (std::int64_t watermark = 0; watermark < 160'000; watermark += 997) {
    const std::int64_t released = gate.committable(watermark, kNoOffset);
    EXPECT_LE(released, exact_committable(tracked, watermark)) << "watermark " << watermark;
  }
}

}  // namespace
}  // namespace processor::kafka::detail
