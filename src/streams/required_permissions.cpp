#include "streams/required_permissions.hpp"

#include "kafka/admin/authorized_operations.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "processor/error.hpp"

namespace processor::streams::internal {
namespace {

using kafka::internal::Permissions;

[[noreturn]] void refuse(rd_kafka_resp_err_t code, const std::string& what) {
  throw kafka::internal::kafka_error(code, what);
}

// `needed` on `permissions` (of a topic or a group, `kind`), or the refusal naming what is missing.
void require(const Permissions& permissions, const char* kind, rd_kafka_resp_err_t refused_code,
             std::initializer_list<rd_kafka_AclOperation_t> needed, const std::string& why) {
  const std::string resource = std::string(kind) + " '" + permissions.resource + "'";
  if (permissions.error == refused_code) {
    refuse(refused_code, "the principal may not describe " + resource + ", which " + why);
  }
  // A broker that does not report authorized operations leaves the check to the requests.
  if (permissions.operations.empty()) return;
  for (const auto operation : needed) {
    if (!permissions.may(operation)) {
      refuse(refused_code, "the principal lacks " + kafka::internal::operation_name(operation) + " on " +
                               resource + ", which " + why);
    }
  }
}

}  // namespace

void check_permissions(const kafka::KafkaProperties& client, const std::string& group,
                       const std::string& input, const std::vector<std::string>& changelogs,
                       std::chrono::milliseconds timeout, const std::string& dead_letter_topic) {
  auto rk = kafka::internal::create_client(RD_KAFKA_CONSUMER, client, {}, "the permission check's client");
  const Permissions on_group = kafka::internal::group_permissions(rk.get(), group, timeout);
  require(on_group, "group", RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED, {RD_KAFKA_ACL_OPERATION_READ},
          "the processor's consumer group needs");
  // A cluster that reports no authorized operations (librdkafka's mock cluster) leaves the rest to
  // the requests themselves.
  if (on_group.operations.empty()) return;
  std::vector<std::string> topics{input};
  topics.insert(topics.end(), changelogs.begin(), changelogs.end());
  if (!dead_letter_topic.empty()) topics.push_back(dead_letter_topic);
  const auto permissions = kafka::internal::topic_permissions(rk.get(), topics, timeout);
  if (!dead_letter_topic.empty()) {
    const auto& on_dead_letters = permissions.back();
    if (on_dead_letters.error == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) {
      refuse(RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
             "the dead-letter topic '" + dead_letter_topic +
                 "' does not exist: create it (the processor does not)");
    }
    require(on_dead_letters, "topic", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
            {RD_KAFKA_ACL_OPERATION_WRITE}, "the processor writes its dead letters to");
  }
  require(permissions[0], "topic", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
          {RD_KAFKA_ACL_OPERATION_READ}, "the processor reads as its input");
  for (std::size_t i = 1; i <= changelogs.size(); ++i) {
    // A changelog not created yet: its creation will say whether the principal may.
    if (permissions[i].error == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART) continue;
    require(permissions[i], "topic", RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED,
            {RD_KAFKA_ACL_OPERATION_READ, RD_KAFKA_ACL_OPERATION_WRITE},
            "the processor writes as a changelog and reads to restore");
  }
}

std::string refused_by_acls(rd_kafka_t* rk, rd_kafka_resp_err_t code, const std::string& group,
                            const std::vector<std::string>& topics, std::chrono::milliseconds timeout) {
  try {
    const Permissions on_group = kafka::internal::group_permissions(rk, group, timeout);
    const bool denied_group = on_group.error == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED;
    if (code == RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
      return denied_group || (!on_group.operations.empty() && !on_group.may(RD_KAFKA_ACL_OPERATION_READ))
                 ? "commit offsets for group '" + group + "'"
                 : std::string();
    }
    // A cluster that reports no authorized operations cannot say which topic.
    if (code != RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED || on_group.operations.empty()) return {};
    std::string refused;
    for (const auto& permissions : kafka::internal::topic_permissions(rk, topics, timeout)) {
      const bool denied = permissions.error == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED ||
                          (permissions.error == RD_KAFKA_RESP_ERR_NO_ERROR &&
                           !permissions.operations.empty() && !permissions.may(RD_KAFKA_ACL_OPERATION_WRITE));
      if (denied) refused += (refused.empty() ? "write topic '" : ", '") + permissions.resource + "'";
    }
    return refused;
  } catch (const StateError&) {
    return {};  // the cluster cannot say now
  }
}

}  // namespace processor::streams::internal
