#include "processor/kafka/kafka_broker_metadata.hpp"

#include "kafka/client/kafka_client_impl.hpp"
#include "kafka/group/start_offsets.hpp"
#include "kafka/rdkafka/retry.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

KafkaBrokerMetadata::KafkaBrokerMetadata(std::shared_ptr<KafkaClient> client,
                                         std::chrono::milliseconds request_timeout)
    : client_(std::move(client)), timeout_(request_timeout) {
  if (!client_)
    throw StateError(ErrorKind::InvalidArgument, "KafkaBrokerMetadata needs a KafkaClient, got null");
}

LogRange KafkaBrokerMetadata::log_range(const TopicPartition& tp) {
  validate_topic_partition(tp);
  // Retriable answers (a leader moving, a request timed out, an answer without an offset) are
  // asked again within the timeout, as librdkafka's watermark query did inside itself.
  internal::LogRange range;
  internal::with_retries(internal::RetryPolicy{timeout_},
                         [&] { return internal::try_log_range(client_->impl().rk(), tp, timeout_, &range); });
  return LogRange{range.low, range.high};
}

std::optional<std::int64_t> KafkaBrokerMetadata::offset_for_timestamp(const TopicPartition& tp,
                                                                      std::int64_t epoch_ms) {
  validate_topic_partition(tp);
  auto list = internal::to_partition_list(std::vector<TopicPartition>{tp});
  list->elems[0].offset = epoch_ms;
  const rd_kafka_resp_err_t error =
      rd_kafka_offsets_for_times(client_->impl().rk(), list.get(), internal::to_timeout_ms(timeout_));
  std::string partition;
  const rd_kafka_resp_err_t first = internal::first_error(error, list.get(), &partition);
  if (first != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw internal::kafka_error(first,
                                "looking up timestamp " + std::to_string(epoch_ms) + " in " + tp.to_key());
  }
  const std::int64_t offset = list->elems[0].offset;
  if (offset < 0) return std::nullopt;  // RD_KAFKA_OFFSET_END: no record that new
  return offset;
}

}  // namespace processor::kafka
