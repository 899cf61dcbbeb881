#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

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

// Counters of an OffsetManager's commits since construction.
struct OffsetStats {
  std::uint64_t total_commits = 0;            // non-empty commits attempted
  std::uint64_t successful_commits = 0;
  std::uint64_t failed_commits = 0;
  std::uint64_t total_offsets_committed = 0;  // partitions written, summed over successful commits
  std::optional<std::chrono::system_clock::time_point> last_commit_time;  // last successful commit
  std::uint64_t avg_commit_duration_ms = 0;   // mean duration of successful commits
};

}  // namespace processor::kafka
