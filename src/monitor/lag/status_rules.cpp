#include "monitor/lag/status_rules.hpp"

namespace processor::monitor::internal {

Status evaluate_status(std::span<const WindowEntry> window, std::size_t capacity, bool owned) {
  if (window.empty()) return Status::Error;
  if (window.back().lag == 0) return Status::Ok;

  for (std::size_t i = 1; i < window.size(); ++i) {
    if (window[i].committed_offset < window[i - 1].committed_offset) return Status::Rewind;
  }
  if (window.size() < capacity) return Status::Ok;  // not enough polls to say more

  bool offset_moved = false;
  bool lag_decreased = false;
  for (std::size_t i = 0; i < window.size(); ++i) {
    if (window[i].lag == 0) return Status::Ok;  // caught up within the window: a slow topic
    if (i == 0) continue;
    offset_moved = offset_moved || window[i].committed_offset != window[i - 1].committed_offset;
    lag_decreased = lag_decreased || window[i].lag < window[i - 1].lag;
  }
  if (!offset_moved) return owned ? Status::Stall : Status::Stop;
  if (!lag_decreased) return Status::Warn;
  return Status::Ok;
}

}  // namespace processor::monitor::internal
