#include "kafka/admin/authorized_operations.hpp"

#include "kafka/rdkafka/admin_request.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "kafka/rdkafka/retry.hpp"

namespace processor::kafka::internal {
namespace {

void add_operations(Permissions& permissions, const rd_kafka_AclOperation_t* operations, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) permissions.operations.insert(operations[i]);
}

// Asks for authorized operations, again while the failure is retriable (a broker restarting:
// _TRANSPORT) for up to three times `timeout`; throws the last failure, the broker's refusal of
// the client first.
RdPtr<rd_kafka_event_t> describe(rd_kafka_t* rk, rd_kafka_admin_op_t op, std::chrono::milliseconds timeout,
                                 const std::function<void(rd_kafka_AdminOptions_t*, rd_kafka_queue_t*)>& send,
                                 const std::string& what) {
  RdPtr<rd_kafka_event_t> event;
  with_retries(RetryPolicy{3 * timeout}, [&]() -> std::optional<StateError> {
    const rd_kafka_resp_err_t error = admin_request(
        rk, op, timeout,
        [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
          RdPtr<rd_kafka_error_t> refused(
              rd_kafka_AdminOptions_set_include_authorized_operations(options, 1));
          send(options, queue);
        },
        &event, /*serve_events=*/true);
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
    throw_if_refused(rk);
    return kafka_error(error, what);
  });
  return event;
}

}  // namespace

bool Permissions::may(rd_kafka_AclOperation_t operation) const {
  return operations.count(operation) != 0 || operations.count(RD_KAFKA_ACL_OPERATION_ALL) != 0;
}

std::vector<Permissions> topic_permissions(rd_kafka_t* rk, const std::vector<std::string>& topics,
                                           std::chrono::milliseconds timeout) {
  std::vector<const char*> names;
  for (const auto& topic : topics) names.push_back(topic.c_str());
  const auto event = describe(
      rk, RD_KAFKA_ADMIN_OP_DESCRIBETOPICS, timeout,
      [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
        rd_kafka_TopicCollection_t* collection =
            rd_kafka_TopicCollection_of_topic_names(names.data(), names.size());
        rd_kafka_DescribeTopics(rk, collection, options, queue);
        rd_kafka_TopicCollection_destroy(collection);
      },
      "describing the permissions on topics");
  std::size_t count = 0;
  const rd_kafka_TopicDescription_t** described =
      rd_kafka_DescribeTopics_result_topics(rd_kafka_event_DescribeTopics_result(event.get()), &count);
  std::vector<Permissions> out;
  for (const auto& topic : topics) {
    Permissions permissions;
    permissions.resource = topic;
    permissions.error = RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART;
    for (std::size_t i = 0; i < count; ++i) {
      if (topic != rd_kafka_TopicDescription_name(described[i])) continue;
      const rd_kafka_error_t* error = rd_kafka_TopicDescription_error(described[i]);
      permissions.error = error != nullptr ? rd_kafka_error_code(error) : RD_KAFKA_RESP_ERR_NO_ERROR;
      std::size_t operations = 0;
      const rd_kafka_AclOperation_t* list =
          rd_kafka_TopicDescription_authorized_operations(described[i], &operations);
      add_operations(permissions, list, operations);
    }
    out.push_back(std::move(permissions));
  }
  return out;
}

Permissions group_permissions(rd_kafka_t* rk, const std::string& group, std::chrono::milliseconds timeout) {
  const char* names[] = {group.c_str()};
  const auto event = describe(
      rk, RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS, timeout,
      [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
        rd_kafka_DescribeConsumerGroups(rk, names, 1, options, queue);
      },
      "describing the permissions on group '" + group + "'");
  std::size_t count = 0;
  const rd_kafka_ConsumerGroupDescription_t** described = rd_kafka_DescribeConsumerGroups_result_groups(
      rd_kafka_event_DescribeConsumerGroups_result(event.get()), &count);
  Permissions permissions;
  permissions.resource = group;
  if (count == 0) return permissions;
  if (const rd_kafka_error_t* error = rd_kafka_ConsumerGroupDescription_error(described[0])) {
    permissions.error = rd_kafka_error_code(error);
  }
  std::size_t operations = 0;
  const rd_kafka_AclOperation_t* list =
      rd_kafka_ConsumerGroupDescription_authorized_operations(described[0], &operations);
  add_operations(permissions, list, operations);
  return permissions;
}

std::string operation_name(rd_kafka_AclOperation_t operation) {
  return rd_kafka_AclOperation_name(operation);
}

}  // namespace processor::kafka::internal
