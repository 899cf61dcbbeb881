// StreamProcessor's poll loop: records fetched, handed to the record function inside the open
// transaction, and the commit when it is due.

#include <algorithm>

#include "common/log_internal.hpp"
#include "kafka/client/out_of_range_policy.hpp"
#include "kafka/group/consume_errors.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "streams/stream_processor_impl.hpp"

namespace processor::streams {

using kafka::internal::RdPtr;
namespace {

// How many records one poll() processes at most before it checks the commit and returns.
constexpr std::size_t kMaxRecordsPerPoll = 10'000;

}  // namespace

PartitionStore& StreamProcessor::Impl::store(std::string_view name) {
  for (std::size_t i = 0; i < options.stores.size(); ++i) {
    if (options.stores[i] == name) return *current->stores[i];
  }
  throw StateError(ErrorKind::InvalidArgument, "no store named '" + std::string(name) + "'");
}

void StreamProcessor::Impl::process(const rd_kafka_message_t& message) {
  const auto it = tasks.find(message.partition);
  // A record fetched before its partition was paused or rewound: it comes again after the seek.
  if (it == tasks.end() || !it->second.active) return;
  Task& task = it->second;
  if (task.next_offset >= 0 && message.offset < task.next_offset) return;
  if (!transaction_open) begin();
  if ((!failing.empty() || !isolate_until.empty()) && start_alone(message, task)) return;
  record_alone = transaction_records == 0;
  kafka::ConsumedRecord record;
  record.topic = options.input_topic;
  record.partition = message.partition;
  record.offset = message.offset;
  rd_kafka_timestamp_type_t type;
  record.timestamp_ms = rd_kafka_message_timestamp(&message, &type);
  record.key = std::string_view(static_cast<const char*>(message.key), message.key_len);
  record.value = std::string_view(static_cast<const char*>(message.payload), message.len);
  current = &task;
  function(record, *this);
  current = nullptr;
  if (task.rewind_offset < 0) task.rewind_offset = message.offset;  // the logical start, now known
  task.next_offset = message.offset + 1;
  task.next_leader_epoch = rd_kafka_message_leader_epoch(&message);
  ++transaction_records;
}

void StreamProcessor::Impl::on_consume_error(const rd_kafka_message_t& message) {
  if (kafka::internal::classify_consume_error(consumer.get(), message, options.application_id,
                                              {options.input_topic},
                                              "streams") != kafka::internal::ConsumeEvent::OutOfRange) {
    return;
  }
  const auto it = tasks.find(message.partition);
  if (it == tasks.end()) return;
  Task& task = it->second;
  if (task.active && message.offset == RD_KAFKA_OFFSET_INVALID) {
    // The answer to librdkafka's own lookup of the committed offset of a partition assigned
    // without one (a fresh group's), which came only after this processor positioned the partition
    // where it decided: it says nothing of that position, and the fetch goes on from there.
    processor::internal::log(LogLevel::Debug, "streams", input_key(message.partition),
                             ": librdkafka's start lookup answered after the partition was positioned (",
                             rd_kafka_message_errstr(&message), "): nothing to do");
    return;
  }
  task.fetch_stopped = true;
  if (!task.active) return;  // positioned when it is activated
  // The log moved under the partition (retention, a truncation): it goes on from its rewind
  // offset (the last commit) when that is still in the log, else where the policy says. The
  // open transaction holds records fetched before: it is aborted and every partition rewinds.
  const std::optional<std::int64_t> divergence =
      message.err == RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET
          ? kafka::internal::truncation_divergence(rd_kafka_message_errstr(&message))
          : std::nullopt;
  try {
    const PositionDecision decided =
        decide_position(message.partition, task.rewind_offset,
                        divergence && *divergence < task.rewind_offset ? divergence : std::nullopt);
    if (decided.moves()) count_move(message.partition, decided);
    task.rewind_offset = decided.decision.start;
  } catch (const StateError& error) {
    // The log range cannot be read now (a leader moving): back to the last commit, and decided
    // again when that has no place in the log either.
    if (!error.retriable()) throw;
    processor::internal::log(LogLevel::Warning, "streams", error.what());
  }
  processor::internal::log(LogLevel::Warning, "streams", input_key(message.partition), " has no record at ",
                           message.offset, " (", rd_kafka_message_errstr(&message), "): going on from ",
                           task.rewind_offset);
  if (transaction_open) abort("the log of " + input_key(message.partition) + " moved");
  rewind_pending = true;
}

bool StreamProcessor::Impl::start_producer_again() {
  try {
    if (start_producer_or_wait()) return true;
  } catch (const StateError&) {
    broken = std::current_exception();
    throw;
  }
  // The member stays in its group meanwhile: its rebalances are served. The records fetched are
  // fetched again after the rewind that the replacement asked for: none is kept, so that a full
  // buffer never stops librdkafka from being heard. Its error events are not dropped: an
  // out-of-range one says that librdkafka stopped that partition's fetcher.
  buffer->clear();
  buffer->fill(0);
  while (RdPtr<rd_kafka_message_t> message = buffer->pop()) {
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) on_consume_error(*message);
  }
  return false;
}

RdPtr<rd_kafka_message_t> StreamProcessor::Impl::next_message(int timeout_ms) {
  // A batch handed out slower than its rate foresaw: librdkafka's callbacks (a rebalance) and
  // max.poll.interval.ms are served now, not once the batch is handed out.
  if (!buffer->empty() && buffer->due()) buffer->fill(0);
  if (buffer->empty()) {
    // What is queued first; then, with nothing queued, a wait.
    buffer->fill(0);
    if (buffer->empty() && timeout_ms > 0) buffer->fill(timeout_ms);
  }
  return buffer->pop();
}

std::size_t StreamProcessor::Impl::poll() {
  if (broken) std::rethrow_exception(broken);
  if (closed) throw StateError(ErrorKind::InvalidArgument, "the StreamProcessor is closed");
  auto rethrow_callback_error = [&] {
    if (callback_error) std::rethrow_exception(std::exchange(callback_error, nullptr));
  };
  if (exactly_once() && !producer && !start_producer_again()) {
    rethrow_callback_error();
    return 0;
  }
  restore_some();
  maintain_standbys();
  const bool waiting = activate_restored();
  std::size_t processed = 0;
  int timeout_ms =
      restorer->idle() && !transaction_open
          ? kafka::internal::to_timeout_ms(waiting ? std::chrono::milliseconds(10) : options.poll_timeout)
          : 0;
  if (transaction_open) {
    // Wake up for the commit when it is due.
    const auto due = transaction_started + options.commit_interval - Clock::now();
    timeout_ms =
        std::clamp<int>(static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(due).count()),
                        0, kafka::internal::to_timeout_ms(options.poll_timeout));
  }
  while (processed < kMaxRecordsPerPoll && !stop_requested.load(std::memory_order_relaxed)) {
    // A producer replaced in this loop that could not start yet: the next poll() tries again.
    if (exactly_once() && !producer) break;
    RdPtr<rd_kafka_message_t> message = retry_message ? std::move(retry_message) : next_message(timeout_ms);
    timeout_ms = 0;
    rethrow_callback_error();
    if (rewind_pending) {
      // `message` was fetched before the seek; an error event still counts (an out-of-range one
      // says that librdkafka stopped that partition's fetcher).
      if (message && message->err != RD_KAFKA_RESP_ERR_NO_ERROR) on_consume_error(*message);
      rewind();
      continue;
    }
    if (!message) {
      // A cluster that refuses this member (a wrong password, an untrusted certificate): nothing
      // arrives, librdkafka retries for ever, and only the user can fix it.
      kafka::internal::throw_if_refused(consumer.get());
      if (producer) kafka::internal::throw_if_refused(producer.get());
      break;
    }
    if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      on_consume_error(*message);
      continue;
    }
    try {
      process(*message);
    } catch (...) {
      current = nullptr;
      if (broken) {  // the failure policy's Fail, or a failure the processor cannot go on from
        count([&](StreamProcessorStats& stats) { stats.records += processed; });  // those of this poll so far
        throw;
      }
      fail_record(message, std::current_exception());
      continue;
    }
    ++processed;
    if (std::exchange(commit_after_record, false) || commit_due(Clock::now())) commit();
  }
  if (commit_due(Clock::now())) commit();
  count([&](StreamProcessorStats& stats) { stats.records += processed; });
  return processed;
}

}  // namespace processor::streams
