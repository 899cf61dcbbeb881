#pragma once
// The options of an OffsetManager and the types its checkpoints and restores speak in: what the
// checkpoint code needs without the manager itself.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "processor/kafka/broker_metadata.hpp"
#include "processor/kafka/partition_acks.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka {

// Options of an OffsetManager beyond its constructor arguments (group, backend, store, strategy).
struct OffsetManagerOptions {
  // Where reset_offset() learns log start offsets, high watermarks and offsets for timestamps.
  // Default: none (earliest resets to 0, latest needs a known high watermark, timestamp resets
  // throw Unavailable). Set it when a broker is reachable.
  std::shared_ptr<BrokerMetadata> broker;

  // After an automatic commit (strategy-triggered) fails, automatic commits pause this long so
  // that a broken store is not retried on every record. commit() always tries.
  // Default: 100 ms. Raise it for stores whose failures are slow (network timeouts).
  std::chrono::milliseconds auto_commit_retry_backoff{100};

  // How many checkpoints stay in the state backend; older ones are deleted in the batch that
  // writes a new one. Default: 3. Keep more to restore further back.
  std::size_t checkpoints_retained = 3;

  // Key prefix of checkpoint records: `prefix + group + ":" + 20-digit id`.
  // Default: "checkpoint:". Change it only to share a backend between applications.
  std::string checkpoint_prefix = "checkpoint:";

  // What restore_from_checkpoint() does when the offset store (the broker's committed offsets)
  // was moved by someone else, e.g. an operator's kafka-consumer-groups --reset-offsets.
  enum class RestorePolicy {
    TrustCheckpoint,  // resume from the checkpoint, matching the restored state (Flink's choice)
    TrustStore,       // resume from the moved offsets: the operator's intent wins
    Fail,             // throw StateError(Kafka) and change nothing; a person decides
  };
  // Default: TrustCheckpoint. Use TrustStore where operators reset groups on purpose.
  RestorePolicy restore_policy = RestorePolicy::TrustCheckpoint;

  // Limits of per-record acknowledgement (track()/ack()), per partition. Tracking pauses
  // (back-pressure) before the metadata could exceed acks.metadata_budget_bytes, unless
  // spill_ack_metadata is set.
  // Default: PartitionAcksOptions{} (10'000 outstanding, 4096 bytes of commit metadata).
  PartitionAcksOptions acks{};

  // With a state backend: metadata longer than acks.metadata_budget_bytes is spilled to the
  // backend at commit (see ack_spill_prefix) and the manager sets acks.unbounded_metadata, so
  // only max_outstanding and max_window_offsets limit tracking: one slow record never pauses its
  // partition for the metadata's sake.
  // The spilled set lives in THIS backend: a partition that moves to a member with another
  // state directory (another process or machine) cannot read it, ignores the reference with a
  // warning and processes every record above the committed offset again. That keeps
  // at-least-once; it breaks exactly-once through transactions (those records' results are
  // already committed), so leave it off there.
  // Default: false. Set it for at-least-once consumers whose partitions stay on their host.
  bool spill_ack_metadata = false;

  // Key prefix of spilled acknowledgement metadata in the state backend:
  // `prefix + group + ":" + topic + ":" + partition`, one record per partition, overwritten by
  // each commit that spills and deleted by this manager's next commit of the partition whose
  // metadata fits inline. The commit metadata is then a reference, "@acks/v1:<length>:<crc32c
  // of the spilled text, 8 hex digits>", never mistaken for inline (base64) metadata.
  // Default: "acks:". Change it only to share a backend between applications.
  std::string ack_spill_prefix = "acks:";
};

// A checkpoint: every partition's position (the next offset to consume) at one instant, stored
// atomically with the operator state handed to OffsetManager::checkpoint().
struct CheckpointInfo {
  std::uint64_t id = 0;
  std::chrono::system_clock::time_point created_at{};
  std::unordered_map<TopicPartition, std::int64_t> offsets;
  // Per-record tracking: the records acknowledged above a partition's position (each set's
  // committable is that position). Only partitions with acknowledgements above it are listed.
  std::unordered_map<TopicPartition, AckedSet> acked;
};

// A partition whose committed offset in the store no checkpoint of ours explains.
struct ExternalMove {
  TopicPartition partition;
  std::int64_t checkpoint_offset = 0;
  std::int64_t store_offset = 0;
};

// What restore_from_checkpoint() found and did: the restore journal.
struct RestoreReport {
  std::uint64_t checkpoint_id = 0;
  std::vector<ExternalMove> external_moves;
  // Partitions whose store offset is an older checkpoint's: the last completion never reached
  // the store (a crash between checkpoint and commit). Normal; the checkpoint is ahead.
  std::vector<TopicPartition> store_behind;
  // The policy applied to the external moves.
  OffsetManagerOptions::RestorePolicy policy = OffsetManagerOptions::RestorePolicy::TrustCheckpoint;
};

}  // namespace processor::kafka
