#pragma once
// How a KafkaConsumer hands its records to a ParallelConsumer instead of a handler: the consumer
// keeps the group membership, start positions, out-of-range policy, rebalance-aware checkpoints
// and commits; the sink owns what happens to each record. Internal.

#include <chrono>
#include <cstdint>
#include <vector>

#include "kafka/rdkafka/handles.hpp"
#include "processor/kafka/kafka_consumer.hpp"

namespace processor::kafka::internal {

// A partition that was just assigned, and where it starts (the next offset to consume).
struct AssignedStart {
  TopicPartition partition;
  std::int64_t position = 0;
};

// Called on the polling thread, from within rd_kafka_consumer_poll for the rebalance events.
class RecordSink {
 public:
  virtual ~RecordSink() = default;
  // A record; the sink owns the message from now on.
  virtual void on_record(RdPtr<rd_kafka_message_t> message) = 0;
  // The fetch position of the partition reached the log end `end_offset`. The sink records it
  // (OffsetManager::update_offset) once every record before it is done, and calls the user's
  // on_partition_end then.
  virtual void on_partition_end(const TopicPartition& partition, std::int64_t end_offset) = 0;
  // After the partitions' starts were adopted by the manager, before librdkafka fetches them.
  virtual void on_assigned(const std::vector<AssignedStart>& partitions) = 0;
  // Before revoked partitions are checkpointed and committed (lost: dropped without either).
  virtual void on_revoking(const std::vector<TopicPartition>& partitions, bool lost) = 0;
  // After the manager forgot them (late acknowledgements change nothing from here on).
  virtual void on_revoked(const std::vector<TopicPartition>& partitions) = 0;
};

// A KafkaConsumer's internals, which ParallelConsumer reaches as a friend.
using ConsumerImpl = KafkaConsumer::Impl;

// Sends the consumer's records to `sink` (which must outlive it) instead of a handler.
void attach_sink(ConsumerImpl& consumer, RecordSink* sink);

// One rd_kafka_consumer_poll: serves rebalances and consumer errors, hands a record or a
// partition end to the sink. Returns false when nothing arrived within `timeout_ms`.
// Throws as KafkaConsumer::poll() does.
bool poll_into_sink(ConsumerImpl& consumer, int timeout_ms);

// Records `position` as the position of `tp` (a partition end, or where the records this member
// processed in an earlier tenure end) as KafkaConsumer does: a commit it triggers that fails is
// logged and counted, not thrown. Throws StateError(InvalidArgument) when `position` is below
// the partition's floor.
void update_position(ConsumerImpl& consumer, const TopicPartition& tp, std::int64_t position);

// What KafkaConsumer::poll() does after its batch: counts `records`, records the fetched high
// watermarks, refreshes the others when due, and drives the commit strategy.
void finish_poll(ConsumerImpl& consumer, std::size_t records);

// Runs options.take_checkpoint and counts it.
void take_checkpoint(ConsumerImpl& consumer);

rd_kafka_t* handle(ConsumerImpl& consumer);

}  // namespace processor::kafka::internal
