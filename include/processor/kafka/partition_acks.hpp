#pragma once
// processor::kafka::PartitionAcks: out-of-order acknowledgement of one partition's records, and
// the commit metadata that lets a restarted consumer skip the records that were already done.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace processor::kafka {

// The acknowledged offsets of a partition above its committed offset, as decoded from commit
// metadata: what a restarted consumer skips.
//
// A plain value: safe to read from several threads, not to modify while others read.
struct AckedSet {
  // The inclusive range [first, last] of acknowledged offsets.
  struct Range {
    std::int64_t first = 0;
    std::int64_t last = 0;
    friend bool operator==(const Range&, const Range&) = default;
  };

  // The committed offset the metadata was written with (the next offset to consume).
  std::int64_t committable = 0;
  // The acknowledged offsets above `committable`: ascending, disjoint, not adjacent.
  std::vector<Range> acked;

  // True when the record at `offset` was acknowledged: a restarted consumer skips it.
  // O(log acked.size()).
  bool contains(std::int64_t offset) const noexcept;
  // How many offsets are acknowledged.
  std::uint64_t size() const noexcept;

  friend bool operator==(const AckedSet&, const AckedSet&) = default;
};

// Limits of a PartitionAcks. try_track() refuses a record (back-pressure) rather than exceed one.
struct PartitionAcksOptions {
  // Most records tracked and not yet acknowledged.
  // Default: 10'000. Raise it for slow records processed by many workers; each costs nothing
  // until it is acknowledged out of order.
  std::size_t max_outstanding = 10'000;

  // Most bytes encode_metadata() may return: the broker rejects larger commit metadata.
  // Default: 4096, the broker's offset.metadata.max.bytes default. Change it with that setting.
  // REQUIRES: at least kMinMetadataBudgetBytes.
  std::size_t metadata_budget_bytes = 4096;

  // Most offsets from committable() to the highest tracked (or restored) offset. Memory is two
  // bits per offset of this window, rounded up to a power of two, so this bounds it (128 KiB at
  // most by default) when one slow record holds committable() while later ones are acknowledged.
  // Default: 262'144. Raise it when slow records must not pause fast partitions; lower it for
  // consumers of many partitions.
  std::size_t max_window_offsets = 262'144;

  // When true, try_track() does not refuse records for metadata size and encode_metadata() may
  // return more than metadata_budget_bytes: the owner stores longer metadata elsewhere and
  // commits a reference to it (OffsetManager does, with a state backend: it sets this itself).
  // Acknowledgements are then bounded by max_outstanding and max_window_offsets only.
  // Default: false. Set it only when longer metadata is spilled, never committed as it is.
  bool unbounded_metadata = false;

  // The smallest budget: the metadata of a tracker with nothing acknowledged out of order.
  static constexpr std::size_t kMinMetadataBudgetBytes = 16;
};

// PartitionAcks tracks the records of one partition that were handed out for processing and
// their acknowledgements, which may arrive in any order. committable() is the Kafka committed
// offset: the lowest tracked offset not yet acknowledged. Offsets that were never tracked below
// it (compacted records, transaction markers) do not hold it back. encode_metadata() is the
// commit metadata that records the acknowledgements above committable(); after a restart,
// decode_metadata() and the restoring constructor let the consumer skip those records.
//
// Memory is two bits per offset from committable() to the highest tracked offset (bounded by
// max_window_offsets), grown and shrunk by try_track() only. ack() is amortized O(1) and never
// allocates. try_track() is amortized O(1) too, except that near the metadata budget it
// recounts the window's runs, O(window / 64).
//
// Safe for concurrent use by multiple threads: one spin lock guards all state, held for O(1)
// amortized by ack() and try_track(), and for O(window / 64 + runs) by the metadata calls.
// try_track() takes ascending offsets, so calls to it are ordered by the caller (usually the one
// thread polling the partition); ack() is the hot path and may be called from any thread.
//
// When the partition is revoked, commit snapshot() (or committable() and encode_metadata()),
// call revoke(), and drop the object once the workers are done: acknowledgements that arrive
// after revoke() change nothing, so records still in flight are never committed by this owner.
//
// Movable (moving is not thread-safe; a moved-from PartitionAcks may only be assigned to or
// destroyed); not copyable.
class PartitionAcks {
 public:
  // The committed offset and its metadata, taken at one instant.
  struct Snapshot {
    std::int64_t committable = 0;
    std::string metadata;
    bool acked_above = false;  // some offset above committable is acknowledged (metadata says which)
  };

  // Starts at the committed offset `base` (the next offset to consume), nothing tracked.
  // Throws StateError(InvalidArgument) when base < 0, max_outstanding or max_window_offsets is
  // 0, or metadata_budget_bytes < kMinMetadataBudgetBytes.
  explicit PartitionAcks(std::int64_t base, PartitionAcksOptions options = {});

  // Starts where a previous owner left off: at restored.committable, with every offset in
  // `restored` already acknowledged. The consumer re-consumes from restored.committable and
  // skips the offsets restored.contains(); the others hold committable() until they are tracked
  // and acknowledged (or tracking passes them: then they are gaps).
  // Throws StateError(InvalidArgument) when `restored` is malformed (ranges not ascending,
  // disjoint and above committable), spans more than max_window_offsets, or (unless
  // unbounded_metadata) its metadata can exceed metadata_budget_bytes (metadata written with the
  // same options always fits), or for the options errors of the other constructor.
  explicit PartitionAcks(const AckedSet& restored, PartitionAcksOptions options = {});

  ~PartitionAcks();
  PartitionAcks(PartitionAcks&& other) noexcept;
  PartitionAcks& operator=(PartitionAcks&& other) noexcept;
  PartitionAcks(const PartitionAcks&) = delete;
  PartitionAcks& operator=(const PartitionAcks&) = delete;

  // Records that the record at `offset` was handed out for processing. Returns false, changing
  // nothing, when accepting it could exceed a limit: max_outstanding, max_window_offsets, or
  // (unless unbounded_metadata) metadata_budget_bytes for the metadata of any state reachable by
  // acknowledging the tracked records. Then pause the partition and retry after acknowledgements;
  // a tracker with nothing outstanding never refuses.
  // REQUIRES: offsets ascend; offsets skipped are gaps (not records).
  // Throws StateError(InvalidArgument) when `offset` is below the base, not above the last
  // tracked offset, above INT64_MAX - 1, or restored as acknowledged; or after revoke().
  bool try_track(std::int64_t offset);

  // Records that the record at `offset` was processed. Returns false, changing nothing, after
  // revoke(). Hot path: O(1) amortized, no allocation.
  // Throws StateError(InvalidArgument) naming the offset, changing nothing, when it was never
  // tracked or is already acknowledged (also after revoke()).
  bool ack(std::int64_t offset);

  // The Kafka committed offset: the lowest tracked offset not acknowledged; when every tracked
  // offset is acknowledged, the last tracked + 1; the base when nothing was tracked. After a
  // restore, the lowest restored-but-unacknowledged offset not yet passed by tracking counts too.
  std::int64_t committable() const;

  // How many tracked records are not acknowledged.
  std::size_t outstanding() const;

  // The acknowledged offsets above committable(), as ASCII commit metadata (base64 of: version
  // byte 1, varint committable(), then 'R' and alternating run lengths of unacknowledged and
  // acknowledged offsets, or 'B' and a bitset, whichever is smaller). Never longer than
  // metadata_budget_bytes, unless unbounded_metadata. O(window).
  std::string encode_metadata() const;

  // The acknowledged offsets above committable(), with committable(), at one instant: what
  // decode_metadata(encode_metadata()) gives. O(window).
  AckedSet acked_set() const;

  // encode_metadata().size(), without building it. O(window).
  std::size_t encoded_size() const;

  // committable() and encode_metadata() of one instant: what to commit.
  Snapshot snapshot() const;

  // Freezes the tracker when the partition is revoked: later acknowledgements change nothing,
  // so committable() and the metadata stay those of the revocation. Idempotent.
  void revoke();
  bool revoked() const;

  const PartitionAcksOptions& options() const noexcept;

  // Decodes encode_metadata(). Throws StateError(Corruption) when `metadata` is not such an
  // encoding: empty, not base64, an unknown version or encoding, truncated, trailing bytes,
  // non-canonical runs or bits, or offsets beyond INT64_MAX - 1.
  static AckedSet decode_metadata(std::string_view metadata);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace processor::kafka
