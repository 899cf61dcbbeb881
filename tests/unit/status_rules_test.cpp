// Burrow's status rules over a synthetic window, one test per rule and its edges, with the two
// fixes: only the latest lag makes a partition OK (Burrow #290), and a caught-up consumer of a
// slow topic is never STOP.

#include "monitor/lag/status_rules.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace processor::monitor::internal {
namespace {

constexpr std::size_t kCapacity = 5;
constexpr bool kOwned = true;
constexpr bool kNotOwned = false;

// A window from (committed offset, lag) pairs, one poll per second.
std::vector<WindowEntry> window(std::initializer_list<std::pair<std::int64_t, std::int64_t>> polls) {
  std::vector<WindowEntry> entries;
  Micros at = 0;
  for (const auto& [committed, lag] : polls) entries.push_back({committed, lag, at += 1'000'000});
  return entries;
}

Status status_of(const std::vector<WindowEntry>& w, bool owned = kOwned) {
  return evaluate_status(w, kCapacity, owned);
}

TEST(StatusRules, EmptyWindowIsAnError) { EXPECT_EQ(status_of({}), Status::Error); }

TEST(StatusRules, CommittingAndLagShrinkingIsOk) {
  EXPECT_EQ(status_of(window({{10, 50}, {20, 45}, {30, 40}, {40, 30}, {50, 20}})), Status::Ok);
}

TEST(StatusRules, LatestLagZeroIsOkWhateverCameBefore) {
  // Stuck for four polls, then caught up: OK now.
  EXPECT_EQ(status_of(window({{10, 5}, {10, 6}, {10, 7}, {10, 8}, {18, 0}}), kNotOwned), Status::Ok);
}

TEST(StatusRules, AnEarlierZeroLagDoesNotMaskAStoppedConsumer) {
  // Burrow #290: Burrow says OK because the lag was 0 at the first poll. It was, once; the
  // consumer stopped then and the producer went on.
  const auto w = window({{100, 0}, {100, 10}, {100, 20}, {100, 30}, {100, 40}});
  // The window still holds the caught-up poll, so it is not a full window of lag yet...
  EXPECT_EQ(status_of(w, kNotOwned), Status::Ok);
  // ...one poll later it is, and the stop shows although a zero lag was seen before.
  const auto later = window({{100, 10}, {100, 20}, {100, 30}, {100, 40}, {100, 50}});
  EXPECT_EQ(status_of(later, kNotOwned), Status::Stop);
}

TEST(StatusRules, CommittedOffsetGoingBackwardsIsRewind) {
  EXPECT_EQ(status_of(window({{100, 5}, {110, 5}, {50, 70}})), Status::Rewind);
  // Even in a window that is not full yet.
  EXPECT_EQ(status_of(window({{100, 5}, {90, 20}})), Status::Rewind);
}

TEST(StatusRules, RewindToTheLogEndIsOkBecauseTheLatestLagIsZero) {
  EXPECT_EQ(status_of(window({{100, 5}, {110, 5}, {50, 0}})), Status::Ok);
}

TEST(StatusRules, OffsetNotMovingWithLagAndNoOwnerIsStop) {
  EXPECT_EQ(status_of(window({{100, 10}, {100, 20}, {100, 30}, {100, 40}, {100, 50}}), kNotOwned),
            Status::Stop);
}

TEST(StatusRules, OffsetNotMovingWithLagAndAnOwnerIsStall) {
  EXPECT_EQ(status_of(window({{100, 10}, {100, 20}, {100, 30}, {100, 40}, {100, 50}}), kOwned),
            Status::Stall);
  // A constant lag (no new records, a consumer that does not move) is stalled too.
  EXPECT_EQ(status_of(window({{100, 7}, {100, 7}, {100, 7}, {100, 7}, {100, 7}}), kOwned), Status::Stall);
}

TEST(StatusRules, StopAndStallNeedAFullWindow) {
  EXPECT_EQ(status_of(window({{100, 10}, {100, 20}, {100, 30}, {100, 40}}), kNotOwned), Status::Ok);
  EXPECT_EQ(status_of(window({{100, 10}}), kNotOwned), Status::Ok);
}

TEST(StatusRules, SlowTopicWithACaughtUpConsumerIsNeverStop) {
  // A record every few polls; the consumer commits it a poll later. The committed offset does
  // not move for most of the window, and the latest lag is 1: not STOP, not STALL.
  const auto w = window({{7, 0}, {7, 0}, {7, 1}, {8, 0}, {8, 1}});
  EXPECT_EQ(status_of(w, kNotOwned), Status::Ok);
  EXPECT_EQ(status_of(w, kOwned), Status::Ok);
  // Nothing produced at all for the whole window: caught up, OK.
  EXPECT_EQ(status_of(window({{8, 0}, {8, 0}, {8, 0}, {8, 0}, {8, 0}}), kNotOwned), Status::Ok);
}

TEST(StatusRules, CommittingWhileLagNeverDecreasesIsWarn) {
  EXPECT_EQ(status_of(window({{10, 5}, {20, 8}, {30, 8}, {40, 12}, {50, 20}})), Status::Warn);
}

TEST(StatusRules, CommittingWithOneDecreaseOfLagIsOk) {
  EXPECT_EQ(status_of(window({{10, 5}, {20, 8}, {30, 7}, {40, 12}, {50, 20}})), Status::Ok);
}

TEST(StatusRules, WarnNeedsAFullWindow) {
  EXPECT_EQ(status_of(window({{10, 5}, {20, 8}, {30, 9}})), Status::Ok);
}

TEST(StatusRules, RewindOutranksStop) {
  EXPECT_EQ(status_of(window({{100, 10}, {90, 20}, {90, 30}, {90, 40}, {90, 50}}), kNotOwned),
            Status::Rewind);
}

TEST(StatusRules, PushWindowKeepsTheLastPollsOldestFirst) {
  std::vector<WindowEntry> storage(3);
  std::uint32_t count = 0;
  for (std::int64_t i = 1; i <= 5; ++i) push_window(storage.data(), count, 3, {i, i * 10, i});
  EXPECT_EQ(count, 3u);
  EXPECT_EQ(storage[0].committed_offset, 3);
  EXPECT_EQ(storage[1].committed_offset, 4);
  EXPECT_EQ(storage[2].committed_offset, 5);
}

}  // namespace
}  // namespace processor::monitor::internal
