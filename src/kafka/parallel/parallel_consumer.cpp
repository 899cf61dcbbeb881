// ParallelConsumer: the polling thread. Fetches records through its KafkaConsumer, tracks each
// in the OffsetManager and queues it for the workers; applies back-pressure; runs checkpoints at
// a barrier.

#include "processor/kafka/parallel_consumer.hpp"

#include <algorithm>
#include <string>
#include <thread>

#include "common/log_internal.hpp"
#include "kafka/client/consumer_setup.hpp"
#include "kafka/client/fetch_buffer.hpp"
#include "kafka/parallel/parallel_consumer_impl.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "processor/error.hpp"

namespace processor::kafka {

namespace {

constexpr int kMaxConcurrency = 100'000;
// Records one poll() fetches at most: one batch of the fetch path, as KafkaConsumer::poll().
constexpr std::size_t kMaxBatch = internal::FetchBuffer::kMaxBatch;
// Records handed to the WorkQueue at once: one lock, and at most one wake-up, for many records
// (256 against 64: 5-10% more records/s for a handler that does no work, bench_parallel).
constexpr std::size_t kSubmitBatch = 256;
// Fetched records between two looks at the buffered bytes (the queue's and the batch's).
constexpr std::uint64_t kBackPressureEvery = 64;
// While a partition is paused the poller comes back this often to resume it when room is free.
constexpr std::chrono::milliseconds kPausedPollTimeout{5};
// What handing a record to a sleeping worker costs in CPU (a futex wake-up, the switches).
constexpr std::int64_t kHandOffNanos = 5'000;

// Handlers quicker than this run in series. With c cores the workers run c - 1 records at once
// (the poller and librdkafka keep one busy); in series one at a time, without the hand-off: the
// series is faster while run < hand-off / (c - 2). On 2 cores it always is: bounded at 20 µs, so
// that a batch of slow records is not held up by one worker at a time. (And the WorkQueue's
// watch wakes the other workers as soon as the series falls behind.)
std::int64_t quick_run_limit_nanos() {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return cores <= 2 ? 20'000 : kHandOffNanos / static_cast<std::int64_t>(cores - 2);
}

[[noreturn]] void refuse(const std::string& what) { throw StateError(ErrorKind::InvalidArgument, what); }

void validate(const ParallelConsumerOptions& options, const ParallelConsumer::RecordHandler& handler) {
  if (options.max_concurrency < 1 || options.max_concurrency > kMaxConcurrency) {
    refuse("max_concurrency " + std::to_string(options.max_concurrency) +
           " is invalid: it must be between 1 and " + std::to_string(kMaxConcurrency));
  }
  if (options.drain_timeout.count() < 0) {
    refuse("drain_timeout " + std::to_string(options.drain_timeout.count()) +
           " ms is invalid: it must not be negative");
  }
  kafka::validate(options.consumer.failure, "ParallelConsumerOptions::consumer.failure");
  if (options.max_buffered_bytes == 0) refuse("max_buffered_bytes 0 is invalid: it must be at least 1");
  if (!handler) refuse("ParallelConsumer needs a record handler, got an empty one");
}

}  // namespace

const char* to_string(ProcessingOrder order) noexcept {
  switch (order) {
    case ProcessingOrder::Partition:
      return "partition";
    case ProcessingOrder::Key:
      return "key";
    case ProcessingOrder::Unordered:
      return "unordered";
  }
  return "unknown";
}

ParallelConsumer::Impl::Impl(OffsetManager& offset_manager, ParallelConsumerOptions consumer_options,
                             RecordHandler record_handler)
    : manager(offset_manager),
      options(std::move(consumer_options)),
      handler(std::move(record_handler)),
      queue(static_cast<std::size_t>(options.max_concurrency)),
      quick_run_nanos(quick_run_limit_nanos()) {
  batch.reserve(kSubmitBatch);
}

ParallelConsumer::Impl::~Impl() {
  // Without the sink, a close from the consumer's destructor commits what is acknowledged.
  if (consumer_impl != nullptr) internal::attach_sink(*consumer_impl, nullptr);
  consumer.reset();
  stop_workers();
}

ParallelConsumer::ParallelConsumer(std::shared_ptr<KafkaClient> client, OffsetManager& manager,
                                   ParallelConsumerOptions options, RecordHandler handler) {
  validate(options, handler);
  KafkaConsumerOptions consumer_options = options.consumer;
  consumer_options.failure = {};  // the records' failures are the workers' (parallel_workers.cpp)
  impl_ = std::make_unique<Impl>(manager, std::move(options), std::move(handler));
  if (impl_->options.consumer.failure.action == FailureAction::DeadLetter && !impl_->options.on_failure) {
    impl_->dead_letters = std::make_unique<internal::DeadLetterProducer>(
        client->properties(), impl_->options.consumer.failure.dead_letter_topic,
        impl_->options.consumer.request_timeout);
  }
  impl_->consumer = std::make_unique<KafkaConsumer>(std::move(client), manager, std::move(consumer_options));
  impl_->consumer_impl = impl_->consumer->impl_.get();
  impl_->rk = internal::handle(*impl_->consumer_impl);
  internal::attach_sink(*impl_->consumer_impl, impl_.get());
  impl_->start_workers();
}

std::unique_ptr<ParallelConsumer> ParallelConsumer::connect(ConsumerSetup setup,
                                                            ParallelConsumerOptions options,
                                                            RecordHandler handler) {
  internal::ConsumerParts parts = internal::build_consumer(setup);
  options.consumer.topics = std::move(setup.topics);
  auto consumer = std::make_unique<ParallelConsumer>(std::move(parts.client), *parts.manager,
                                                     std::move(options), std::move(handler));
  consumer->impl_->owned_manager = std::move(parts.manager);
  return consumer;
}

OffsetManager& ParallelConsumer::manager() noexcept { return impl_->manager; }

ParallelConsumer::~ParallelConsumer() {
  try {
    close();
  } catch (const std::exception& error) {
    processor::internal::log(LogLevel::Error, "parallel",
                             "closing the parallel consumer failed: ", error.what());
  }
}

RecordWork::RecordWork(const rd_kafka_message_t& message, AckTicket record_ticket,
                       std::shared_ptr<PartitionRun> tenure) {
  reuse(message, std::move(record_ticket), std::move(tenure));
}

void RecordWork::reuse(const rd_kafka_message_t& message, AckTicket record_ticket,
                       std::shared_ptr<PartitionRun> tenure) {
  key_size = message.key_len;
  attempts = 0;
  offset = message.offset;
  timestamp_ms = rd_kafka_message_timestamp(&message, nullptr);
  ticket = std::move(record_ticket);
  run = std::move(tenure);
  // A buffer of the exact size when the old one is too small or far too large: growing it would
  // double it (libstdc++), and its capacity is what max_buffered_bytes counts.
  const std::size_t needed = message.key_len + message.len;
  if (needed > key_and_value.capacity() || key_and_value.capacity() > 2 * needed + 64) {
    std::string exact;
    exact.reserve(needed);
    key_and_value.swap(exact);
  }
  key_and_value.clear();
  key_and_value.append(static_cast<const char*>(message.key), message.key_len);
  key_and_value.append(static_cast<const char*>(message.payload), message.len);
  bytes = sizeof(RecordWork) + key_and_value.capacity();
}

ConsumedRecord RecordWork::record() const {
  ConsumedRecord record;
  record.topic = run->partition.topic;
  record.partition = run->partition.partition;
  record.offset = offset;
  record.timestamp_ms = timestamp_ms;
  record.key = std::string_view(key_and_value).substr(0, key_size);
  record.value = std::string_view(key_and_value).substr(key_size);
  return record;
}

std::uint64_t ParallelConsumer::Impl::lane_of(const PartitionRun& run,
                                              const rd_kafka_message_t& message) const {
  switch (options.ordering) {
    case ProcessingOrder::Unordered:
      return internal::QueuedWork::kNoLane;
    case ProcessingOrder::Partition:
      return run.serial;
    case ProcessingOrder::Key:
      break;
  }
  // Records without a key are ordered as one key. Two keys whose hashes collide share a lane:
  // they are serialized, never reordered.
  const std::string_view key(static_cast<const char*>(message.key), message.key_len);
  std::uint64_t lane = std::hash<std::string_view>{}(key) ^ (run.serial * 0x9E3779B97F4A7C15ULL);
  lane ^= lane >> 31;
  return lane == internal::QueuedWork::kNoLane ? 1 : lane;
}

PartitionRun* ParallelConsumer::Impl::run_for(const rd_kafka_message_t& message) {
  if (last_run != nullptr && last_topic == message.rkt && last_partition == message.partition)
    return last_run;
  const auto it = runs.find(TopicPartition(rd_kafka_topic_name(message.rkt), message.partition));
  if (it == runs.end()) return nullptr;
  last_topic = message.rkt;
  last_partition = message.partition;
  last_run = it->second.get();
  return last_run;
}

bool ParallelConsumer::Impl::dispatch(PartitionRun& run, internal::RdPtr<rd_kafka_message_t>& message) {
  const std::int64_t offset = message->offset;
  if (offset < run.skip_below || (run.restored && run.restored->contains(offset))) {
    skipped_after_restart.fetch_add(1, std::memory_order_relaxed);
    message.reset();
    return true;
  }
  std::optional<AckTicket> ticket =
      manager.track_record(run.partition.topic, run.partition.partition, offset);
  if (!ticket) return false;
  std::unique_ptr<RecordWork> work;
  if (spares.empty()) {
    work = std::make_unique<RecordWork>(*message, std::move(*ticket), run.shared_from_this());
  } else {
    work.reset(static_cast<RecordWork*>(spares.back().release()));
    spares.pop_back();
    work->reuse(*message, std::move(*ticket), run.shared_from_this());
  }
  work->lane = lane_of(run, *message);
  work->group = &run;
  message.reset();  // back to librdkafka at once, on this thread
  run.queued.fetch_add(1, std::memory_order_relaxed);
  batch_bytes += work->bytes;
  batch.push_back(std::move(work));
  if (batch.size() >= kSubmitBatch) submit_batch();
  return true;
}

void ParallelConsumer::Impl::submit_batch() {
  if (batch.empty()) return;
  queue.submit(batch, !options.executor && runs_are_quick(), &spares);
  batch_bytes = 0;
  if (options.executor) pump_executor();
}

void ParallelConsumer::Impl::on_record(internal::RdPtr<rd_kafka_message_t> message) {
  PartitionRun* run = run_for(*message);
  if (run == nullptr) return;  // of a partition revoked meanwhile: its next owner fetches it
  ++fetched;
  if (fetched % kBackPressureEvery == 0 && !buffer_paused &&
      queue.gauges().bytes + batch_bytes > options.max_buffered_bytes) {
    relieve_back_pressure();
  }
  if (!run->held.empty()) {
    run->held.push_back(std::move(message));
    return;
  }
  if (!dispatch(*run, message)) {
    run->held.push_back(std::move(message));
    run->queued_when_held = run->queued.load(std::memory_order_relaxed);
    pause(*run);
  }
}

void ParallelConsumer::Impl::pause(PartitionRun& run) {
  if (run.paused) return;
  set_paused({&run}, true);
}

void ParallelConsumer::Impl::set_paused(const std::vector<PartitionRun*>& changed, bool paused) {
  if (changed.empty()) return;
  std::vector<TopicPartition> partitions;
  partitions.reserve(changed.size());
  for (PartitionRun* run : changed) {
    run->paused = paused;
    partitions.push_back(run->partition);
  }
  auto list = internal::to_partition_list(partitions);
  const rd_kafka_resp_err_t error =
      paused ? rd_kafka_pause_partitions(rk, list.get()) : rd_kafka_resume_partitions(rk, list.get());
  if (error != RD_KAFKA_RESP_ERR_NO_ERROR) {
    throw internal::kafka_error(error, paused ? "pausing partitions" : "resuming partitions");
  }
  if (paused) partition_pauses.fetch_add(changed.size(), std::memory_order_relaxed);
}

void ParallelConsumer::Impl::relieve_back_pressure() {
  // Held records first: they are the next of their partition, and their acks may have come.
  for (auto& [partition, run] : runs) {
    if (run->held.empty() || run->queued.load(std::memory_order_relaxed) > run->queued_when_held / 2)
      continue;
    while (!run->held.empty() && dispatch(*run, run->held.front())) run->held.pop_front();
    if (!run->held.empty()) run->queued_when_held = run->queued.load(std::memory_order_relaxed);
  }
  submit_batch();
  const std::size_t bytes = queue.gauges().bytes;
  std::vector<PartitionRun*> changed;
  if (!buffer_paused && bytes > options.max_buffered_bytes) {
    buffer_paused = true;
    for (auto& [partition, run] : runs) {
      if (!run->paused) changed.push_back(run.get());
    }
    set_paused(changed, true);
    return;
  }
  if (buffer_paused && bytes > options.max_buffered_bytes / 4 * 3) return;
  buffer_paused = false;
  for (auto& [partition, run] : runs) {
    if (run->paused && run->held.empty()) changed.push_back(run.get());
  }
  set_paused(changed, false);
}

void ParallelConsumer::Impl::on_partition_end(const TopicPartition& partition, std::int64_t end_offset) {
  const auto it = runs.find(partition);
  if (it == runs.end()) return;
  it->second->pending_end = end_offset;
}

void ParallelConsumer::Impl::record_partition_ends() {
  for (auto& [partition, run] : runs) {
    if (!run->pending_end || !run->held.empty() || run->queued.load(std::memory_order_acquire) != 0) continue;
    const std::int64_t end = *std::exchange(run->pending_end, std::nullopt);
    // Every record before the end is done: the position steps over transaction markers and
    // compacted offsets that no record reports, as KafkaConsumer does.
    try {
      internal::update_position(*consumer_impl, partition, end);
    } catch (const StateError& error) {
      // Below the floor: a reset moved the partition meanwhile; keep the reset.
      if (error.kind() != ErrorKind::InvalidArgument) throw;
    }
    if (options.consumer.on_partition_end) options.consumer.on_partition_end(partition, end);
  }
}

bool ParallelConsumer::Impl::any_paused() const {
  for (const auto& [partition, run] : runs) {
    if (run->paused) return true;
  }
  return false;
}

void ParallelConsumer::Impl::checkpoint_at_barrier() {
  submit_batch();
  queue.raise_barrier();
  try {
    while (!queue.wait_idle(
        {}, Clock::now() + std::max(options.drain_timeout, std::chrono::milliseconds(1000)))) {
      processor::internal::log(LogLevel::Warning, "parallel", "the checkpoint waits for ",
                               queue.gauges().running, " running records to finish");
    }
    internal::take_checkpoint(*consumer_impl);
  } catch (...) {
    queue.lower_barrier();
    throw;
  }
  queue.lower_barrier();
}

void ParallelConsumer::Impl::rethrow_pending_error() {
  std::exception_ptr error;
  {
    processor::detail::MutexLock lock(errors_mutex);
    error = std::exchange(pending_error, nullptr);
  }
  if (error) std::rethrow_exception(error);
}

std::size_t ParallelConsumer::poll() {
  Impl& impl = *impl_;
  if (impl.closed) throw StateError(ErrorKind::InvalidArgument, "poll on a closed ParallelConsumer");
  impl.relieve_back_pressure();
  const std::uint64_t fetched_before = impl.fetched;
  const auto timeout = impl.any_paused() ? std::min(impl.options.consumer.poll_timeout, kPausedPollTimeout)
                                         : impl.options.consumer.poll_timeout;
  int timeout_ms = internal::to_timeout_ms(timeout);
  for (std::size_t polled = 0; polled < kMaxBatch && !impl.stop_requested.load(std::memory_order_relaxed);
       ++polled) {
    if (!internal::poll_into_sink(*impl.consumer_impl, timeout_ms)) break;
    timeout_ms = 0;  // take what is already fetched, then return
  }
  impl.submit_batch();
  // Records an executor refused are offered again, also when nothing new came.
  if (impl.options.executor) impl.pump_executor();
  impl.relieve_back_pressure();
  impl.record_partition_ends();
  if (impl.checkpoint_requested.exchange(false, std::memory_order_relaxed)) impl.checkpoint_at_barrier();
  const auto fetched = static_cast<std::size_t>(impl.fetched - fetched_before);
  internal::finish_poll(*impl.consumer_impl, fetched);
  impl.rethrow_pending_error();
  return fetched;
}

void ParallelConsumer::run() {
  impl_->stop_requested = false;
  while (!impl_->stop_requested.load(std::memory_order_relaxed)) poll();
  impl_->stop_requested = false;
}

void ParallelConsumer::stop() noexcept { impl_->stop_requested = true; }

void ParallelConsumer::request_checkpoint() {
  if (!impl_->options.consumer.take_checkpoint) {
    throw StateError(ErrorKind::InvalidArgument,
                     "request_checkpoint() needs KafkaConsumerOptions::take_checkpoint, which is not set");
  }
  impl_->checkpoint_requested.store(true, std::memory_order_relaxed);
}

void ParallelConsumer::close() {
  Impl& impl = *impl_;
  if (impl.closed) return;
  impl.closed = true;
  impl.submit_batch();
  // Revokes every partition through the sink: running records get drain_timeout, then the
  // consumer commits and leaves the group.
  std::exception_ptr error;
  try {
    impl.consumer->close();
  } catch (...) {
    error = std::current_exception();
  }
  // Workers take no more records. A handler still running after drain_timeout is not waited
  // for here (its record is not committed, and this member has left the group): the destructor
  // joins it.
  impl.queue.close();
  if (const std::size_t running = impl.queue.gauges().running; running > 0) {
    processor::internal::log(
        LogLevel::Warning, "parallel", running,
        " handlers still run after close(); the ParallelConsumer's destructor waits for them");
  }
  if (error) std::rethrow_exception(error);
}

std::vector<TopicPartition> ParallelConsumer::assignment() const { return impl_->consumer->assignment(); }

ParallelConsumerStats ParallelConsumer::stats() const {
  const Impl& impl = *impl_;
  ParallelConsumerStats stats;
  stats.consumer = impl.consumer->stats();
  stats.processed = impl.processed.load(std::memory_order_relaxed);
  stats.failed_attempts = impl.failed_attempts.load(std::memory_order_relaxed);
  stats.dead_lettered = impl.dead_lettered.load(std::memory_order_relaxed);
  {
    processor::detail::MutexLock lock(impl.errors_mutex);
    stats.consumer.failed_records = impl.failed_records;
  }
  stats.skipped_after_restart = impl.skipped_after_restart.load(std::memory_order_relaxed);
  stats.abandoned_on_revoke = impl.abandoned_on_revoke.load(std::memory_order_relaxed);
  stats.late_acks_ignored = impl.late_acks_ignored.load(std::memory_order_relaxed);
  stats.partition_pauses = impl.partition_pauses.load(std::memory_order_relaxed);
  stats.executor_rejections = impl.executor_rejections.load(std::memory_order_relaxed);
  stats.metadata_warnings = impl.metadata_warnings.load(std::memory_order_relaxed);
  const internal::WorkQueueGauges gauges = impl.queue.gauges();
  stats.in_flight = gauges.running;
  stats.buffered_records = gauges.records;
  stats.buffered_bytes = gauges.bytes;
  stats.peak_buffered_bytes = gauges.peak_bytes;
  return stats;
}

}  // namespace processor::kafka
