#include "kafka/group/commit_offsets.hpp"

#include <algorithm>

#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/handles.hpp"
#include "kafka/rdkafka/partition_list.hpp"

namespace processor::kafka::internal {

void UnansweredCommits::add(RdPtr<rd_kafka_queue_t> queue) {
  processor::detail::MutexLock lock(mutex_);
  queues_.push_back(std::move(queue));
}

bool UnansweredCommits::settle(std::chrono::steady_clock::time_point deadline) {
  processor::detail::MutexLock lock(mutex_);
  while (!queues_.empty()) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    RdPtr<rd_kafka_event_t> answer(rd_kafka_queue_poll(
        queues_.front().get(), to_timeout_ms(std::max(left, std::chrono::milliseconds(0)))));
    if (!answer) return false;
    queues_.erase(queues_.begin());
  }
  return true;
}

void UnansweredCommits::forget() {
  processor::detail::MutexLock lock(mutex_);
  queues_.clear();
}

StateError unanswered_commit_error(const std::string& what) {
  return StateError(
      ErrorKind::Timeout,
      what +
          ": an earlier commit of this client is still unanswered, and a commit sent now could be "
          "overtaken by it",
      RD_KAFKA_RESP_ERR__TIMED_OUT, true);
}

void commit_offsets(rd_kafka_t* rk, const rd_kafka_topic_partition_list_t* offsets, const std::string& what,
                    std::chrono::milliseconds request_timeout, const RetryPolicy& policy,
                    const std::function<void()>& require_owned, UnansweredCommits& unanswered) {
  with_retries(policy, [&]() -> std::optional<StateError> {
    if (!unanswered.settle(std::chrono::steady_clock::now() + request_timeout)) {
      return unanswered_commit_error(what);
    }
    RdPtr<rd_kafka_queue_t> queue(rd_kafka_queue_new(rk));
    const rd_kafka_resp_err_t sent = rd_kafka_commit_queue(rk, offsets, queue.get(), nullptr, nullptr);
    if (sent != RD_KAFKA_RESP_ERR_NO_ERROR) return failure_of(sent, what);
    RdPtr<rd_kafka_event_t> event(rd_kafka_queue_poll(queue.get(), to_timeout_ms(request_timeout)));
    if (!event) {
      unanswered.add(std::move(queue));  // librdkafka may still send it: the next try waits for it
      return failure_of(RD_KAFKA_RESP_ERR__TIMED_OUT, what);
    }
    std::string partition;
    const rd_kafka_resp_err_t error = first_error(
        rd_kafka_event_error(event.get()), rd_kafka_event_topic_partition_list(event.get()), &partition);
    if (error == RD_KAFKA_RESP_ERR_STALE_MEMBER_EPOCH) {
      // librdkafka has asked for the next heartbeat but retries only its own automatic commits.
      require_owned();
      const StateError stale = *failure_of(error, what, partition);
      return StateError(stale.kind(), stale.what(), error, true);
    }
    return failure_of(error, what, partition);
  });
}

}  // namespace processor::kafka::internal
