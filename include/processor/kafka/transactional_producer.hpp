#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>

#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/offset_manager.hpp"

namespace processor::kafka {

// TransactionalProducer is the output side of consume-transform-produce with exactly-once
// results: the records it produces and the consumer group's offsets are committed in one Kafka
// transaction (send_offsets_to_transaction), so a read_committed reader of the output sees each
// input record's result exactly once, and the group's committed offsets always match the output.
//
//   producer.begin();
//   ... consumer.poll(...) handlers call producer.produce(...) ...
//   producer.commit(*consumer_client, manager);   // output + offsets, atomically
//   // on failure: producer.abort(); consumer.rewind_to_committed();
//
// Creating one with a transactional.id fences any older producer with the same id (a zombie
// from before a restart). Not safe for concurrent use: one thread drives the transaction.
class TransactionalProducer {
 public:
  // REQUIRES: `properties` has bootstrap.servers and transactional.id.
  // Throws StateError(InvalidArgument) for a missing or rejected property, StateError(Kafka or
  // Timeout) when the transaction coordinator cannot be initialised.
  explicit TransactionalProducer(KafkaProperties properties,
                                 std::chrono::milliseconds request_timeout = std::chrono::seconds(30));
  ~TransactionalProducer();

  TransactionalProducer(const TransactionalProducer&) = delete;
  TransactionalProducer& operator=(const TransactionalProducer&) = delete;

  void begin();

  // Queues a record in the open transaction (partition -1: the partitioner picks by key).
  void produce(std::string_view topic, std::string_view key, std::string_view value,
               std::int32_t partition = -1);

  // Sends `manager`'s committable offsets into the transaction as the consumer group of
  // `consumer` and commits it. On success those offsets become the manager's committed view;
  // returns how many partitions. Throws StateError(Kafka or Timeout) when the transaction fails:
  // call abort(), then KafkaConsumer::rewind_to_committed() to process those records again.
  std::size_t commit(const KafkaClient& consumer, OffsetManager& manager);

  // Aborts the open transaction: its records are never visible to read_committed readers.
  void abort();

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::kafka
