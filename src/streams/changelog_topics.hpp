#pragma once
// The changelog topics of a StreamProcessor: checked, and created when missing. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace processor::streams::internal {

// Returns the partition count of `input_topic`, after making sure that every topic of
// `changelogs` exists with that many partitions: the existing ones are all checked before any
// missing one is created (cleanup.policy=compact, `replication_factor`, -1 for the broker's
// default), so that a refusal creates nothing. `rk` must not create topics by asking for their
// metadata (a consumer: allow.auto.create.topics is false).
// Throws StateError(InvalidArgument) when the input topic does not exist or a changelog topic
// has another partition count; StateError(Kafka or Timeout) when the cluster refuses or does not
// answer.
std::int32_t ensure_changelog_topics(rd_kafka_t* rk, const std::string& input_topic,
                                     const std::vector<std::string>& changelogs, int replication_factor,
                                     std::chrono::milliseconds timeout);

}  // namespace processor::streams::internal
