#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "processor/latency_histogram.hpp"

namespace processor::kafka {

// OffsetInfo is what is known about one partition's committed position. `offset` is Kafka's
// committed offset: the next offset to consume (last processed record + 1).
// A plain value type.
struct OffsetInfo {
  std::int64_t offset = 0;
  // The partition's high watermark (log end offset) when this offset was recorded, if known.
  std::optional<std::int64_t> high_watermark;
  std::chrono::system_clock::time_point last_updated{};
  // Commit metadata stored with the offset (Kafka's OffsetCommit metadata string).
  std::optional<std::string> metadata;
  // The leader epoch of the last consumed record, when known (used by Kafka for truncation
  // detection).
  std::optional<std::int32_t> leader_epoch;

  OffsetInfo() = default;
  // last_updated is now.
  explicit OffsetInfo(std::int64_t committed_offset);

  static OffsetInfo with_high_watermark(std::int64_t committed_offset, std::int64_t high_watermark);

  // high_watermark - offset, when the high watermark is known. Not clamped.
  std::optional<std::int64_t> lag() const;

  friend bool operator==(const OffsetInfo&, const OffsetInfo&) = default;
};

// Commits of an OffsetManager by where they were written.
struct StoreCommits {
  // The offset store's OffsetStore::kind() ("kafka", "state_backend", "memory", or a custom
  // store's own name), or "transaction" for offsets committed in a producer's transaction
  // (OffsetManager::mark_committed()).
  std::string store;
  std::uint64_t successful = 0;
  std::uint64_t failed = 0;  // always 0 for "transaction": those commits fail in the producer
};

// Counters of an OffsetManager's commits since construction.
struct OffsetStats {
  std::uint64_t total_commits = 0;  // non-empty commits attempted
  std::uint64_t successful_commits = 0;
  std::uint64_t failed_commits = 0;
  std::uint64_t total_offsets_committed = 0;  // partitions written, summed over successful commits
  std::optional<std::chrono::system_clock::time_point> last_commit_time;  // last successful commit
  std::uint64_t avg_commit_duration_ms = 0;  // mean duration of successful commits

  // Durations of the successful commits to the offset store (commit(), automatic commits and
  // checkpoint completions; not mark_committed(), which writes nothing), from the store call to
  // the committed view updated. The percentiles are commit_latency's, in microseconds, within
  // 1.6% (see LatencyHistogram); max is exact. All 0 before the first such commit.
  std::uint64_t commit_latency_p50_us = 0;
  std::uint64_t commit_latency_p90_us = 0;
  std::uint64_t commit_latency_p99_us = 0;
  std::uint64_t commit_latency_max_us = 0;
  LatencyHistogram commit_latency;
  // successful_commits and failed_commits split by store: the offset store's entry first (present
  // from construction), then "transaction" once mark_committed() recorded a commit.
  std::vector<StoreCommits> commits_by_store;
  // Durations of checkpoint() calls that wrote a checkpoint (collecting positions, encoding, the
  // state backend's write).
  LatencyHistogram checkpoint_duration;
  // Durations of restore_from_checkpoint() calls that restored a checkpoint (reading the
  // checkpoints, the restore journal's store reads, adopting the positions).
  LatencyHistogram restore_duration;
  // Acknowledgement metadata that OffsetManager::acked_after_restart() ignored with a warning
  // (another tool's, garbage, written for another offset, or a spilled record missing or
  // differing): each such partition's records were processed again from its committed offset.
  std::uint64_t ack_metadata_ignored = 0;
};

}  // namespace processor::kafka
