#pragma once
// processor::monitor::LagMonitor: polls a cluster's consumer groups and says, per partition, how
// far each group is behind (offsets and seconds) and whether it is healthy (Burrow's status).

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "processor/monitor/lag_snapshot.hpp"
#include "processor/monitor/lag_source.hpp"

namespace processor::monitor {

struct LagMonitorOptions {
  // The groups to watch.
  // Default: empty, every group the source lists; a group that vanishes from the source (its
  // offsets expired or were deleted) stops being reported. Named groups are reported even when
  // they do not exist (state "Dead", no partitions).
  std::vector<std::string> groups;

  // Time between two polls of the background thread (start()).
  // Default: 5 s — a commit interval (librdkafka's auto.commit.interval.ms is 5 s), so that a
  // healthy consumer moves its offset between most polls; each poll costs one OffsetFetch per
  // group and two ListOffsets for all partitions. Raise it for clusters of many thousands of groups.
  std::chrono::milliseconds interval{5000};

  // Polls per partition in the sliding window the status is evaluated over.
  // Default: 10 — with the 5 s interval, 50 s: a stopped consumer shows STOP within a minute,
  // and one late commit does not. Raise it for consumers that commit less often than every
  // interval * window / 2.
  std::size_t window = 10;

  // (log-end offset, time) samples kept per partition to turn an offset lag into seconds.
  // Default: 60 (kafka-lag-exporter's lookup table size) — 5 min of history at a steady rate at
  // the 5 s interval, up to 1.4 KiB per partition. A committed offset older than the table is
  // extrapolated at the table's rate; raise it to interpolate lags of more minutes.
  std::size_t table_capacity = 60;

  // The most an extrapolation reaches back before the table's oldest sample.
  // Default: 1 h — a rate measured over minutes says little about hours ago; the lag in seconds
  // of a consumer further behind is reported as the table's age plus 1 h, marked "extrapolated".
  std::chrono::seconds max_extrapolation{3600};

  // Snapshots kept in history() (the chart's time axis). Each holds every watched partition
  // (~200 B each: ~20 MB per snapshot at 10^5 partitions), so lower it for large clusters; 0 keeps
  // none (latest() still works).
  // Default: 60 — five minutes at the 5 s interval.
  std::size_t history_capacity = 60;
};

// LagMonitor keeps, for every watched group and partition, a window of the last polls and a table
// of the log end's progress, and produces one LagSnapshot per poll: offset lag, lag in seconds,
// status per partition, the group's state, members and worst status. A group whose describe or
// OffsetFetch fails is reported as ERR that poll; a failed ListOffsets makes the partitions ERR;
// neither stops the other groups.
//
// Lag in seconds: now minus the time the log end was at the committed offset, interpolated in the
// table of (log-end offset, time) samples, or extrapolated at the table's rate (at most
// max_extrapolation) for an offset older than the table; 0 at the log end; none without a rate.
// Status, over the last `window` polls (Burrow's rules, two fixed): ERR without a sample; OK when
// the latest lag is 0; REWIND when the committed offset went back; then, only for a full window
// whose every lag is above 0, STOP (offset still, no member owns the partition), STALL (offset
// still, a member owns it) or WARN (offset moves, lag never decreases); OK otherwise.
//
// Evaluation is the hot path: per partition and poll it does no allocation besides the snapshot's
// own strings (topics are interned, states live in flat vectors).
//
// Safe for concurrent use by multiple threads: polls are serialized; latest(), history() and
// stats() may be called at any time, also while the background thread polls. start() and stop()
// must not be called concurrently with each other (or with the destructor).
class LagMonitor {
 public:
  // Throws StateError(InvalidArgument) naming the option when interval <= 0, window < 2,
  // table_capacity < 2, max_extrapolation < 0 or source is null.
  LagMonitor(std::shared_ptr<LagSource> source, LagMonitorOptions options = {});
  // Stops the background thread if it runs. Never throws.
  ~LagMonitor();
  LagMonitor(const LagMonitor&) = delete;
  LagMonitor& operator=(const LagMonitor&) = delete;

  // Polls the source once, as if at `now` (tests drive time through it), adds the snapshot to the
  // history and returns it. Never throws for the source's errors (they become ERR and
  // MonitorStats::poll_errors).
  LagSnapshot poll_once(std::chrono::system_clock::time_point now = std::chrono::system_clock::now());

  // Starts polling every `interval` on a thread of its own (the first poll at once). Calling it
  // while running does nothing.
  void start();
  // Stops the thread, waiting for a poll in progress. Calling it when stopped does nothing.
  void stop();

  // The last snapshot (empty before the first poll).
  LagSnapshot latest() const;
  // A copy of the kept snapshots, oldest first.
  LagHistory history() const;
  MonitorStats stats() const;

  const LagMonitorOptions& options() const noexcept;

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::monitor
