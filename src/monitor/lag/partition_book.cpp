#include "monitor/lag/partition_book.hpp"

#include <algorithm>
#include <limits>
#include <span>
#include <utility>

namespace processor::monitor::internal {

namespace {
constexpr std::uint64_t kFree = std::numeric_limits<std::uint64_t>::max();
}  // namespace

std::uint32_t TopicTable::intern(std::string_view topic) {
  if (const auto it = ids_.find(topic); it != ids_.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names_.size());
  names_.emplace_back(topic);
  ids_.emplace(names_.back(), id);
  return id;
}

// ---- LogBook ----

std::uint32_t LogBook::slot(std::uint32_t topic_id, std::int32_t partition) {
  const std::uint64_t key = partition_key(topic_id, partition);
  if (const auto it = index_.find(key); it != index_.end()) return it->second;
  std::uint32_t slot;
  if (!free_.empty()) {
    slot = free_.back();
    free_.pop_back();
    keys_[slot] = key;
    tables_[slot] = LogEndTable(table_capacity_);
    log_start_[slot] = log_end_[slot] = -1;
  } else {
    slot = static_cast<std::uint32_t>(keys_.size());
    keys_.push_back(key);
    tables_.emplace_back(table_capacity_);
    log_start_.push_back(-1);
    log_end_.push_back(-1);
  }
  index_.emplace(key, slot);
  request_dirty_ = true;
  return slot;
}

void LogBook::retain(const std::vector<bool>& referenced) {
  for (std::uint32_t slot = 0; slot < keys_.size(); ++slot) {
    if (keys_[slot] == kFree || referenced[slot]) continue;
    index_.erase(keys_[slot]);
    keys_[slot] = kFree;
    tables_[slot] = LogEndTable(table_capacity_);  // gives its samples' memory back
    free_.push_back(slot);
    request_dirty_ = true;
  }
}

const std::vector<kafka::TopicPartition>& LogBook::request(const TopicTable& topics) {
  if (!request_dirty_) return request_;
  request_.clear();
  request_slots_.clear();
  for (std::uint32_t slot = 0; slot < keys_.size(); ++slot) {
    if (keys_[slot] == kFree) continue;
    request_.emplace_back(topics.name(static_cast<std::uint32_t>(keys_[slot] >> 32)),
                          static_cast<std::int32_t>(keys_[slot] & 0xFFFF'FFFFu));
    request_slots_.push_back(slot);
  }
  request_dirty_ = false;
  return request_;
}

void LogBook::record(const std::vector<LogOffsets>& answer, Micros now) {
  std::fill(log_start_.begin(), log_start_.end(), -1);
  std::fill(log_end_.begin(), log_end_.end(), -1);
  if (answer.size() != request_slots_.size()) return;
  for (std::size_t i = 0; i < answer.size(); ++i) {
    const std::uint32_t slot = request_slots_[i];
    if (answer[i].log_start_offset) log_start_[slot] = *answer[i].log_start_offset;
    if (answer[i].log_end_offset && *answer[i].log_end_offset >= 0) {
      log_end_[slot] = *answer[i].log_end_offset;
      tables_[slot].record(log_end_[slot], now);
    }
  }
}

// ---- GroupBook ----

std::uint32_t GroupBook::slot(std::uint32_t topic_id, std::int32_t partition, LogBook& logs,
                              std::size_t window_capacity) {
  const std::uint64_t key = partition_key(topic_id, partition);
  if (const auto it = index.find(key); it != index.end()) return it->second;
  const auto slot = static_cast<std::uint32_t>(slots.size());
  Slot fresh;
  fresh.topic_id = topic_id;
  fresh.partition = partition;
  fresh.log_slot = logs.slot(topic_id, partition);
  slots.push_back(fresh);
  windows.resize(slots.size() * window_capacity);
  index.emplace(key, slot);
  order_dirty = true;
  return slot;
}

void GroupBook::drop_unseen(std::uint64_t poll, std::size_t window_capacity) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].seen_in_poll != poll) continue;
    if (kept != i) {
      slots[kept] = slots[i];
      std::copy_n(windows.begin() + static_cast<std::ptrdiff_t>(i * window_capacity), window_capacity,
                  windows.begin() + static_cast<std::ptrdiff_t>(kept * window_capacity));
    }
    ++kept;
  }
  if (kept == slots.size()) return;
  slots.resize(kept);
  windows.resize(kept * window_capacity);
  index.clear();
  for (std::uint32_t i = 0; i < slots.size(); ++i)
    index.emplace(partition_key(slots[i].topic_id, slots[i].partition), i);
  order_dirty = true;
}

void GroupBook::assign_owners(TopicTable& topics) {
  for (Slot& slot : slots) slot.owner = -1;
  for (std::size_t m = 0; m < members->size(); ++m) {
    for (const kafka::TopicPartition& tp : (*members)[m].assignment) {
      const auto it = index.find(partition_key(topics.intern(tp.topic), tp.partition));
      if (it != index.end()) slots[it->second].owner = static_cast<std::int32_t>(m);
    }
  }
}

void GroupBook::evaluate(const LogBook& logs, Micros now, std::size_t window_capacity,
                         Micros max_extrapolation) {
  for (std::size_t i = 0; i < slots.size(); ++i) {
    Slot& slot = slots[i];
    const std::int64_t log_end = logs.log_end(slot.log_slot);
    if (error || log_end < 0 || slot.committed_offset < 0) {
      slot.lag = -1;
      slot.lag_seconds_source = TimeLagSource::None;
      slot.status = Status::Error;
      continue;
    }
    slot.lag = std::max<std::int64_t>(0, log_end - slot.committed_offset);
    WindowEntry* window = windows.data() + i * window_capacity;
    push_window(window, slot.window_count, window_capacity, {slot.committed_offset, slot.lag, now});
    slot.status = evaluate_status(std::span<const WindowEntry>(window, slot.window_count), window_capacity,
                                  slot.owner >= 0);
    const TimeLagEstimate estimate =
        logs.table(slot.log_slot).lag_at(slot.committed_offset, now, max_extrapolation);
    slot.lag_seconds = estimate.seconds.value_or(0.0);
    slot.lag_seconds_source = estimate.source;
  }
}

const std::vector<std::uint32_t>& GroupBook::sorted(const TopicTable& topics) {
  if (!order_dirty) return order;
  order.resize(slots.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    const Slot& x = slots[a];
    const Slot& y = slots[b];
    if (x.topic_id != y.topic_id) return topics.name(x.topic_id) < topics.name(y.topic_id);
    return x.partition < y.partition;
  });
  order_dirty = false;
  return order;
}

}  // namespace processor::monitor::internal
