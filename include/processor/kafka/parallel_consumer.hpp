#pragma once
// processor::kafka::ParallelConsumer: many records of one partition in flight on a pool of
// workers, in key, partition or no order, committed exactly where it is safe.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "processor/kafka/failure_policy.hpp"
#include "processor/kafka/kafka_client.hpp"
#include "processor/kafka/kafka_consumer.hpp"
#include "processor/kafka/offset_manager.hpp"

namespace processor::kafka {

// Which records of a partition may be processed at the same time.
enum class ProcessingOrder {
  Partition,  // one record at a time per partition, in offset order; partitions concurrently
  Key,        // records of one key (within a partition) in offset order; other keys concurrently
  Unordered,  // any record concurrently
};

// Returns "partition", "key" or "unordered".
const char* to_string(ProcessingOrder order) noexcept;

// A record whose handler failed every try, as handed to ParallelConsumerOptions::on_failure.
struct FailedRecord {
  const ConsumedRecord& record;
  std::exception_ptr error;  // the last try's exception
  int attempts = 0;
};

// Runs a task somewhere: a thread pool of the user's. It may throw to refuse the task (a full
// or closed pool): the record stays queued, and poll() reports the refusal.
using Executor = std::function<void(std::function<void()> task)>;

// Options of a ParallelConsumer.
struct ParallelConsumerOptions {
  // Topics, start positions, checkpoints and rebalance callbacks, as for KafkaConsumer.
  // take_checkpoint runs at a barrier: no handler is running (see ParallelConsumer).
  KafkaConsumerOptions consumer;

  // Most records being processed at once, over all partitions.
  // Default: 16. Raise it to the concurrency the downstream service takes; with a handler that
  // waits L per record, throughput is at most max_concurrency / L.
  int max_concurrency = 16;

  // Which records may run concurrently. Default: Key.
  ProcessingOrder ordering = ProcessingOrder::Key;

  // Most bytes of records fetched and not yet finished (waiting behind their key, waiting for a
  // worker, being retried or processed), counted as the memory they hold: each record's key and
  // value are copied out of librdkafka's fetch buffer, which is released at once. Beyond it
  // every partition pauses until processing frees a quarter of it, so memory is bounded by this
  // (plus librdkafka's own prefetch, queued.max.messages.kbytes), not by the input rate. It is
  // checked every 64 records fetched, and the records of the batch already taken from librdkafka
  // when the pause begins (at most 500) are still buffered: it may be passed by about 630
  // records (ParallelConsumerStats::peak_buffered_bytes shows by how much).
  // Default: 64 MiB. Lower it for large records and small hosts.
  std::size_t max_buffered_bytes = std::size_t{64} << 20;

  // On a revoke (not a loss), how long records of the revoked partitions that are being
  // processed may take to finish, so that they are committed. Those still running then are
  // abandoned: not committed (the next owner processes them again) and their late completion
  // changes nothing. Records not yet started are abandoned at once.
  // Default: 10 s. Keep it below max.poll.interval.ms. 0 abandons every running record.
  // With checkpoints in transactions (exactly-once), keep it above the slowest record: a handler
  // abandoned here may still write its results into the next transaction, and the next owner
  // then processes that record again.
  std::chrono::milliseconds drain_timeout{10'000};

  // A record whose handler throws is tried consumer.failure.retry.max_attempts times in all, with
  // back-off (retries of a record hold back only the records of its own key (Key), partition
  // (Partition) or nothing (Unordered)); then, on the worker:
  // - on_failure, when set: the user's own dead-letter queue. When it returns the record counts
  //   as done (acknowledged); when it throws, the record is tried again after max_backoff.
  // - else consumer.failure.action: Fail (the default): poll() rethrows the record's exception,
  //   which is logged naming the record, and the record is tried again every max_backoff, never
  //   committed past; Skip: logged, counted (stats().consumer.failed_records) and acknowledged;
  //   DeadLetter: written to consumer.failure.dead_letter_topic (key, value and the kDeadLetter*
  //   headers: the record's own headers are not kept past the fetch) by an idempotent producer of
  //   the client's connection settings, and acknowledged once Kafka acknowledged the dead letter
  //   (a dead letter Kafka refuses is logged and tried again after max_backoff).
  // Nothing is skipped unless this says so.
  std::function<void(const FailedRecord&)> on_failure;

  // Where handlers run. Default: none: max_concurrency threads owned by the consumer. When set,
  // each record is one task, and at most max_concurrency are submitted at once.
  Executor executor;
};

// Counters and gauges of a ParallelConsumer.
struct ParallelConsumerStats {
  ConsumerStats consumer;                   // the underlying consumer's (records = records fetched)
  std::uint64_t processed = 0;              // handler calls that returned (retries that succeeded too)
  std::uint64_t failed_attempts = 0;        // handler calls that threw
  std::uint64_t dead_lettered = 0;          // records handed to on_failure that it accepted
  std::uint64_t skipped_after_restart = 0;  // records a previous owner (or tenure) acknowledged
  std::uint64_t abandoned_on_revoke = 0;    // records dropped by a revoke or loss, not committed
  std::uint64_t late_acks_ignored = 0;      // completions after their partition was revoked
  std::uint64_t partition_pauses = 0;       // partitions paused for back-pressure
  std::uint64_t executor_rejections = 0;    // tasks the executor refused
  std::uint64_t metadata_warnings = 0;      // restart metadata ignored (another tool's, or garbage)
  std::size_t in_flight = 0;                // records being processed now
  std::size_t buffered_records = 0;         // records fetched and not finished (in_flight too)
  std::size_t buffered_bytes = 0;
  std::size_t peak_buffered_bytes = 0;
};

// ParallelConsumer is a KafkaConsumer whose records are processed by many workers at once: the
// handler runs on max_concurrency threads (or the user's executor), under the chosen
// ProcessingOrder. Each record is tracked when fetched and acknowledged when its handler
// returns (OffsetManager::track_record / ack), so the committed offset is the lowest record not
// finished, and the records finished above it travel in the commit metadata.
//
// - Restart and rebalance: a partition assigned here skips the records its previous owner
//   acknowledged above the committed offset (OffsetManager::acked_after_restart); metadata
//   written by another tool, or garbage, is ignored with a warning (every record from the
//   committed offset is processed again). On a revoke, records of the revoked partitions that
//   are running get drain_timeout to finish and be committed; the rest are abandoned. On a
//   loss nothing is committed. A completion after its partition left is never committed.
//   A partition that comes back to this member (lost when the coordinator fenced it, or
//   revoked while its commit failed) starting where its last tenure here left it uncommitted
//   skips what this member acknowledged in that tenure, committed or not: it is not processed
//   twice by the same member. Not with take_checkpoint or OffsetCommitStrategy::on_checkpoint(),
//   where an acknowledged record is done only with its checkpoint.
// - Back-pressure: a partition whose tracking is full (PartitionAcksOptions: outstanding
//   records, window) pauses until acknowledgements free room; every partition pauses while the
//   buffered bytes exceed max_buffered_bytes. Pausing uses librdkafka's pause/resume.
// - Checkpoints: take_checkpoint (KafkaConsumerOptions) runs on the polling thread at a
//   barrier: dispatch stops and the running handlers finish first, so state snapshotted there
//   holds exactly the records acknowledged; OffsetManager::checkpoint() stores the
//   acknowledged sets with the positions.
// - Failures: see RetryPolicy and on_failure.
// - Quick handlers: while the handler's runs (timed on a sample) take less than waking a
//   worker costs, one worker runs the records of a batch one after another (one more per 128
//   records waiting) and the others sleep; the others are woken as soon as the series falls
//   behind (fewer than 100 records in 10 ms while records wait) or one record runs 10 ms.
//   Handlers never run on the polling thread.
//
// poll(), run() and close() belong to one thread; stop() and request_checkpoint() are safe from
// any thread, handlers included. The handler is called from several threads at once (never for
// two records that the ordering keeps apart). Neither copyable nor movable.
class ParallelConsumer {
 public:
  using RecordHandler = std::function<void(const ConsumedRecord&)>;

  // Subscribes `client` to options.consumer.topics; workers start at once.
  // Throws StateError(InvalidArgument) naming the value for max_concurrency < 1 (or above
  // 100'000), a negative drain_timeout, max_attempts < 1, a negative or reversed backoff,
  // max_buffered_bytes 0, an empty handler, and for KafkaConsumer's own errors.
  ParallelConsumer(std::shared_ptr<KafkaClient> client, OffsetManager& manager,
                   ParallelConsumerOptions options, RecordHandler handler);
  // The one-call start (see ConsumerSetup): the client, offset store, broker metadata and
  // OffsetManager that `setup` describes, owned by the consumer; setup.topics replace
  // options.consumer.topics. Throws as KafkaConsumer::connect and the constructor.
  static std::unique_ptr<ParallelConsumer> connect(ConsumerSetup setup, ParallelConsumerOptions options,
                                                   RecordHandler handler);
  // Closes (see close()) and logs, never throws; then waits for handlers still running.
  ~ParallelConsumer();

  ParallelConsumer(const ParallelConsumer&) = delete;
  ParallelConsumer& operator=(const ParallelConsumer&) = delete;

  // Polls once: serves rebalances, fetches up to one batch of records and hands them to the
  // workers (waiting at most options.consumer.poll_timeout for the first), resumes partitions
  // that have room, runs a requested checkpoint, drives the commit strategy. Returns how many
  // records were fetched. Rethrows a handler's exception (see on_failure), an executor's
  // refusal as StateError(Unavailable), and KafkaConsumer::poll()'s errors.
  std::size_t poll();

  // Polls until stop() is called.
  void run();
  // Makes the current poll() and run() return. Safe from any thread.
  void stop() noexcept;

  // Asks for a checkpoint at the next barrier (see the class comment). Safe from any thread.
  // Throws StateError(InvalidArgument) when options.consumer.take_checkpoint is not set.
  void request_checkpoint();

  // Stops dispatching, lets running records finish within drain_timeout, commits, leaves the
  // group and stops the workers taking records; returns within drain_timeout plus the commit's
  // and the leave's own timeouts. A handler still running then is abandoned (not committed)
  // and joined by the destructor. Idempotent.
  void close();

  std::vector<TopicPartition> assignment() const;
  ParallelConsumerStats stats() const;
  // The manager this consumer feeds (commit(), lag(), checkpoints).
  OffsetManager& manager() noexcept;

  // Internal: defined in src/, public so that the library's own code can name it.
  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace processor::kafka
