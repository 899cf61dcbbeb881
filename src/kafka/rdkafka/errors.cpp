#include "kafka/rdkafka/errors.hpp"

namespace processor::kafka::internal {
namespace {

bool timed_out(rd_kafka_resp_err_t code) noexcept {
  return code == RD_KAFKA_RESP_ERR__TIMED_OUT || code == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT ||
         code == RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE;
}

StateError make_error(rd_kafka_resp_err_t code, const std::string& what, const char* description,
                      bool retriable) {
  return StateError(timed_out(code) ? ErrorKind::Timeout : ErrorKind::Kafka,
                    what + ": " + rd_kafka_err2name(code) + " (" + std::to_string(static_cast<int>(code)) +
                        "): " + description,
                    static_cast<int>(code), retriable);
}

}  // namespace

bool kafka_code_is_retriable(rd_kafka_resp_err_t code) noexcept {
  switch (code) {
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
    case RD_KAFKA_RESP_ERR_UNSTABLE_OFFSET_COMMIT:
    case RD_KAFKA_RESP_ERR_CONCURRENT_TRANSACTIONS:
    case RD_KAFKA_RESP_ERR_THROTTLING_QUOTA_EXCEEDED:
    // Metadata that is stale or not yet propagated: a topic just created, a leader moving.
    case RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_PREFERRED_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_ELIGIBLE_LEADERS_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_FENCED_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_UNKNOWN_LEADER_EPOCH:
    case RD_KAFKA_RESP_ERR_OFFSET_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    // A request in flight to a broker that left the cluster's metadata (killed, not back yet):
    // librdkafka drops that broker's handle and fails its requests.
    case RD_KAFKA_RESP_ERR__DESTROY_BROKER:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT_QUEUE:
      return true;
    default:
      return false;
  }
}

StateError kafka_error(rd_kafka_resp_err_t code, const std::string& what) {
  return make_error(code, what, rd_kafka_err2str(code), kafka_code_is_retriable(code));
}

StateError kafka_error(const rd_kafka_error_t* error, const std::string& what) {
  std::string description = rd_kafka_error_string(error);
  if (rd_kafka_error_is_fatal(error)) {
    description += " (fatal: this client is fenced or broken)";
  } else if (rd_kafka_error_txn_requires_abort(error)) {
    description += " (the transaction must be aborted)";
  }
  return make_error(rd_kafka_error_code(error), what, description.c_str(),
                    rd_kafka_error_is_retriable(error) != 0);
}

std::optional<StateError> failure_of(rd_kafka_resp_err_t code, const std::string& what,
                                     const std::string& partition) {
  if (code == RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  return kafka_error(code, partition.empty() ? what : what + " (" + partition + ")");
}

std::optional<StateError> fatal_error(rd_kafka_t* rk, const std::string& what) {
  char reason[512];
  const rd_kafka_resp_err_t code = rd_kafka_fatal_error(rk, reason, sizeof reason);
  if (code == RD_KAFKA_RESP_ERR_NO_ERROR) return std::nullopt;
  return make_error(code, what, (std::string(reason) + " (fatal: only a new client can go on)").c_str(),
                    false);
}

bool has_fatal_error(rd_kafka_t* rk) noexcept {
  char reason[8];  // librdkafka truncates its reason to fit
  return rd_kafka_fatal_error(rk, reason, sizeof reason) != RD_KAFKA_RESP_ERR_NO_ERROR;
}

void throw_if_fatal(rd_kafka_t* rk, const std::string& what) {
  if (auto fatal = fatal_error(rk, what)) throw *std::move(fatal);
}

void throw_if_error(RdPtr<rd_kafka_error_t> error, const std::string& what) {
  if (error) throw kafka_error(error.get(), what);
}

StateError consume_error(const rd_kafka_message_t& message, const std::string& group,
                         const std::vector<std::string>& topics) {
  std::string resource = "group '" + group + "'";
  if (message.err == RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED) {
    resource = "topic";
    if (message.rkt != nullptr) {
      resource += " '" + std::string(rd_kafka_topic_name(message.rkt)) + "'";
    } else {
      for (std::size_t i = 0; i < topics.size(); ++i) resource += (i == 0 ? " '" : ", '") + topics[i] + "'";
    }
  }
  return kafka_error(message.err,
                     "consumer of " + resource + " (" + std::string(rd_kafka_message_errstr(&message)) + ")");
}

bool consume_error_is_final(rd_kafka_resp_err_t code) noexcept {
  const bool rejoins =
      code == RD_KAFKA_RESP_ERR_UNKNOWN_MEMBER_ID || code == RD_KAFKA_RESP_ERR_ILLEGAL_GENERATION ||
      code == RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS || code == RD_KAFKA_RESP_ERR_MEMBER_ID_REQUIRED ||
      code == RD_KAFKA_RESP_ERR_FENCED_MEMBER_EPOCH || code == RD_KAFKA_RESP_ERR_STALE_MEMBER_EPOCH;
  return code > RD_KAFKA_RESP_ERR_NO_ERROR && !rejoins && !kafka_code_is_retriable(code);
}

}  // namespace processor::kafka::internal
