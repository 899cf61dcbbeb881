#pragma once
// internal: the monitor's per-partition state in flat vectors — interned topics, one LogEndTable
// per partition of the cluster (shared by the groups that read it), and per group one slot per
// partition with its sliding window. Not part of the API.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "monitor/lag/log_end_table.hpp"
#include "monitor/lag/status_rules.hpp"
#include "processor/kafka/group_admin.hpp"
#include "processor/monitor/lag_snapshot.hpp"
#include "processor/monitor/lag_source.hpp"

namespace processor::monitor::internal {

inline std::uint64_t partition_key(std::uint32_t topic_id, std::int32_t partition) {
  return (std::uint64_t{topic_id} << 32) | static_cast<std::uint32_t>(partition);
}

// Topic names, each stored once; looking up a known name allocates nothing.
class TopicTable {
 public:
  std::uint32_t intern(std::string_view topic);
  const std::string& name(std::uint32_t id) const { return names_[id]; }

 private:
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, std::uint32_t, Hash, std::equal_to<>> ids_;
  std::vector<std::string> names_;
};

// The logs of the partitions some watched group reads: their table and last ListOffsets answer.
class LogBook {
 public:
  explicit LogBook(std::size_t table_capacity) : table_capacity_(table_capacity) {}

  // The slot of the partition, added when new.
  std::uint32_t slot(std::uint32_t topic_id, std::int32_t partition);
  // Frees the slots whose `referenced` entry is false (indexed by slot).
  void retain(const std::vector<bool>& referenced);
  std::size_t slots() const noexcept { return keys_.size(); }

  // The partitions to ask ListOffsets for, one per live slot; rebuilt only when slots change.
  const std::vector<kafka::TopicPartition>& request(const TopicTable& topics);
  // Records the answer to request() (same order) observed at `now`; `answer` empty or of the
  // wrong size makes every log unknown for this poll.
  void record(const std::vector<LogOffsets>& answer, Micros now);

  std::int64_t log_start(std::uint32_t slot) const { return log_start_[slot]; }  // -1: unknown
  std::int64_t log_end(std::uint32_t slot) const { return log_end_[slot]; }      // -1: unknown
  const LogEndTable& table(std::uint32_t slot) const { return tables_[slot]; }

 private:
  std::size_t table_capacity_;
  std::unordered_map<std::uint64_t, std::uint32_t> index_;
  std::vector<std::uint64_t> keys_;  // per slot; kFree for a free slot
  std::vector<LogEndTable> tables_;
  std::vector<std::int64_t> log_start_;
  std::vector<std::int64_t> log_end_;
  std::vector<std::uint32_t> free_;
  std::vector<kafka::TopicPartition> request_;
  std::vector<std::uint32_t> request_slots_;
  bool request_dirty_ = true;
};

// One group: its description and a slot per partition it has an offset for.
struct GroupBook {
  struct Slot {
    std::uint32_t topic_id = 0;
    std::int32_t partition = 0;
    std::uint32_t log_slot = 0;
    std::int64_t committed_offset = -1;  // -1: none
    std::uint64_t seen_in_poll = 0;
    std::int32_t owner = -1;  // index in `members`, -1: no member owns it
    std::uint32_t window_count = 0;
    std::int64_t lag = -1;  // -1: no sample
    double lag_seconds = 0;
    TimeLagSource lag_seconds_source = TimeLagSource::None;
    Status status = Status::Error;
  };

  std::string state;
  std::string type;
  bool simple = false;
  bool error = false;  // the latest poll could not read this group
  // As last described; replaced only when the description changes, so that snapshots share it.
  std::shared_ptr<const std::vector<kafka::GroupMember>> members = no_members();
  std::unordered_map<std::uint64_t, std::uint32_t> index;
  std::vector<Slot> slots;
  std::vector<WindowEntry> windows;  // window_capacity entries per slot, oldest first
  std::vector<std::uint32_t> order;  // slots by topic name, then partition
  bool order_dirty = true;

  // The slot of the partition, added (with an empty window) when new.
  std::uint32_t slot(std::uint32_t topic_id, std::int32_t partition, LogBook& logs,
                     std::size_t window_capacity);
  // Removes the slots not seen in `poll` (offsets deleted or expired).
  void drop_unseen(std::uint64_t poll, std::size_t window_capacity);
  // Sets each slot's owner from `members`' assignments.
  void assign_owners(TopicTable& topics);
  // Evaluates every slot at `now`: lag, window, status, lag in seconds. The hot path.
  void evaluate(const LogBook& logs, Micros now, std::size_t window_capacity, Micros max_extrapolation);
  const std::vector<std::uint32_t>& sorted(const TopicTable& topics);
};

}  // namespace processor::monitor::internal
