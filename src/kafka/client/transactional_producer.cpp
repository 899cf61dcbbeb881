#include "processor/kafka/transactional_producer.hpp"

#include "common/log_internal.hpp"
#include "kafka/client/kafka_client_impl.hpp"
#include "kafka/producer/produce.hpp"
#include "kafka/producer/transactions.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/partition_list.hpp"

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
  impl_->timeout = timeout;
  internal::init_transactions(impl_->rk(), timeout, "initialising transactions");
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
  internal::begin_transaction(impl_->rk());
  impl_->in_transaction = true;
}

void TransactionalProducer::produce(std::string_view topic, std::string_view key, std::string_view value,
                                    std::int32_t partition) {
  internal::produce_copy(impl_->rk(), std::string(topic), partition, key, value.data(), value.size());
}

std::size_t TransactionalProducer::commit(const KafkaClient& consumer, OffsetManager& manager) {
  const auto offsets = manager.committable_offsets();
  try {
    if (!offsets.empty()) {
      auto list = internal::to_partition_list(std::span<const PartitionOffset>(offsets));
      internal::send_offsets_to_transaction(impl_->rk(), consumer.impl().rk(), list.get(), impl_->timeout);
    }
    internal::commit_transaction(impl_->rk(), impl_->timeout);
  } catch (internal::AbortableTransactionError& failure) {
    throw std::move(failure.error);  // the caller aborts (see the header)
  }
  impl_->in_transaction = false;
  manager.mark_committed(offsets);
  return offsets.size();
}

void TransactionalProducer::abort() {
  internal::abort_transaction(impl_->rk(), impl_->timeout);
  impl_->in_transaction = false;
}

}  // namespace processor::kafka
