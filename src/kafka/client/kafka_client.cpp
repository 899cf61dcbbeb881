#include "processor/kafka/kafka_client.hpp"

#include "common/log_internal.hpp"
#include "kafka/client/kafka_client_impl.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"

namespace processor::kafka {

KafkaFeatures kafka_features() {
  return KafkaFeatures{rd_kafka_version_str(), PROCESSOR_RDKAFKA_HAS_LEADER_EPOCH};
}

namespace {

// librdkafka calls this from inside rd_kafka_consumer_poll(): no exception may cross it.
void rebalance_callback(rd_kafka_t* rk, rd_kafka_resp_err_t event,
                        rd_kafka_topic_partition_list_t* partitions, void* opaque) {
  auto* impl = static_cast<KafkaClient::Impl*>(opaque);
  impl->rebalances_running.fetch_add(1);
  KafkaClient::Impl::RebalanceHandler handler;
  {
    processor::detail::MutexLock lock(impl->rebalance_mutex);
    handler = impl->rebalance_handler;
  }
  bool handled = false;
  try {
    if (handler) {
      handler(event, partitions);
      handled = true;
    }
  } catch (const std::exception& error) {
    processor::internal::log(LogLevel::Error, "consumer", "rebalance handler failed: ", error.what());
  } catch (...) {
    processor::internal::log(LogLevel::Error, "consumer", "rebalance handler failed");
  }
  if (!handled) internal::apply_rebalance_noexcept(rk, event, partitions);
  impl->ownership_stale.store(true);
  impl->rebalances_running.fetch_sub(1);
}

// How long the destructor waits for a close no KafkaConsumer made: as long as Java's consumer does.
constexpr std::chrono::seconds kCloseTimeout{30};

}  // namespace

KafkaClient::KafkaClient(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

std::shared_ptr<KafkaClient> KafkaClient::create(KafkaProperties properties) {
  internal::require_properties(properties, {"bootstrap.servers", "group.id"}, "KafkaClient");
  // The OffsetManager owns commits: librdkafka must never commit or store offsets by itself.
  properties["enable.auto.commit"] = "false";
  properties["enable.auto.offset.store"] = "false";
  // KafkaConsumer decides out-of-range positions by cause (OutOfRangePolicy), and learns the
  // end position of a drained partition from its end-of-partition event.
  properties["auto.offset.reset"] = "error";
  properties["enable.partition.eof"] = "true";

  auto impl = std::make_unique<Impl>();
  impl->handle =
      internal::create_client(RD_KAFKA_CONSUMER, properties,
                              internal::ClientCallbacks{impl.get(), rebalance_callback}, "the Kafka client");
  impl->group = properties.at("group.id");
  impl->properties = std::move(properties);
  return std::shared_ptr<KafkaClient>(new KafkaClient(std::move(impl)));
}

KafkaClient::~KafkaClient() {
  {
    processor::detail::MutexLock lock(impl_->rebalance_mutex);
    impl_->rebalance_handler = nullptr;  // the default handler unassigns
  }
  if (internal::has_fatal_error(impl_->rk())) {
    // After a fatal error (e.g. a fenced static member) librdkafka's close never finishes: the
    // group is left to the session timeout (destroy_client).
    impl_->closed = true;
    impl_->unanswered_commits.forget();
    impl_->handle.reset();
    return;
  }
  if (!impl_->closed.exchange(true)) impl_->close_consumer(kCloseTimeout);
}

rd_kafka_resp_err_t KafkaClient::Impl::close_consumer(std::chrono::milliseconds timeout) noexcept {
  return internal::close_consumer(rk(), internal::ClientCallbacks{this, rebalance_callback}, timeout);
}

const std::string& KafkaClient::group_id() const noexcept { return impl_->group; }
const KafkaProperties& KafkaClient::properties() const noexcept { return impl_->properties; }

std::vector<TopicPartition> KafkaClient::assignment() const {
  rd_kafka_topic_partition_list_t* raw = nullptr;
  const rd_kafka_resp_err_t error = rd_kafka_assignment(impl_->rk(), &raw);
  internal::PartitionListPtr list(raw);
  if (error == RD_KAFKA_RESP_ERR__DESTROY) return {};  // closed: it left the group
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "reading the assignment");
  return internal::from_partition_list(list.get());
}

void KafkaClient::poll(std::chrono::milliseconds timeout) {
  // Once subscribed the consumer's loop serves the queue.
  if (!impl_->subscribed) rd_kafka_poll(impl_->rk(), internal::to_timeout_ms(timeout));
}

}  // namespace processor::kafka
