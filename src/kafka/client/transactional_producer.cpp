#include "processor/kafka/transactional_producer.hpp"

#include "common/log_internal.hpp"
#include "kafka/client/kafka_client_impl.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/produce.hpp"
#include "kafka/rdkafka/retry.hpp"

namespace processor::kafka {

using internal::RdPtr;

struct TransactionalProducer::Impl {
  RdPtr<rd_kafka_t> handle;
  std::chrono::milliseconds timeout;
  bool in_transaction = false;
  rd_kafka_t* rk() const noexcept { return handle.get(); }
};

TransactionalProducer::TransactionalProducer(KafkaProperties properties, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  internal::require_properties(properties, {"bootstrap.servers", "transactional.id"},
                               "TransactionalProducer");
  impl_->handle =
      internal::create_client(RD_KAFKA_PRODUCER, properties, internal::ClientCallbacks{}, "the producer");
  rd_kafka_t* rk = impl_->rk();
  impl_->timeout = timeout;
  internal::with_error_object_retries(
      [&] { return rd_kafka_init_transactions(rk, internal::to_timeout_ms(timeout)); },
      "initialising transactions", timeout);
}

TransactionalProducer::~TransactionalProducer() {
  if (impl_ && impl_->in_transaction) {
    try {
      abort();
    } catch (const std::exception& error) {
      processor::internal::log(LogLevel::Error, "producer",
                               "aborting the open transaction failed: ", error.what());
    }
  }
}

void TransactionalProducer::begin() {
  internal::throw_if_error(RdPtr<rd_kafka_error_t>(rd_kafka_begin_transaction(impl_->rk())),
                           "beginning a transaction");
  impl_->in_transaction = true;
}

void TransactionalProducer::produce(std::string_view topic, std::string_view key, std::string_view value,
                                    std::int32_t partition) {
  internal::produce_copy(impl_->rk(), std::string(topic), partition, key, value.data(), value.size());
}

std::size_t TransactionalProducer::commit(const KafkaClient& consumer, OffsetManager& manager) {
  const auto offsets = manager.committable_offsets();
  if (!offsets.empty()) {
    auto list = internal::to_partition_list(std::span<const PartitionOffset>(offsets));
    RdPtr<rd_kafka_consumer_group_metadata_t> group(rd_kafka_consumer_group_metadata(consumer.impl().rk()));
    internal::throw_if_error(
        RdPtr<rd_kafka_error_t>(rd_kafka_send_offsets_to_transaction(
            impl_->rk(), list.get(), group.get(), internal::to_timeout_ms(impl_->timeout))),
        "sending " + std::to_string(offsets.size()) + " offsets into the transaction");
  }
  internal::with_error_object_retries(
      [&] { return rd_kafka_commit_transaction(impl_->rk(), internal::to_timeout_ms(impl_->timeout)); },
      "committing the transaction", impl_->timeout);
  impl_->in_transaction = false;
  manager.mark_committed(offsets);
  return offsets.size();
}

void TransactionalProducer::abort() {
  // librdkafka 2.0.2 can fail an abort with INVALID_TXN_STATE while produce requests are still
  // in flight; letting them finish first is harmless, as the abort discards them anyway.
  rd_kafka_flush(impl_->rk(), internal::to_timeout_ms(impl_->timeout));
  internal::with_error_object_retries(
      [&] { return rd_kafka_abort_transaction(impl_->rk(), internal::to_timeout_ms(impl_->timeout)); },
      "aborting the transaction", impl_->timeout);
  impl_->in_transaction = false;
}

}  // namespace processor::kafka
