#include "processor/kafka/kafka_consumer.hpp"

#include <cstring>
#include <exception>
#include <iostream>
#include <mutex>

#include "kafka/rdkafka/kafka_client_impl.hpp"

namespace processor::kafka {

using internal::PartitionListPtr;
using internal::RdPtr;

struct KafkaConsumer::Impl {
  using Clock = std::chrono::steady_clock;

  Impl(std::shared_ptr<KafkaClient> kafka_client, OffsetManager& offset_manager, KafkaConsumerOptions consumer_options)
      : client(std::move(kafka_client)), manager(offset_manager), options(std::move(consumer_options)) {}

  std::shared_ptr<KafkaClient> client;
  OffsetManager& manager;
  const KafkaConsumerOptions options;
  std::atomic<bool> stop_requested{false};
  bool running = false;  // inside run()
  bool closed = false;
  // An error raised inside a librdkafka callback, rethrown on the polling thread.
  std::exception_ptr callback_error;
  Clock::time_point next_high_watermark_refresh{};

  mutable std::mutex stats_mutex;
  ConsumerStats stats;  // GUARDED_BY(stats_mutex)

  rd_kafka_t* rk() const noexcept { return client->impl().rk(); }

  void on_rebalance(rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* partitions);
  void assign(rd_kafka_topic_partition_list_t* partitions);
  void revoke(rd_kafka_topic_partition_list_t* partitions);
  std::int64_t start_position(const TopicPartition& tp, const std::optional<std::int64_t>& committed);
  void on_partition_end(const rd_kafka_message_t& message);
  void on_consume_error(const rd_kafka_message_t& message);
  // Starts each listed partition again at its offset: the manager forgets what was pending and
  // adopts the offset as committed, then the consumer seeks there.
  void restart_at(rd_kafka_topic_partition_list_t* positions, const char* what);
  void refresh_high_watermarks();
  void rethrow_callback_error();
  // The manager's handle of the message's partition. Records arrive in runs of one partition,
  // so the last one is remembered: the by-name lookup runs once per run, not once per record.
  PartitionHandle& handle_for(const rd_kafka_message_t& message, std::string_view topic) {
    if (!last_handle || last_topic != message.rkt || last_handle->partition() != message.partition ||
        last_handle->topic() != topic) {
      last_handle.emplace(manager.partition(topic, message.partition));
      last_topic = message.rkt;
    }
    return *last_handle;
  }
  std::optional<PartitionHandle> last_handle;
  const rd_kafka_topic_t* last_topic = nullptr;

  void count_records(std::size_t handled) {
    std::lock_guard lock(stats_mutex);
    stats.records += handled;
  }
  // Runs a call that may trigger a strategy commit; a failed commit is logged and counted.
  template <class Call>
  void automatic_commit(Call&& call);
};

namespace {

bool cooperative(rd_kafka_t* rk) { return std::strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0; }

const char* cause_name(int cause) {
  switch (cause) {
    case 0: return "has no committed offset";
    case 1: return "is below the log start";
    default: return "is above the log end";
  }
}

}  // namespace

KafkaConsumer::KafkaConsumer(std::shared_ptr<KafkaClient> client, OffsetManager& manager,
                             KafkaConsumerOptions options) {
  if (!client) throw StateError(ErrorKind::InvalidArgument, "KafkaConsumer needs a KafkaClient, got null");
  if (options.topics.empty()) throw StateError(ErrorKind::InvalidArgument, "KafkaConsumer needs at least one topic");
  for (const auto& topic : options.topics) validate_topic(topic);
  if (manager.consumer_group() != client->group_id()) {
    throw StateError(ErrorKind::InvalidArgument, "the OffsetManager tracks group '" + manager.consumer_group() +
                                                     "' but the KafkaClient belongs to group '" + client->group_id() + "'");
  }
  impl_ = std::make_unique<Impl>(std::move(client), manager, std::move(options));
  KafkaClient::Impl& client_impl = impl_->client->impl();
  {
    std::lock_guard lock(client_impl.rebalance_mutex);
    client_impl.rebalance_handler = [impl = impl_.get()](rd_kafka_resp_err_t event,
                                                          rd_kafka_topic_partition_list_t* partitions) {
      impl->on_rebalance(event, partitions);
    };
  }
  rd_kafka_poll_set_consumer(impl_->rk());
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
    std::cerr << "processor: closing the Kafka consumer failed: " << error.what() << "\n";
  }
  std::lock_guard lock(impl_->client->impl().rebalance_mutex);
  impl_->client->impl().rebalance_handler = nullptr;
}

void KafkaConsumer::Impl::on_rebalance(rd_kafka_resp_err_t event, rd_kafka_topic_partition_list_t* partitions) {
  try {
    if (event == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      assign(partitions);
    } else {
      revoke(partitions);
    }
  } catch (...) {
    if (!callback_error) callback_error = std::current_exception();
    // librdkafka must still see the rebalance applied, or the member stalls.
    if (event != RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) KafkaClient::Impl::apply_default_rebalance(rk(), event, partitions);
  }
}

std::int64_t KafkaConsumer::Impl::start_position(const TopicPartition& tp, const std::optional<std::int64_t>& committed) {
  std::optional<std::int64_t> position;
  if (options.checkpoint_position) position = options.checkpoint_position(tp);
  if (!position) {
    if (auto stored = manager.offset_store()->get_offset(manager.consumer_group(), tp)) position = stored->offset;
  }
  if (!position) position = committed;

  std::int64_t low = 0;
  std::int64_t high = 0;
  const rd_kafka_resp_err_t error =
      rd_kafka_query_watermark_offsets(rk(), tp.topic.c_str(), tp.partition, &low, &high, 10'000);
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "reading the log range of " + tp.to_key());
  manager.update_high_watermark(tp.topic, tp.partition, high);

  int cause = -1;
  OutOfRangeAction action = OutOfRangeAction::Earliest;
  if (!position) {
    cause = 0;
    action = options.out_of_range.no_offset;
  } else if (*position < low) {
    cause = 1;
    action = options.out_of_range.below_log_start;
  } else if (*position > high) {
    cause = 2;
    action = options.out_of_range.above_log_end;
  }
  if (cause < 0) return *position;

  if (action == OutOfRangeAction::Error) {
    throw StateError(ErrorKind::Kafka,
                     tp.to_key() + " " + cause_name(cause) + " (position " +
                         (position ? std::to_string(*position) : std::string("none")) + ", log [" +
                         std::to_string(low) + ", " + std::to_string(high) + "]) and its policy is Error",
                     RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET, false);
  }
  const std::int64_t moved_to = action == OutOfRangeAction::Earliest ? low : high;
  // Records jumped over: lost to retention below the log start, or left unread by Latest.
  const std::int64_t from = position ? *position : low;
  std::lock_guard lock(stats_mutex);
  ++stats.out_of_range_resets;
  if (moved_to > from) stats.records_skipped += static_cast<std::uint64_t>(moved_to - from);
  return moved_to;
}

void KafkaConsumer::Impl::assign(rd_kafka_topic_partition_list_t* partitions) {
  const auto assigned = internal::from_partition_list(partitions);
  // One OffsetFetch for the whole assignment.
  auto committed = internal::to_partition_list(assigned);
  const rd_kafka_resp_err_t fetch_error = rd_kafka_committed(rk(), committed.get(), 10'000);
  if (fetch_error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(fetch_error, "reading committed offsets");

  for (int i = 0; i < partitions->cnt; ++i) {
    const TopicPartition tp(partitions->elems[i].topic, partitions->elems[i].partition);
    std::optional<std::int64_t> broker_committed;
    if (committed->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR && committed->elems[i].offset >= 0) {
      broker_committed = committed->elems[i].offset;
    }
    const std::int64_t position = start_position(tp, broker_committed);
    manager.adopt_committed_offset(tp.topic, tp.partition, position);
    partitions->elems[i].offset = position;
  }
  if (cooperative(rk())) {
    RdPtr<rd_kafka_error_t> error(rd_kafka_incremental_assign(rk(), partitions));
    if (error) throw StateError(ErrorKind::Kafka, std::string("incremental assign: ") + rd_kafka_error_string(error.get()),
                                rd_kafka_error_code(error.get()), false);
  } else {
    const rd_kafka_resp_err_t error = rd_kafka_assign(rk(), partitions);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "assign");
  }
  {
    std::lock_guard lock(stats_mutex);
    stats.assignments += assigned.size();
  }
  if (options.on_assigned) options.on_assigned(assigned);
}

void KafkaConsumer::Impl::revoke(rd_kafka_topic_partition_list_t* partitions) {
  const auto revoked = internal::from_partition_list(partitions);
  const bool lost = rd_kafka_assignment_lost(rk()) != 0;
  bool commit_failed = false;
  if (lost) {
    if (options.on_lost) options.on_lost(revoked);
  } else if (!options.commit_on_revoke) {
    if (options.on_revoked) options.on_revoked(revoked);
  } else {
    if (options.on_revoked) options.on_revoked(revoked);
    // Final offsets go out while this member still owns the partitions. If that fails the next
    // owner resumes from the last commit: records since then are processed again, never lost.
    try {
      manager.commit();
    } catch (const StateError& error) {
      commit_failed = true;
      std::cerr << "processor: commit on revoke failed, the next owner reprocesses from the last commit: "
                << error.what() << "\n";
    }
  }
  manager.forget_partitions(revoked);
  KafkaClient::Impl::apply_default_rebalance(rk(), RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS, partitions);
  std::lock_guard lock(stats_mutex);
  (lost ? stats.lost : stats.revocations) += revoked.size();
  if (commit_failed) ++stats.failed_revoke_commits;
}

void KafkaConsumer::Impl::on_partition_end(const rd_kafka_message_t& message) {
  // At the end of a partition the fetch position is the log end: it has stepped over
  // transaction markers and compacted-away offsets that no record reports.
  const char* topic = rd_kafka_topic_name(message.rkt);
  try {
    manager.update_offset(topic, message.partition, message.offset);
  } catch (const StateError& error) {
    // A position below the floor means a reset moved the partition meanwhile: keep the reset.
    if (error.kind() != ErrorKind::InvalidArgument) throw;
  }
}

void KafkaConsumer::Impl::on_consume_error(const rd_kafka_message_t& message) {
  if (message.err == RD_KAFKA_RESP_ERR__PARTITION_EOF) {
    on_partition_end(message);
    return;
  }
  if (message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET || message.err == RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE) {
    // The log moved under a running consumer (retention or truncation): decide again by cause.
    const TopicPartition tp(rd_kafka_topic_name(message.rkt), message.partition);
    auto list = internal::to_partition_list(std::vector<TopicPartition>{tp});
    list->elems[0].offset = start_position(tp, message.offset >= 0 ? std::optional(message.offset) : std::nullopt);
    restart_at(list.get(), "seek");
    return;
  }
  char reason[512];
  const rd_kafka_resp_err_t fatal = rd_kafka_fatal_error(rk(), reason, sizeof reason);
  if (fatal != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(fatal, std::string("fatal consumer error: ") + reason);
  // Anything else is transient (a broker connection, a leader move): librdkafka retries it.
}

void KafkaConsumer::Impl::restart_at(rd_kafka_topic_partition_list_t* positions, const char* what) {
  manager.forget_partitions(internal::from_partition_list(positions));
  for (int i = 0; i < positions->cnt; ++i) {
    manager.adopt_committed_offset(positions->elems[i].topic, positions->elems[i].partition, positions->elems[i].offset);
  }
  RdPtr<rd_kafka_error_t> error(rd_kafka_seek_partitions(rk(), positions, 10'000));
  if (error) {
    throw StateError(ErrorKind::Kafka, std::string(what) + ": " + rd_kafka_error_string(error.get()),
                     rd_kafka_error_code(error.get()), false);
  }
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

void KafkaConsumer::Impl::rethrow_callback_error() {
  if (callback_error) std::rethrow_exception(std::exchange(callback_error, nullptr));
}

std::size_t KafkaConsumer::poll(const RecordHandler& handler) {
  if (impl_->closed) throw StateError(ErrorKind::InvalidArgument, "poll on a closed KafkaConsumer");
  constexpr std::size_t kMaxBatch = 500;
  // Outside run(), a stop() ends only the poll() it interrupted.
  if (!impl_->running) impl_->stop_requested = false;
  std::size_t handled = 0;
  int timeout_ms = internal::to_timeout_ms(impl_->options.poll_timeout);
  while (handled < kMaxBatch && !impl_->stop_requested.load(std::memory_order_relaxed)) {
    RdPtr<rd_kafka_message_t> message(rd_kafka_consumer_poll(impl_->rk(), timeout_ms));
    impl_->rethrow_callback_error();
    if (!message) break;
    timeout_ms = 0;  // drain what is already fetched, then return
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      impl_->on_consume_error(*message);
      continue;
    }
    ConsumedRecord record;
    record.topic = rd_kafka_topic_name(message->rkt);
    record.partition = message->partition;
    record.offset = message->offset;
    record.timestamp_ms = rd_kafka_message_timestamp(message.get(), nullptr);
    record.key = std::string_view(static_cast<const char*>(message->key), message->key_len);
    record.value = std::string_view(static_cast<const char*>(message->payload), message->len);
    try {
      handler(record);
    } catch (...) {
      impl_->count_records(handled);
      throw;
    }
    ++handled;
    PartitionHandle& partition = impl_->handle_for(*message, record.topic);
    impl_->automatic_commit([&] { partition.update(record.offset + 1); });
  }
  impl_->count_records(handled);
  impl_->refresh_high_watermarks();
  impl_->automatic_commit([&] { impl_->manager.poll(); });
  return handled;
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
    std::lock_guard lock(stats_mutex);
    ++stats.failed_automatic_commits;
    if (stats.failed_automatic_commits <= 10 || stats.failed_automatic_commits % 1000 == 0) {
      std::cerr << "processor: automatic commit failed (" << stats.failed_automatic_commits
                << " so far), offsets stay pending: " << error.what() << "\n";
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

void KafkaConsumer::close() {
  if (impl_->closed) return;
  impl_->closed = true;
  KafkaClient::Impl& client_impl = impl_->client->impl();
  if (client_impl.closed.exchange(true)) return;
  // Revokes every partition through on_rebalance, which commits first.
  const rd_kafka_resp_err_t error = rd_kafka_consumer_close(impl_->rk());
  impl_->rethrow_callback_error();
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(error, "closing the consumer");
}

void KafkaConsumer::rewind_to_committed() {
  const auto assigned = impl_->client->assignment();
  if (assigned.empty()) return;
  auto committed = internal::to_partition_list(assigned);
  const rd_kafka_resp_err_t fetch_error = rd_kafka_committed(impl_->rk(), committed.get(), 10'000);
  if (fetch_error != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(fetch_error, "reading committed offsets");
  auto positions = internal::to_partition_list(assigned);
  for (int i = 0; i < positions->cnt; ++i) {
    const TopicPartition tp(positions->elems[i].topic, positions->elems[i].partition);
    std::optional<std::int64_t> known = impl_->manager.get_offset(tp.topic, tp.partition);
    if (!known && committed->elems[i].err == RD_KAFKA_RESP_ERR_NO_ERROR && committed->elems[i].offset >= 0) {
      known = committed->elems[i].offset;
    }
    positions->elems[i].offset = impl_->start_position(tp, known);
  }
  impl_->restart_at(positions.get(), "rewinding");
}

std::vector<TopicPartition> KafkaConsumer::assignment() const { return impl_->client->assignment(); }

ConsumerStats KafkaConsumer::stats() const {
  std::lock_guard lock(impl_->stats_mutex);
  return impl_->stats;
}

}  // namespace processor::kafka
