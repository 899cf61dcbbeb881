#pragma once

#include <chrono>
#include <functional>
#include <memory>
#include <optional>

#include "processor/error.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/offset_store.hpp"

namespace processor::kafka {

// Options of a KafkaOffsetStore.
struct KafkaOffsetStoreOptions {
  // How long one OffsetCommit or OffsetFetch may take.
  // Default: 10 s. Lower it to fail faster when the coordinator is unreachable.
  std::chrono::milliseconds request_timeout{10'000};
  // First wait before retrying a retriable error; doubles up to retry_backoff_max.
  // Default: 100 ms.
  std::chrono::milliseconds retry_backoff{100};
  // Default: 2 s.
  std::chrono::milliseconds retry_backoff_max{2'000};
  // How long a call keeps retrying retriable errors before it gives up with the last one.
  // Default: 30 s. Raise it to ride out longer coordinator moves.
  std::chrono::milliseconds retry_deadline{30'000};
};

// The result of an asynchronous commit: no error, or the StateError a synchronous commit would
// have thrown. Called on the thread that polls the client (KafkaConsumer's loop or
// KafkaClient::poll()); it must not throw.
using CommitCallback = std::function<void(const std::optional<StateError>& error)>;

// KafkaOffsetStore commits offsets to the consumer group's coordinator through the group
// member's KafkaClient (OffsetCommit), carrying each offset's metadata and, where librdkafka
// supports it, its leader epoch; it reads them back with OffsetFetch.
//
// Errors:
// - Retriable broker errors (coordinator loading, moving or unavailable, request timed out,
//   network) are retried with capped exponential backoff until retry_deadline.
// - Fatal ones (illegal generation, unknown member, fenced instance, offset metadata too large,
//   authorization) throw StateError(Kafka) with the broker's error code and retriable() false;
//   they are never retried.
// - A partition not assigned to this member, while it is a member of the group, is refused
//   with StateError(Kafka, RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST) before anything is sent: a
//   member that lost a partition never commits it.
// - `group` must be the client's group.id (StateError(InvalidArgument) otherwise).
// delete_offset() and clear_offsets() use the Admin API (DeleteConsumerGroupOffsets), which the
// broker allows only for topics the group is not consuming.
//
// Safe for concurrent use by multiple threads.
class KafkaOffsetStore : public OffsetStore {
 public:
  explicit KafkaOffsetStore(std::shared_ptr<KafkaClient> client, KafkaOffsetStoreOptions options = {});

  void store_offset(std::string_view group, const TopicPartition& tp, const OffsetInfo& info) override;
  std::optional<OffsetInfo> get_offset(std::string_view group, const TopicPartition& tp) override;
  std::unordered_map<TopicPartition, OffsetInfo> get_all_offsets(std::string_view group) override;
  void delete_offset(std::string_view group, const TopicPartition& tp) override;
  void clear_offsets(std::string_view group) override;
  // One OffsetCommit for all partitions: the coordinator applies it atomically.
  void store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) override;
  std::string_view kind() const noexcept override { return "kafka"; }

  // Sends one OffsetCommit and returns at once; the PendingStore waits for its answer (at most
  // request_timeout). Not retried: the OffsetManager's next automatic commit supersedes a failed
  // one, as the Java consumer's commitAsync() is. Refuses what store_offsets() refuses before
  // sending anything.
  std::unique_ptr<PendingStore> begin_store_offsets(std::string_view group,
                                                    std::span<const PartitionOffset> offsets) override;

  // Sends the commit and returns at once; `done` gets the result. Not retried: a failed async
  // commit is superseded by the next one, as in the Java consumer.
  void store_offsets_async(std::string_view group, std::span<const PartitionOffset> offsets,
                           CommitCallback done);

  // The committed offsets of `partitions` (OffsetFetch), for those that have one.
  std::unordered_map<TopicPartition, OffsetInfo> committed(const std::vector<TopicPartition>& partitions);

  const std::shared_ptr<KafkaClient>& client() const noexcept { return client_; }

 private:
  std::shared_ptr<KafkaClient> client_;
  KafkaOffsetStoreOptions options_;
};

}  // namespace processor::kafka
