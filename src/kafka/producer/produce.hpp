#pragma once
// The one produce call of the library's producers (TransactionalProducer, StreamProcessor's
// outputs and changelogs). Internal.

#include <librdkafka/rdkafka.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace processor::kafka::internal {

// Produces one record to `topic`:`partition` (RD_KAFKA_PARTITION_UA: the partitioner's choice),
// copying `key` and the `value_size` bytes at `value` (a null `value`: a tombstone), with `opaque`
// for its delivery report. While librdkafka's queue is full it serves delivery reports and tries
// again. Throws the client's fatal error (fatal_error(): a fenced producer, IdempotentWrite
// refused) when that is why librdkafka refused the record, else kafka_error(code, "producing to
// <topic>"). `headers` (optional) are taken over by librdkafka once the record is accepted and
// destroyed here when it is refused; `timestamp_ms` 0 means now.
void produce_copy(rd_kafka_t* rk, const std::string& topic, std::int32_t partition, std::string_view key,
                  const char* value, std::size_t value_size, void* opaque = nullptr,
                  rd_kafka_headers_t* headers = nullptr, std::int64_t timestamp_ms = 0);

}  // namespace processor::kafka::internal
