#include "processor/kafka/group_admin.hpp"

#include <algorithm>
#include <utility>

#include "common/log_internal.hpp"
#include "kafka/admin/group_admin_impl.hpp"
#include "kafka/rdkafka/admin_request.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/partition_list.hpp"

namespace processor::kafka {
namespace {

using internal::RdPtr;

std::string state_name(rd_kafka_consumer_group_state_t state) {
  return rd_kafka_consumer_group_state_name(state);
}

std::string type_name(rd_kafka_consumer_group_type_t type) { return rd_kafka_consumer_group_type_name(type); }

std::string or_empty(const char* text) { return text != nullptr ? text : ""; }

GroupMember member_of(const rd_kafka_MemberDescription_t* member) {
  GroupMember out;
  out.member_id = or_empty(rd_kafka_MemberDescription_consumer_id(member));
  if (const char* instance = rd_kafka_MemberDescription_group_instance_id(member);
      instance != nullptr && *instance) {
    out.group_instance_id = instance;
  }
  out.client_id = or_empty(rd_kafka_MemberDescription_client_id(member));
  out.host = or_empty(rd_kafka_MemberDescription_host(member));
  if (const rd_kafka_MemberAssignment_t* assignment = rd_kafka_MemberDescription_assignment(member)) {
    out.assignment = internal::from_partition_list(rd_kafka_MemberAssignment_partitions(assignment));
  }
  if (const rd_kafka_MemberAssignment_t* target = rd_kafka_MemberDescription_target_assignment(member)) {
    out.target_assignment = internal::from_partition_list(rd_kafka_MemberAssignment_partitions(target));
  }
  return out;
}

// The state of a consumer-protocol group (KIP-848) while its partitions move, which librdkafka
// 2.14 answers "Unknown" for (it knows the classic states' names only): Reconciling while a member
// has not yet taken its target assignment, else Assigning (the target is still being computed),
// as the coordinator decides them.
std::string moving_state(const std::vector<GroupMember>& members) {
  auto sorted = [](std::vector<TopicPartition> partitions) {
    std::sort(partitions.begin(), partitions.end());
    return partitions;
  };
  const bool reconciling = std::any_of(members.begin(), members.end(), [&](const GroupMember& member) {
    return member.target_assignment && sorted(member.assignment) != sorted(*member.target_assignment);
  });
  return reconciling ? "Reconciling" : "Assigning";
}

GroupDescription description_of(const rd_kafka_ConsumerGroupDescription_t* group) {
  GroupDescription out;
  out.group = or_empty(rd_kafka_ConsumerGroupDescription_group_id(group));
  out.simple = rd_kafka_ConsumerGroupDescription_is_simple_consumer_group(group) != 0;
  out.state = state_name(rd_kafka_ConsumerGroupDescription_state(group));
  // librdkafka answers "Classic" for a group that does not exist; it has no type.
  if (rd_kafka_ConsumerGroupDescription_state(group) != RD_KAFKA_CONSUMER_GROUP_STATE_DEAD) {
    out.type = type_name(rd_kafka_ConsumerGroupDescription_type(group));
  }
  out.partition_assignor = or_empty(rd_kafka_ConsumerGroupDescription_partition_assignor(group));
  if (const rd_kafka_Node_t* node = rd_kafka_ConsumerGroupDescription_coordinator(group)) {
    out.coordinator = GroupCoordinator{rd_kafka_Node_id(node), or_empty(rd_kafka_Node_host(node)),
                                       static_cast<std::int32_t>(rd_kafka_Node_port(node))};
  }
  const std::size_t members = rd_kafka_ConsumerGroupDescription_member_count(group);
  out.members.reserve(members);
  for (std::size_t i = 0; i < members; ++i) {
    out.members.push_back(member_of(rd_kafka_ConsumerGroupDescription_member(group, i)));
  }
  if (rd_kafka_ConsumerGroupDescription_state(group) == RD_KAFKA_CONSUMER_GROUP_STATE_UNKNOWN &&
      rd_kafka_ConsumerGroupDescription_type(group) == RD_KAFKA_CONSUMER_GROUP_TYPE_CONSUMER) {
    out.state = moving_state(out.members);
  }
  return out;
}

}  // namespace

std::unique_ptr<GroupAdmin> GroupAdmin::create(KafkaProperties properties,
                                               std::chrono::milliseconds timeout) {
  internal::require_properties(properties, {"bootstrap.servers"}, "GroupAdmin");
  if (properties.count("group.id") != 0) {
    throw StateError(ErrorKind::InvalidArgument, "GroupAdmin takes no 'group.id': it joins no group");
  }
  // Kafka's AdminClient lists offsets read_uncommitted: the log end offset, not the last stable one.
  properties.emplace("isolation.level", "read_uncommitted");
  auto impl = std::make_unique<Impl>();
  impl->rk =
      internal::create_client(RD_KAFKA_CONSUMER, properties, internal::ClientCallbacks{}, "the admin client");
  impl->timeout = timeout;
  return std::unique_ptr<GroupAdmin>(new GroupAdmin(std::move(impl)));
}

GroupAdmin::GroupAdmin(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GroupAdmin::~GroupAdmin() = default;

std::vector<std::string> GroupAdmin::group_ids_in_broker_order() {
  // The classic ListGroups and DescribeGroups (librdkafka's legacy rd_kafka_list_groups): the
  // brokers' answers in their order, not re-sorted.
  std::vector<std::string> out;
  impl_->with_retries([&]() -> std::optional<StateError> {
    out.clear();
    const struct rd_kafka_group_list* list = nullptr;
    const rd_kafka_resp_err_t error =
        rd_kafka_list_groups(impl_->rk.get(), nullptr, &list, internal::to_timeout_ms(impl_->timeout));
    if (list != nullptr) {
      for (int i = 0; i < list->group_cnt; ++i) out.emplace_back(or_empty(list->groups[i].group));
      rd_kafka_group_list_destroy(list);
    }
    if (error == RD_KAFKA_RESP_ERR_NO_ERROR || error == RD_KAFKA_RESP_ERR__PARTIAL) return std::nullopt;
    return internal::kafka_error(error, "listing the groups in the brokers' order");
  });
  return out;
}

std::vector<GroupListing> GroupAdmin::list_groups() {
  std::vector<GroupListing> out;
  const std::string what = "listing consumer groups";
  impl_->with_retries([&]() -> std::optional<StateError> {
    out.clear();
    RdPtr<rd_kafka_event_t> event;
    const rd_kafka_resp_err_t error = internal::admin_request(
        impl_->rk.get(), RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPS, impl_->timeout,
        [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
          rd_kafka_ListConsumerGroups(impl_->rk.get(), options, queue);
        },
        &event, /*serve_events=*/true);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) return internal::failure_of(error, what);
    const auto* result = rd_kafka_event_ListConsumerGroups_result(event.get());
    std::size_t error_count = 0;
    const rd_kafka_error_t** errors = rd_kafka_ListConsumerGroups_result_errors(result, &error_count);
    // One error per broker that did not answer: the listing would be partial.
    if (error_count > 0) return internal::kafka_error(errors[0], what);
    std::size_t count = 0;
    const rd_kafka_ConsumerGroupListing_t** listings =
        rd_kafka_ListConsumerGroups_result_valid(result, &count);
    for (std::size_t i = 0; i < count; ++i) {
      out.push_back(GroupListing{or_empty(rd_kafka_ConsumerGroupListing_group_id(listings[i])),
                                 rd_kafka_ConsumerGroupListing_is_simple_consumer_group(listings[i]) != 0,
                                 state_name(rd_kafka_ConsumerGroupListing_state(listings[i])),
                                 type_name(rd_kafka_ConsumerGroupListing_type(listings[i]))});
    }
    return std::nullopt;
  });
  // A consumer-protocol group listed "Unknown" is Assigning or Reconciling (moving_state()): its
  // description tells which.
  std::vector<std::string> moving;
  for (const GroupListing& listing : out) {
    if (listing.type == "Consumer" && listing.state == "Unknown") moving.push_back(listing.group);
  }
  if (moving.empty()) return out;
  try {
    for (const GroupDescription& group : describe_groups(moving)) {
      for (GroupListing& listing : out) {
        if (listing.group == group.group && group.state != "Dead") listing.state = group.state;
      }
    }
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Debug, "admin",
                             "describing groups listed in a state librdkafka does not name: ", error.what());
  }
  return out;
}

std::vector<GroupDescription> GroupAdmin::describe_groups(const std::vector<std::string>& groups) {
  std::vector<GroupDescription> out;
  if (groups.empty()) return out;
  for (const auto& group : groups) {
    if (group.empty()) throw StateError(ErrorKind::InvalidArgument, "describe_groups: an empty group name");
  }
  const std::string what = "describing consumer groups";
  impl_->with_retries([&]() -> std::optional<StateError> {
    out.clear();
    std::vector<const char*> names;
    names.reserve(groups.size());
    for (const auto& group : groups) names.push_back(group.c_str());
    RdPtr<rd_kafka_event_t> event;
    const rd_kafka_resp_err_t error = internal::admin_request(
        impl_->rk.get(), RD_KAFKA_ADMIN_OP_DESCRIBECONSUMERGROUPS, impl_->timeout,
        [&](rd_kafka_AdminOptions_t* options, rd_kafka_queue_t* queue) {
          rd_kafka_DescribeConsumerGroups(impl_->rk.get(), names.data(), names.size(), options, queue);
        },
        &event, /*serve_events=*/true);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) return internal::failure_of(error, what);
    const auto* result = rd_kafka_event_DescribeConsumerGroups_result(event.get());
    std::size_t count = 0;
    const rd_kafka_ConsumerGroupDescription_t** described =
        rd_kafka_DescribeConsumerGroups_result_groups(result, &count);
    for (std::size_t i = 0; i < count; ++i) {
      if (const rd_kafka_error_t* group_error = rd_kafka_ConsumerGroupDescription_error(described[i])) {
        const rd_kafka_resp_err_t code = rd_kafka_error_code(group_error);
        if (code == RD_KAFKA_RESP_ERR_GROUP_ID_NOT_FOUND) {
          GroupDescription dead;
          dead.group = or_empty(rd_kafka_ConsumerGroupDescription_group_id(described[i]));
          dead.state = "Dead";
          out.push_back(std::move(dead));
          continue;
        }
        return internal::kafka_error(
            group_error,
            what + " ('" + or_empty(rd_kafka_ConsumerGroupDescription_group_id(described[i])) + "')");
      }
      out.push_back(description_of(described[i]));
    }
    // librdkafka answers in request order; keep that promise even if it ever does not.
    std::vector<GroupDescription> ordered;
    ordered.reserve(groups.size());
    for (const auto& group : groups) {
      const auto it =
          std::find_if(out.begin(), out.end(), [&](const GroupDescription& d) { return d.group == group; });
      if (it == out.end())
        return StateError(ErrorKind::Kafka, what + ": no answer for group '" + group + "'");
      ordered.push_back(*it);
    }
    out = std::move(ordered);
    return std::nullopt;
  });
  return out;
}

}  // namespace processor::kafka
