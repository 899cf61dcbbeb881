#include "kafka/manager/event_time_gate.hpp"

#include <algorithm>
#include <limits>

namespace processor::kafka::detail {

void EventTimeGate::add(std::int64_t offset, std::int64_t event_time, std::int64_t plain_offset) {
  while (!runs.empty() && runs.front().offset <= plain_offset) runs.pop_front();
  if (runs.empty()) start = offset - 1;
  const std::int64_t max_event_time =
      runs.empty() ? event_time : std::max(runs.back().max_event_time, event_time);
  if (!runs.empty() && runs.back().max_event_time == max_event_time) {
    runs.back().offset = offset;  // committable exactly when the run before it is
  } else {
    runs.push_back({offset, max_event_time});
  }
  if (runs.size() > kMaxRuns) {
    // Halve: each pair becomes its later run (whose max event time is the pair's maximum).
    std::deque<Run> merged;
    for (std::size_t i = 0; i < runs.size(); i += 2) merged.push_back(runs[std::min(i + 1, runs.size() - 1)]);
    runs.swap(merged);
  }
}

std::int64_t EventTimeGate::committable(std::int64_t watermark, std::int64_t plain_offset) {
  while (!runs.empty() && runs.front().offset <= plain_offset) runs.pop_front();
  std::int64_t result = kNoOffset;
  for (const Run& run : runs) {
    if (run.max_event_time > watermark) break;
    result = run.offset;
  }
  return result;
}

void EventTimeGate::release_through(std::int64_t committed_offset) {
  while (!runs.empty() && runs.front().offset <= committed_offset) runs.pop_front();
  start = std::max(start, committed_offset);
}

std::int64_t EventTimeGate::release_bound(std::int64_t watermark) const noexcept {
  std::int64_t released = start;
  for (const Run& run : runs) {
    if (run.max_event_time > watermark) return released;
    released = run.offset;
  }
  return std::numeric_limits<std::int64_t>::max();
}

}  // namespace processor::kafka::detail
