#pragma once
// internal: Burrow's evaluation of one partition of one group over a sliding window of the last
// polls, with two fixes. Not part of the API; the monitor applies it to every partition each poll.
//
// The rules, in order (the first that matches decides):
//   ERR     no sample: the window is empty (no committed offset or no log end seen yet), or the
//           latest poll could not read the partition's lag (the caller says so).
//   OK      the LATEST lag is 0. Burrow says OK when ANY lag of the window is 0, which hides a
//           consumer that was caught up and then stopped (Burrow issue #290).
//   REWIND  the committed offset went backwards between two polls of the window.
//   -- the next three need a full window whose every lag is above 0: a consumer that is caught up
//      at some poll of the window and has nothing to commit because no records arrive (a slow
//      topic) is not stopped, stalled or slow. --
//   STOP    the committed offset did not move throughout the window, and no member of the group
//           owns the partition: nobody commits it any more.
//   STALL   the same, while a member owns the partition: a consumer that is alive but stuck (or
//           commits the same offset again and again, which a poll of the offsets cannot tell
//           apart from not committing).
//   WARN    the committed offset moves, but the lag never decreased between two polls of the
//           window: the consumer is slower than the producers.
//   OK      otherwise.

#include <cstddef>
#include <cstdint>
#include <span>

#include "monitor/lag/log_end_table.hpp"
#include "processor/monitor/lag_snapshot.hpp"

namespace processor::monitor::internal {

// One poll of one partition of one group.
struct WindowEntry {
  std::int64_t committed_offset = 0;
  std::int64_t lag = 0;  // >= 0
  Micros observed_at = 0;
};

// `window` holds the polls oldest first, at most `capacity` of them; `owned` says whether a member
// of the group owns the partition at the latest poll.
Status evaluate_status(std::span<const WindowEntry> window, std::size_t capacity, bool owned);

// A fixed-capacity window kept contiguous (oldest first) in a caller-owned array, so that the
// monitor keeps every partition's window in one flat vector.
// REQUIRES: `storage` has room for `capacity` entries; `count` is the window's own counter.
inline void push_window(WindowEntry* storage, std::uint32_t& count, std::size_t capacity, WindowEntry entry) {
  if (count == capacity) {
    for (std::size_t i = 1; i < capacity; ++i) storage[i - 1] = storage[i];
    storage[capacity - 1] = entry;
  } else {
    storage[count++] = entry;
  }
}

}  // namespace processor::monitor::internal
