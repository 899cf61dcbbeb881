#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace processor::streams {

// PartitionStore is one named state store of one input partition, as a record function sees it:
// a key-value map of byte strings. Reads and writes are local (RocksDB underneath); writes are
// buffered in the open transaction and become durable, locally and in the store's changelog
// topic, only when that transaction commits. An aborted transaction takes them back.
//
// Valid only during the record function's call. Not safe for concurrent use: the processor's
// polling thread calls the record function.
class PartitionStore {
 public:
  virtual ~PartitionStore() = default;

  // The value of `key`: the open transaction's write if any, else the committed value.
  virtual std::optional<std::string> get(std::string_view key) = 0;
  virtual void put(std::string_view key, std::string_view value) = 0;
  // Removing a missing key is not an error. Becomes a tombstone in the changelog.
  virtual void remove(std::string_view key) = 0;

  virtual const std::string& name() const noexcept = 0;
  virtual std::int32_t partition() const noexcept = 0;
};

// OutputSink produces a record function's results: inside the open transaction under
// exactly-once, so that a read_committed reader sees each input record's results exactly once.
//
// Valid only during the record function's call. Not safe for concurrent use.
class OutputSink {
 public:
  virtual ~OutputSink() = default;

  // Queues a record (partition -1: librdkafka's partitioner picks one by key).
  // Throws StateError(InvalidArgument) for an invalid topic name, StateError(Kafka) when the
  // producer refuses the record (e.g. larger than message.max.bytes).
  virtual void send(std::string_view topic, std::string_view key, std::string_view value,
                    std::int32_t partition = -1) = 0;
};

}  // namespace processor::streams
