#pragma once
// What a client's principal may do with topics and a group: Kafka's authorized operations
// (KIP-430, DescribeTopics and DescribeConsumerGroups with include_authorized_operations), so that
// a missing ACL is named before anything depends on it. Internal.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace processor::kafka::internal {

struct Permissions {
  std::string resource;  // the topic or group
  // NO_ERROR, or the resource's own error: *_AUTHORIZATION_FAILED when the principal may not even
  // describe it, UNKNOWN_TOPIC_OR_PART for a topic that does not exist.
  rd_kafka_resp_err_t error = RD_KAFKA_RESP_ERR_NO_ERROR;
  std::set<rd_kafka_AclOperation_t> operations{};  // empty when the broker did not say

  // Whether `operation` is allowed: listed, or implied by ALL.
  bool may(rd_kafka_AclOperation_t operation) const;
};

// Each topic's permissions, in the order given. Throws StateError(Kafka or Timeout) when the
// request fails as a whole (the cluster's refusal of the client included: connection_refusal).
std::vector<Permissions> topic_permissions(rd_kafka_t* rk, const std::vector<std::string>& topics,
                                           std::chrono::milliseconds timeout);

// The group's permissions (a group that does not exist yet has them too: ACLs name the id).
Permissions group_permissions(rd_kafka_t* rk, const std::string& group, std::chrono::milliseconds timeout);

// "READ", "WRITE", ... as Kafka's ACL tool names an operation.
std::string operation_name(rd_kafka_AclOperation_t operation);

}  // namespace processor::kafka::internal
