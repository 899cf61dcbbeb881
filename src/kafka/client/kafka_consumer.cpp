#include "processor/kafka/kafka_consumer.hpp"

#include <algorithm>
#include <exception>
#include <unordered_map>

#include "common/log_internal.hpp"
#include "kafka/client/consumer_setup.hpp"
#include "kafka/client/kafka_consumer_impl.hpp"
#include "kafka/group/consume_errors.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/group/static_member.hpp"
#include "kafka/rdkafka/client_factory.hpp"

namespace processor::kafka {

using internal::PartitionListPtr;

namespace {

bool contains(const std::vector<TopicPartition>& partitions, std::string_view topic, std::int32_t partition) {
  return std::any_of(partitions.begin(), partitions.end(), [&](const TopicPartition& tp) {
    return tp.partition == partition && tp.topic == topic;
  });
}

}  // namespace

KafkaConsumer::KafkaConsumer(std::shared_ptr<KafkaClient> client, OffsetManager& manager,
                             KafkaConsumerOptions options) {
  if (!client) throw StateError(ErrorKind::InvalidArgument, "KafkaConsumer needs a KafkaClient, got null");
  if (options.topics.empty())
    throw StateError(ErrorKind::InvalidArgument, "KafkaConsumer needs at least one topic");
  for (const auto& topic : options.topics) validate_topic(topic);
  if (manager.consumer_group() != client->group_id()) {
    throw StateError(ErrorKind::InvalidArgument,
                     "the OffsetManager tracks group '" + manager.consumer_group() +
                         "' but the KafkaClient belongs to group '" + client->group_id() + "'");
  }
  validate(options.failure, "KafkaConsumerOptions::failure");
  impl_ = std::make_unique<Impl>(std::move(client), manager, std::move(options));
  if (impl_->options.failure.action == FailureAction::DeadLetter) {
    impl_->dead_letters = std::make_unique<internal::DeadLetterProducer>(
        impl_->client->properties(), impl_->options.failure.dead_letter_topic,
        impl_->options.request_timeout);
  }
  KafkaClient::Impl& client_impl = impl_->client->impl();
  {
    processor::detail::MutexLock lock(client_impl.rebalance_mutex);
    client_impl.rebalance_handler = [impl = impl_.get()](rd_kafka_resp_err_t event,
                                                         rd_kafka_topic_partition_list_t* partitions) {
      impl->on_rebalance(event, partitions);
    };
  }
  rd_kafka_poll_set_consumer(impl_->rk());
  internal::await_static_member_release(impl_->client->properties(), internal::kStaticMemberReleaseLimit);
  auto topics = internal::make_partition_list(impl_->options.topics.size());
  for (const auto& topic : impl_->options.topics) {
    rd_kafka_topic_partition_list_add(topics.get(), topic.c_str(), RD_KAFKA_PARTITION_UA);
  }
  const rd_kafka_resp_err_t error = rd_kafka_subscribe(impl_->rk(), topics.get());
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "subscribing");
  client_impl.subscribed = true;
}

KafkaConsumer::~KafkaConsumer() {
  try {
    close();
  } catch (const std::exception& error) {
    processor::internal::log(LogLevel::Error, "consumer",
                             "closing the Kafka consumer failed: ", error.what());
  }
  processor::detail::MutexLock lock(impl_->client->impl().rebalance_mutex);
  impl_->client->impl().rebalance_handler = nullptr;
}

std::unique_ptr<KafkaConsumer> KafkaConsumer::connect(ConsumerSetup setup, KafkaConsumerOptions options) {
  internal::ConsumerParts parts = internal::build_consumer(setup);
  options.topics = std::move(setup.topics);
  auto consumer =
      std::make_unique<KafkaConsumer>(std::move(parts.client), *parts.manager, std::move(options));
  consumer->impl_->owned_manager = std::move(parts.manager);
  return consumer;
}

OffsetManager& KafkaConsumer::manager() noexcept { return impl_->manager; }

void KafkaConsumer::Impl::take_checkpoint() {
  options.take_checkpoint();
  processor::detail::MutexLock lock(stats_mutex);
  ++stats.checkpoints;
}

void KafkaConsumer::Impl::on_partition_end(const rd_kafka_message_t& message) {
  // At the end of a partition the fetch position is the log end: it has stepped over
  // transaction markers and compacted-away offsets that no record reports.
  const char* topic = rd_kafka_topic_name(message.rkt);
  if (sink != nullptr) {
    note_fetched(manager.partition(topic, message.partition));
    sink->on_partition_end(TopicPartition(topic, message.partition), message.offset);
    return;
  }
  try {
    automatic_commit([&] { manager.update_offset(topic, message.partition, message.offset); });
  } catch (const StateError& error) {
    // A position below the floor means a reset moved the partition meanwhile: keep the reset.
    if (error.kind() != ErrorKind::InvalidArgument) throw;
  }
  note_fetched(manager.partition(topic, message.partition));
  if (options.on_partition_end)
    options.on_partition_end(TopicPartition(topic, message.partition), message.offset);
  take_requested_checkpoint();
}

void KafkaConsumer::Impl::on_consume_error(const rd_kafka_message_t& message) {
  switch (internal::classify_consume_error(rk(), message, client->group_id(), options.topics, "consumer")) {
    case internal::ConsumeEvent::PartitionEnd:
      on_partition_end(message);
      return;
    case internal::ConsumeEvent::OutOfRange:
      break;
    case internal::ConsumeEvent::Transient:
      return;
  }
  // The log moved under a running consumer (retention or truncation): decide again by cause.
  // A truncation that librdkafka's offset validation found names where the log diverged.
  const TopicPartition tp(rd_kafka_topic_name(message.rkt), message.partition);
  auto list = internal::to_partition_list(std::vector<TopicPartition>{tp});
  const std::optional<std::int64_t> divergence =
      message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET
          ? internal::truncation_divergence(rd_kafka_message_errstr(&message))
          : std::nullopt;
  const std::vector<Start> restarts{
      divergence ? start_after_truncation(tp, *divergence)
                 : start_position(tp, message.offset >= 0 ? std::optional(message.offset) : std::nullopt)};
  list->elems[0].offset = restarts[0].position;
  restart_at(list.get(), restarts, "seek");
}

void KafkaConsumer::Impl::restart_at(rd_kafka_topic_partition_list_t* positions,
                                     const std::vector<Start>& restarts, const char* what) {
  const auto moved = internal::from_partition_list(positions);
  manager.forget_partitions(moved);
  forget_unvalidated(moved);
  drop_buffered(moved);
  for (int i = 0; i < positions->cnt; ++i) {
    manager.adopt_start_position(positions->elems[i].topic, positions->elems[i].partition,
                                 restarts[i].position, restarts[i].stored);
    starts.insert_or_assign(TopicPartition(positions->elems[i].topic, positions->elems[i].partition),
                            restarts[i]);
  }
  internal::move_partitions(rk(), positions, internal::to_timeout_ms(options.request_timeout), what,
                            [&](const char* topic, std::int32_t partition) {
                              const auto start = starts.find(TopicPartition(topic, partition));
                              return start == starts.end() ? RD_KAFKA_OFFSET_INVALID : start->second.position;
                            });
}

void KafkaConsumer::Impl::refresh_high_watermarks() {
  const auto now = Clock::now();
  if (now < next_high_watermark_refresh) return;
  next_high_watermark_refresh = now + options.high_watermark_refresh;
  for (const auto& tp : client->assignment()) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    // Cached from fetch responses: no request.
    if (rd_kafka_get_watermark_offsets(rk(), tp.topic.c_str(), tp.partition, &low, &high) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        high >= 0) {
      manager.update_high_watermark(tp.topic, tp.partition, high);
    }
  }
}

void KafkaConsumer::Impl::record_fetched_high_watermarks() {
  for (const PartitionHandle& partition : fetched) {
    std::int64_t low = 0;
    std::int64_t high = 0;
    if (rd_kafka_get_watermark_offsets(rk(), partition.topic().c_str(), partition.partition(), &low, &high) ==
            RD_KAFKA_RESP_ERR_NO_ERROR &&
        high >= 0) {
      manager.update_high_watermark(partition.topic(), partition.partition(), high);
    }
  }
  fetched.clear();
}

void KafkaConsumer::Impl::fill_buffer(int timeout_ms) {
  filling = true;
  buffer.fill(timeout_ms);
  filling = false;
  if (!revoked_while_filling.empty()) [[unlikely]] {
    buffer.drop_filled([&](std::size_t index, std::string_view topic, std::int32_t partition) {
      return std::any_of(revoked_while_filling.begin(), revoked_while_filling.end(),
                         [&](const RevokedWhileFilling& r) {
                           return index < r.taken_before && contains(r.partitions, topic, partition);
                         });
    });
    revoked_while_filling.clear();
  }
  rethrow_callback_error();
}

void KafkaConsumer::Impl::drop_buffered(const std::vector<TopicPartition>& partitions) {
  if (buffer.empty() || partitions.empty()) return;
  buffer.drop(
      [&](std::string_view topic, std::int32_t partition) { return contains(partitions, topic, partition); });
}

void KafkaConsumer::Impl::rethrow_callback_error() {
  if (callback_error) std::rethrow_exception(std::exchange(callback_error, nullptr));
}

std::size_t KafkaConsumer::poll(const RecordHandler& handler) {
  if (impl_->closed) throw StateError(ErrorKind::InvalidArgument, "poll on a closed KafkaConsumer");
  if (impl_->failed) std::rethrow_exception(impl_->failed);
  constexpr std::size_t kMaxBatch = internal::FetchBuffer::kMaxBatch;  // one batch of the fetch path
  // Outside run(), a stop() ends only the poll() it interrupted.
  if (!impl_->running) impl_->stop_requested = false;
  std::size_t handled = 0;
  impl_->last_handle.reset();
  int timeout_ms = internal::to_timeout_ms(impl_->options.poll_timeout);
  while (handled < kMaxBatch && !impl_->stop_requested.load(std::memory_order_relaxed)) {
    bool arrived = false;
    RdPtr<rd_kafka_message_t> message = impl_->next_record(timeout_ms, arrived);
    if (!arrived) break;
    timeout_ms = 0;  // drain what is already fetched, then return
    if (!message) continue;
    ConsumedRecord record;
    record.topic = rd_kafka_topic_name(message->rkt);
    record.partition = message->partition;
    record.offset = message->offset;
    record.timestamp_ms = rd_kafka_message_timestamp(message.get(), nullptr);
    record.key = std::string_view(static_cast<const char*>(message->key), message->key_len);
    record.value = std::string_view(static_cast<const char*>(message->payload), message->len);
    try {
      impl_->handle(handler, record, *message);
    } catch (...) {
      impl_->count_records(handled);
      throw;
    }
    ++handled;
    PartitionHandle& partition = impl_->handle_for(*message, record.topic);
    impl_->automatic_commit([&] { partition.update(record.offset + 1); });
    impl_->take_requested_checkpoint();
  }
  impl_->finish_poll(handled);
  return handled;
}

RdPtr<rd_kafka_message_t> KafkaConsumer::Impl::next_record(int timeout_ms, bool& arrived) {
  // A batch handed out slower than its rate foresaw: librdkafka's callbacks (a rebalance) are
  // served now, not once the batch is handed out.
  if (!buffer.empty() && buffer.due()) fill_buffer(0);
  if (buffer.empty()) {
    // What is queued first; then, with nothing queued, a wait.
    fill_buffer(0);
    if (buffer.empty() && timeout_ms > 0) fill_buffer(timeout_ms);
  }
  RdPtr<rd_kafka_message_t> message = buffer.pop();
  arrived = message != nullptr;
  // Nothing arrives from a cluster that refuses this client (a wrong password, an untrusted
  // certificate): librdkafka retries for ever, and only the user can fix it.
  if (!message) internal::throw_if_refused(rk());
  if (message && message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    on_consume_error(*message);
    message.reset();
  }
  return message;
}

void KafkaConsumer::Impl::finish_poll(std::size_t handled) {
  if (!unvalidated.empty()) [[unlikely]]
    validate_starts();
  count_records(handled);
  record_fetched_high_watermarks();
  refresh_high_watermarks();
  automatic_commit([&] { manager.poll(); });
}

template <class Call>
void KafkaConsumer::Impl::automatic_commit(Call&& call) {
  try {
    call();
  } catch (const StateError& error) {
    // A commit the strategy triggered failed: e.g. ILLEGAL_GENERATION while a rebalance is under
    // way. The offsets stay pending and the next trigger retries them; the consumer goes on.
    // An update the manager refuses is a bug in the caller and is not swallowed.
    if (error.kind() == ErrorKind::InvalidArgument) throw;
    processor::detail::MutexLock lock(stats_mutex);
    ++stats.failed_automatic_commits;
    if (stats.failed_automatic_commits <= 10 || stats.failed_automatic_commits % 1000 == 0) {
      processor::internal::log(LogLevel::Warning, "consumer", "automatic commit failed (",
                               stats.failed_automatic_commits,
                               " so far), offsets stay pending: ", error.what());
    }
  }
}

void KafkaConsumer::run(const RecordHandler& handler) {
  impl_->running = true;
  try {
    while (!impl_->stop_requested.load(std::memory_order_relaxed)) poll(handler);
  } catch (...) {
    impl_->running = false;
    throw;
  }
  impl_->running = false;
  impl_->stop_requested = false;
}

void KafkaConsumer::stop() noexcept { impl_->stop_requested = true; }

void KafkaConsumer::request_checkpoint() {
  if (!impl_->options.take_checkpoint) {
    throw StateError(ErrorKind::InvalidArgument,
                     "request_checkpoint() needs KafkaConsumerOptions::take_checkpoint, which is not set");
  }
  impl_->checkpoint_requested.store(true, std::memory_order_relaxed);
}

void KafkaConsumer::close() {
  if (impl_->closed) return;
  impl_->closed = true;
  KafkaClient::Impl& client_impl = impl_->client->impl();
  if (client_impl.closed.exchange(true)) return;
  // Fetched records not handed out are not handled: the partitions' next owner reads them.
  impl_->buffer.clear();
  // Revokes every partition through on_rebalance, which commits first; waits for librdkafka (the
  // leave) at most 3 request time-outs, 30 s by default (Java's consumer's close time-out).
  const rd_kafka_resp_err_t error = client_impl.close_consumer(3 * impl_->options.request_timeout);
  impl_->rethrow_callback_error();
  // A close given up after its time-out has logged why: the consumer is closed all the same.
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR && error != RD_KAFKA_RESP_ERR__TIMED_OUT) {
    throw internal::kafka_error(error, "closing the consumer");
  }
}

void KafkaConsumer::rewind_to_committed() {
  const auto assigned = impl_->client->assignment();
  if (assigned.empty()) return;
  auto committed = internal::to_partition_list(assigned);
  const auto timeout = impl_->options.request_timeout;
  internal::read_committed(impl_->rk(), committed.get(), timeout, internal::start_retry_policy(timeout));
  auto positions = internal::to_partition_list(assigned);
  const auto committed_views = impl_->manager.get_all_committed();
  std::vector<Impl::Start> restarts;
  restarts.reserve(assigned.size());
  for (int i = 0; i < positions->cnt; ++i) {
    const TopicPartition tp(positions->elems[i].topic, positions->elems[i].partition);
    if (const Impl::Start* start = impl_->uncommitted_start(tp, committed_views)) {
      // Nothing committed since the partition started: back to its start, with the store's view.
      restarts.push_back(*start);
    } else {
      std::optional<std::int64_t> known = impl_->manager.get_offset(tp.topic, tp.partition);
      if (!known && committed->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR &&
          committed->elems[i].offset >= 0) {
        known = committed->elems[i].offset;
      }
      restarts.push_back(impl_->start_position(tp, known));
    }
    positions->elems[i].offset = restarts.back().position;
  }
  impl_->restart_at(positions.get(), restarts, "rewinding");
}

std::vector<TopicPartition> KafkaConsumer::assignment() const { return impl_->client->assignment(); }

ConsumerStats KafkaConsumer::stats() const {
  processor::detail::MutexLock lock(impl_->stats_mutex);
  return impl_->stats;
}

}  // namespace processor::kafka

namespace processor::kafka::internal {

void attach_sink(KafkaConsumer::Impl& consumer, RecordSink* sink) { consumer.sink = sink; }

bool poll_into_sink(KafkaConsumer::Impl& impl, int timeout_ms) {
  if (impl.closed) throw StateError(ErrorKind::InvalidArgument, "poll on a closed KafkaConsumer");
  bool arrived = false;
  RdPtr<rd_kafka_message_t> message = impl.next_record(timeout_ms, arrived);
  if (message) {
    impl.handle_for(*message, rd_kafka_topic_name(message->rkt));
    impl.sink->on_record(std::move(message));
  }
  return arrived;
}

void update_position(KafkaConsumer::Impl& consumer, const TopicPartition& tp, std::int64_t position) {
  consumer.automatic_commit([&] { consumer.manager.update_offset(tp.topic, tp.partition, position); });
}

void finish_poll(KafkaConsumer::Impl& consumer, std::size_t records) {
  consumer.finish_poll(records);
  // The next poll notes its first run of records again (see handle_for).
  consumer.last_handle.reset();
}

void take_checkpoint(KafkaConsumer::Impl& consumer) { consumer.take_checkpoint(); }

rd_kafka_t* handle(KafkaConsumer::Impl& consumer) { return consumer.rk(); }

}  // namespace processor::kafka::internal
