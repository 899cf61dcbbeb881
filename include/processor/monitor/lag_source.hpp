#pragma once
// processor::monitor::LagSource: where the lag monitor reads a cluster's consumer groups and logs.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "processor/kafka/group_admin.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::monitor {

// A partition's log, as ListOffsets answers it; nullopt where the broker did not answer.
struct LogOffsets {
  std::optional<std::int64_t> log_start_offset;
  std::optional<std::int64_t> log_end_offset;
};

// LagSource is what LagMonitor polls: the Admin API of a cluster (GroupAdminLagSource), or a
// fake in tests and benchmarks. Every call may throw StateError (any kind); the monitor turns a
// failure into ERR for what the call was about (one group, or the partitions of the logs asked),
// never into a failed poll of the other groups.
//
// The monitor calls a source from one thread at a time.
class LagSource {
 public:
  virtual ~LagSource() = default;

  // Every consumer group of the cluster (names, any order).
  virtual std::vector<std::string> list_groups() = 0;

  // One description per name, in the order given (state "Dead" for a group that does not exist).
  virtual std::vector<kafka::GroupDescription> describe_groups(const std::vector<std::string>& groups) = 0;

  // The offsets the group committed, one per partition; empty when it has none.
  virtual std::vector<kafka::CommittedOffset> committed_offsets(std::string_view group) = 0;

  // The log start and end offsets of many partitions at once, one per partition in the order
  // given. The monitor asks the same list poll after poll while the partitions do not change.
  virtual std::vector<LogOffsets> log_offsets(const std::vector<kafka::TopicPartition>& partitions) = 0;
};

}  // namespace processor::monitor
