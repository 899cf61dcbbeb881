#pragma once
// processor::monitor: what the lag monitor measured at one instant (LagSnapshot), and the
// history of those instants that the chart draws (LagHistory). Plain values: the monitor
// produces them, the Prometheus exporter, `offsetctl lag` and the SVG chart read them.

#include <chrono>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "processor/kafka/group_admin.hpp"

namespace processor::monitor {

// Burrow's consumer status, evaluated over a sliding window of committed offsets and lag.
// Ordered by severity: a group's status is its worst partition's.
enum class Status {
  Ok,      // committing, and lag is not growing throughout the window
  Warn,    // committing, but lag grew (or stayed above zero) throughout the window
  Stall,   // lag above zero, and the committed offset did not move throughout the window
  Stop,    // the last commit is older than the window, while lag is above zero
  Rewind,  // the committed offset went backwards within the window
  Error,   // the partition could not be evaluated (no sample, a broker error)
};
std::string_view status_name(Status status);  // "OK", "WARN", "STALL", "STOP", "REWIND", "ERR"

// Where a partition's lag in seconds comes from; the exporter puts it in a label.
enum class TimeLagSource {
  None,             // no estimate (not enough samples): no lag_seconds sample is exported
  Interpolated,     // committed offset inside the table of (log-end offset, time) samples
  Extrapolated,     // committed offset older than the table, extrapolated with its rate
  LowerBound,       // older than a table without a rate (an idle topic): at least this far behind
  RecordTimestamp,  // now minus the timestamp of the record at the committed offset
};
std::string_view time_lag_source_name(TimeLagSource source);  // "none", "interpolated", ...

struct PartitionLag {
  std::string topic;
  std::int32_t partition = 0;
  std::optional<std::int64_t> committed_offset;  // nullopt: the group has none for it
  std::optional<std::int64_t> log_start_offset;  // nullopt: the broker did not answer
  std::optional<std::int64_t> log_end_offset;    // nullopt: the broker did not answer
  // Never negative; nullopt when either offset is unknown ("no sample", never -1 or NaN).
  std::optional<std::int64_t> lag;
  std::optional<double> lag_seconds;  // never negative; nullopt with TimeLagSource::None
  TimeLagSource lag_seconds_source = TimeLagSource::None;
  Status status = Status::Error;
  std::string member_id;  // "" when no member owns the partition
  std::string client_id;
  std::string host;
};

// The empty member list, shared (a group without members, or not described yet).
const std::shared_ptr<const std::vector<kafka::GroupMember>>& no_members();

struct GroupLag {
  std::string group;
  std::string state;  // the coordinator's group state: "Stable", "Empty", ... ("" when unknown)
  // The group's type as Kafka's tools print it: "Classic" or "Consumer" (Kafka 4's consumer group
  // protocol); "" until the group has been described once, and for a group that does not exist
  // (state "Dead"). Share groups are not seen (README).
  std::string type;
  std::int32_t members = 0;
  // The members as the coordinator last described them: ids, client and host, assignment, and
  // for a consumer-protocol group the target assignment. Never null. Shared, unchanged, between
  // the snapshots of the history while the group's membership does not change.
  std::shared_ptr<const std::vector<kafka::GroupMember>> member_list = no_members();
  bool simple = false;            // a group that only commits offsets (no protocol type), e.g. an assign()er
  Status status = Status::Error;  // the worst partition status (Ok for a group without partitions)
  std::vector<PartitionLag> partitions;  // ordered by topic, then partition

  // Aggregates over partitions whose value is known; nullopt when none is.
  std::optional<std::int64_t> max_lag() const;
  std::optional<double> max_lag_seconds() const;
  std::optional<std::int64_t> sum_lag() const;
};

// The monitor's own figures, cumulative since it started (exported as _total/_seconds metrics).
struct MonitorStats {
  std::uint64_t polls = 0;                 // polls of the cluster
  std::uint64_t poll_errors = 0;           // polls (or a group's part of one) that failed
  double last_poll_seconds = 0;            // how long the last poll of the cluster took
  double last_evaluation_seconds = 0;      // how long evaluating its samples took
  std::uint64_t partitions_evaluated = 0;  // partition-offsets evaluated
};

struct LagSnapshot {
  std::chrono::system_clock::time_point taken_at{};
  std::vector<GroupLag> groups;  // ordered by group name
  MonitorStats stats;
};

// The last snapshots, oldest first, bounded by `capacity` (the chart's time axis).
class LagHistory {
 public:
  explicit LagHistory(std::size_t capacity = 720) : capacity_(capacity) {}
  void add(LagSnapshot snapshot);
  const std::deque<LagSnapshot>& snapshots() const noexcept { return snapshots_; }
  std::size_t capacity() const noexcept { return capacity_; }

 private:
  std::size_t capacity_;
  std::deque<LagSnapshot> snapshots_;
};

}  // namespace processor::monitor
