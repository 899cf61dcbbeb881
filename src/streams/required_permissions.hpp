#pragma once
// What a StreamProcessor's principal must be allowed, checked before it touches its state
// directory (a secured cluster's ACLs: READ on its group and input topic, READ and WRITE on the
// changelog topics that exist, WRITE on the dead-letter topic), and which topics of a refused transaction it may not write.
// Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <string>
#include <vector>

#include "processor/kafka/kafka_properties.hpp"

namespace processor::streams::internal {

// Throws StateError(Kafka) with Kafka's code (GROUP_AUTHORIZATION_FAILED,
// TOPIC_AUTHORIZATION_FAILED) naming the first permission `client`'s principal lacks, and the
// cluster's refusal of the client (a wrong password: _AUTHENTICATION). `client`: the processor's
// properties, for a client of its own that joins no group. `dead_letter_topic` (empty: none)
// must exist: StateError(Kafka, UNKNOWN_TOPIC_OR_PART) naming it otherwise.
void check_permissions(const kafka::KafkaProperties& client, const std::string& group,
                       const std::string& input, const std::vector<std::string>& changelogs,
                       std::chrono::milliseconds timeout, const std::string& dead_letter_topic = {});

// What Kafka's authorized operations say the principal of `rk` may not do, of a transaction Kafka
// refused with `code`: "write topic 'x', 'y'" (TOPIC_AUTHORIZATION_FAILED, among `topics`) or
// "commit offsets for group 'g'" (GROUP_AUTHORIZATION_FAILED); "" when it may, or when the cluster
// cannot say (it reports no authorized operations, or does not answer).
std::string refused_by_acls(rd_kafka_t* rk, rd_kafka_resp_err_t code, const std::string& group,
                            const std::vector<std::string>& topics, std::chrono::milliseconds timeout);

}  // namespace processor::streams::internal
