#include "processor/kafka/transactional_producer.hpp"

#include <thread>

#include "common/log_internal.hpp"
#include "kafka/rdkafka/kafka_client_impl.hpp"

namespace processor::kafka {

using internal::RdPtr;

struct TransactionalProducer::Impl {
  RdPtr<rd_kafka_t> handle;
  std::chrono::milliseconds timeout;
  bool in_transaction = false;
  rd_kafka_t* rk() const noexcept { return handle.get(); }
};

namespace {

// Throws the StateError for a transactional API error (and frees it).
void check(rd_kafka_error_t* raw, const std::string& what) {
  RdPtr<rd_kafka_error_t> error(raw);
  if (!error) return;
  std::string advice;
  if (rd_kafka_error_txn_requires_abort(error.get())) advice = " (the transaction must be aborted)";
  if (rd_kafka_error_is_fatal(error.get())) advice = " (fatal: this producer is fenced or broken)";
  const rd_kafka_resp_err_t code = rd_kafka_error_code(error.get());
  const bool timed_out = code == RD_KAFKA_RESP_ERR__TIMED_OUT;
  throw StateError(timed_out ? ErrorKind::Timeout : ErrorKind::Kafka,
                   what + ": " + rd_kafka_error_name(error.get()) + ": " + rd_kafka_error_string(error.get()) + advice,
                   static_cast<int>(code), rd_kafka_error_is_retriable(error.get()) != 0);
}

// Runs a transactional call, repeating it while librdkafka says it is retriable.
template <class Call>
void with_retries(Call&& call, const std::string& what, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    rd_kafka_error_t* error = call();
    if (error != nullptr && rd_kafka_error_is_retriable(error) && std::chrono::steady_clock::now() < deadline) {
      rd_kafka_error_destroy(error);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    check(error, what);
    return;
  }
}

}  // namespace

TransactionalProducer::TransactionalProducer(KafkaProperties properties, std::chrono::milliseconds timeout)
    : impl_(std::make_unique<Impl>()) {
  for (const char* required : {"bootstrap.servers", "transactional.id"}) {
    const auto it = properties.find(required);
    if (it == properties.end() || it->second.empty()) {
      throw StateError(ErrorKind::InvalidArgument,
                       std::string("TransactionalProducer needs the property '") + required + "'");
    }
  }
  RdPtr<rd_kafka_conf_t> conf(rd_kafka_conf_new());
  char error[512];
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      throw StateError(ErrorKind::InvalidArgument, "invalid Kafka property '" + name + "' = '" + value + "': " + error);
    }
  }
  internal::route_logs_to_sink(conf.get());
  rd_kafka_t* rk = rd_kafka_new(RD_KAFKA_PRODUCER, conf.get(), error, sizeof error);
  if (rk == nullptr) throw StateError(ErrorKind::Kafka, std::string("cannot create the producer: ") + error);
  conf.release();
  impl_->handle.reset(rk);
  impl_->timeout = timeout;
  with_retries([&] { return rd_kafka_init_transactions(rk, internal::to_timeout_ms(timeout)); },
               "initialising transactions", timeout);
}

TransactionalProducer::~TransactionalProducer() {
  if (impl_ && impl_->in_transaction) {
    try {
      abort();
    } catch (const std::exception& error) {
      processor::internal::log(LogLevel::Error, "producer", "aborting the open transaction failed: ",
                               error.what());
    }
  }
}

void TransactionalProducer::begin() {
  check(rd_kafka_begin_transaction(impl_->rk()), "beginning a transaction");
  impl_->in_transaction = true;
}

void TransactionalProducer::produce(std::string_view topic, std::string_view key, std::string_view value,
                                    std::int32_t partition) {
  const std::string topic_name(topic);
  for (;;) {
    const rd_kafka_resp_err_t error = rd_kafka_producev(
        impl_->rk(), RD_KAFKA_V_TOPIC(topic_name.c_str()), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_KEY(key.data(), key.size()), RD_KAFKA_V_VALUE(const_cast<char*>(value.data()), value.size()),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END);
    if (error == RD_KAFKA_RESP_ERR__QUEUE_FULL) {
      rd_kafka_poll(impl_->rk(), 10);  // let deliveries drain the queue
      continue;
    }
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "producing to " + topic_name);
    return;
  }
}

std::size_t TransactionalProducer::commit(const KafkaClient& consumer, OffsetManager& manager) {
  const auto offsets = manager.committable_offsets();
  if (!offsets.empty()) {
    auto list = internal::to_partition_list(std::span<const PartitionOffset>(offsets));
    rd_kafka_consumer_group_metadata_t* group = rd_kafka_consumer_group_metadata(consumer.impl().rk());
    rd_kafka_error_t* error =
        rd_kafka_send_offsets_to_transaction(impl_->rk(), list.get(), group, internal::to_timeout_ms(impl_->timeout));
    rd_kafka_consumer_group_metadata_destroy(group);
    check(error, "sending " + std::to_string(offsets.size()) + " offsets into the transaction");
  }
  with_retries([&] { return rd_kafka_commit_transaction(impl_->rk(), internal::to_timeout_ms(impl_->timeout)); },
               "committing the transaction", impl_->timeout);
  impl_->in_transaction = false;
  manager.mark_committed(offsets);
  return offsets.size();
}

void TransactionalProducer::abort() {
  // librdkafka 2.0.2 can fail an abort with INVALID_TXN_STATE while produce requests are still
  // in flight; letting them finish first is harmless, as the abort discards them anyway.
  rd_kafka_flush(impl_->rk(), internal::to_timeout_ms(impl_->timeout));
  with_retries([&] { return rd_kafka_abort_transaction(impl_->rk(), internal::to_timeout_ms(impl_->timeout)); },
               "aborting the transaction", impl_->timeout);
  impl_->in_transaction = false;
}

}  // namespace processor::kafka
