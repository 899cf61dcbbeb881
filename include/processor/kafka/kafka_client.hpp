#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "processor/kafka/kafka_properties.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::kafka {

// What librdkafka features this build has. Debian's librdkafka 2.0.2 predates the leader-epoch
// API (2.1.0): commits then carry no leader epoch, and the broker cannot use it to detect a
// truncated log on the consumer's behalf.
struct KafkaFeatures {
  std::string librdkafka_version;  // at run time, e.g. "2.0.2"
  bool leader_epoch = false;       // rd_kafka_topic_partition_{get,set}_leader_epoch
};
KafkaFeatures kafka_features();

// KafkaClient is one librdkafka consumer instance (rd_kafka_t) of one consumer group. The
// KafkaOffsetStore, KafkaBrokerMetadata and KafkaConsumer built on it share it, so that commits
// go through the group member that owns the partitions.
//
// Creating a client does not join the group; KafkaConsumer does. The client forces
// enable.auto.commit=false and enable.auto.offset.store=false (offsets are committed by the
// OffsetManager, never behind its back), auto.offset.reset=error (KafkaConsumer applies its
// OutOfRangePolicy by cause instead) and enable.partition.eof=true.
//
// Safe for concurrent use by multiple threads. Neither copyable nor movable (librdkafka holds
// pointers to it).
class KafkaClient {
 public:
  // REQUIRES: `properties` has bootstrap.servers and group.id.
  // Throws StateError(InvalidArgument) naming the property librdkafka rejects, or a missing one;
  // StateError(Kafka) when librdkafka cannot create the client.
  static std::shared_ptr<KafkaClient> create(KafkaProperties properties);
  ~KafkaClient();

  KafkaClient(const KafkaClient&) = delete;
  KafkaClient& operator=(const KafkaClient&) = delete;

  const std::string& group_id() const noexcept;
  const KafkaProperties& properties() const noexcept;

  // The partitions currently assigned to this member (empty before it joins and once closed).
  std::vector<TopicPartition> assignment() const;

  // Serves queued callbacks (asynchronous commit results) when no KafkaConsumer is polling.
  void poll(std::chrono::milliseconds timeout);

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  friend class KafkaOffsetStore;
  friend class KafkaBrokerMetadata;
  friend class KafkaConsumer;
  friend class TransactionalProducer;
  explicit KafkaClient(std::unique_ptr<Impl> impl);
  Impl& impl() const noexcept { return *impl_; }

  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::kafka
