// StreamProcessor's transactions: begin, commit (output, changelog and offsets together), abort.

#include <cstdlib>
#include <cstring>
#include <optional>
#include <thread>

#include "common/log_internal.hpp"
#include "kafka/group/commit_offsets.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/group/start_offsets.hpp"
#include "kafka/producer/produce.hpp"
#include "kafka/producer/transactions.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "processor/kafka/topic_partition.hpp"
#include "streams/changelog_format.hpp"
#include "streams/required_permissions.hpp"
#include "streams/stream_processor_impl.hpp"

namespace processor::streams {
using kafka::internal::AbortableTransactionError;

void StreamProcessor::Impl::drop_open_transaction(bool rewind) {
  for (auto& [partition, task] : tasks) {
    for (auto& store : task.stores) store->discard();
  }
  for (auto& positions : delivered) std::fill(positions.begin(), positions.end(), -1);
  delivery_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  delivery_error_topic.clear();
  transaction_open = false;
  transaction_failed = false;
  transaction_records = 0;
  transaction_failed_records.clear();
  if (rewind) rewind_pending = true;
}

void StreamProcessor::Impl::start_producer() {
  create_producer();
  init_producer();
}

void StreamProcessor::Impl::create_producer() {
  kafka::internal::ClientCallbacks callbacks;
  callbacks.opaque = this;
  callbacks.delivery = on_delivery;
  producer = kafka::internal::create_client(RD_KAFKA_PRODUCER, producer_config, callbacks,
                                            "the stream processor's producer");
}

void StreamProcessor::Impl::init_producer() {
  if (exactly_once()) {
    // Fences an older incarnation with this transactional.id and aborts its open transaction.
    kafka::internal::init_transactions(producer.get(), options.request_timeout,
                                       "initialising transactions as '" + transactional_id + "'");
  }
}

namespace {

bool fenced(int code) noexcept {
  return code == RD_KAFKA_RESP_ERR__FENCED || code == RD_KAFKA_RESP_ERR_PRODUCER_FENCED ||
         code == RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH;
}

// A fatal error that a new producer under the same transactional.id would meet again: a refusal
// of the principal, a setting or version the cluster refuses. The processor fails on those. Any
// other fatal error is the producer's own state (a sequence out of step with the broker, a
// producer id the broker forgot, a transaction the coordinator ended or timed out: INVALID_TXN_STATE,
// librdkafka #5423) or a fenced epoch (the coordinator bumps it when it times a transaction out,
// e.g. while its node was down): Kafka Streams answers those as a task migration, with a new
// producer, and so does the processor.
bool new_producer_fails_too(int code) noexcept {
  switch (code) {
    case RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_CLUSTER_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED:
    case RD_KAFKA_RESP_ERR_SASL_AUTHENTICATION_FAILED:
    case RD_KAFKA_RESP_ERR__AUTHENTICATION:
    case RD_KAFKA_RESP_ERR_INVALID_TRANSACTION_TIMEOUT:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_VERSION:
    case RD_KAFKA_RESP_ERR_UNSUPPORTED_FOR_MESSAGE_FORMAT:
    case RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE:
    case RD_KAFKA_RESP_ERR_INVALID_CONFIG:
      return true;
    default:
      return false;
  }
}

StateError assignment_lost_error() {
  return kafka::internal::kafka_error(RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST,
                                      "committing the offsets: this member lost its assignment");
}

// How many producers are replaced in a row, without a commit in between, before the processor
// fails instead: a cause that a new producer does not clear after all would otherwise repeat for
// ever, each time aborting and processing the same records again.
constexpr int kReplacementsWithoutCommit = 5;

}  // namespace

bool StreamProcessor::Impl::replace_producer(const StateError& failure) {
  if (!exactly_once()) return false;
  const auto fatal = kafka::internal::fatal_error(producer.get(), "the producer failed for good");
  // Without a fatal error, an abort failed (timed out while the coordinator moved): a new
  // producer's initialisation ends that transaction instead.
  const StateError& cause = fatal ? *fatal : failure;
  const int code = cause.kafka_error_code().value_or(0);
  if (fatal && new_producer_fails_too(code)) return false;
  if (replacements_without_commit >= kReplacementsWithoutCommit) {
    throw StateError(cause.kind(),
                     std::string(cause.what()) + " (the producer was replaced " +
                         std::to_string(replacements_without_commit) + " times without a commit in between)",
                     code, false);
  }
  ++replacements_without_commit;
  if (fenced(code)) {
    if (const auto host = member_sharing_transactional_id()) {
      throw StateError(ErrorKind::Kafka,
                       std::string(cause.what()) + ": another member of group '" + options.application_id +
                           "' (host " + *host + ") runs as transactional.id '" + transactional_id +
                           "' too; give each instance its own state_dir or instance_id",
                       code, false);
    }
  }
  processor::internal::log(LogLevel::Warning, "streams", cause.what(), ": replacing the producer as '",
                           transactional_id, "' and processing the open transaction's records again");
  producer.reset();  // its transaction dies with it; the new one's initialisation aborts it
  drop_open_transaction();
  count([](StreamProcessorStats& stats) {
    ++stats.aborts;
    ++stats.producers_replaced;
  });
  start_producer_or_wait();
  return true;
}

void StreamProcessor::Impl::replace_producer_or_break(const StateError& failure) {
  try {
    if (replace_producer(failure)) return;
    throw failure;
  } catch (const StateError&) {
    broken = std::current_exception();
    throw;
  }
}

bool StreamProcessor::Impl::start_producer_or_wait() {
  try {
    start_producer();
    return true;
  } catch (const StateError& error) {
    producer.reset();
    if (!error.retriable()) throw;
    processor::internal::log(LogLevel::Warning, "streams", error.what(),
                             ": no producer yet, trying again at the next poll");
    return false;
  }
}

bool StreamProcessor::Impl::producer_failed_for_good() const {
  return producer && kafka::internal::has_fatal_error(producer.get());
}

void StreamProcessor::Impl::begin() {
  if (exactly_once()) kafka::internal::begin_transaction(producer.get());
  transaction_failed = false;
  transaction_open = true;
  transaction_started = Clock::now();
  transaction_records = 0;
}

bool StreamProcessor::Impl::commit_due(Clock::time_point now) const noexcept {
  if (!transaction_open) return false;
  if (options.commit_records > 0 && transaction_records >= options.commit_records) return true;
  return now - transaction_started >= options.commit_interval;
}

void StreamProcessor::Impl::on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void* opaque) {
  auto* impl = static_cast<StreamProcessor::Impl*>(opaque);
  if (message->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
    if (impl->delivery_error == RD_KAFKA_RESP_ERR_NO_ERROR) {
      impl->delivery_error = message->err;
      impl->delivery_error_topic = rd_kafka_topic_name(message->rkt);
    }
    return;
  }
  // A changelog record carries its store's index + 1; output records carry nothing.
  const auto store = reinterpret_cast<std::uintptr_t>(message->_private);
  if (store == 0) return;
  auto& positions = impl->delivered[store - 1];
  if (message->partition >= 0 && static_cast<std::size_t>(message->partition) < positions.size()) {
    auto& position = positions[static_cast<std::size_t>(message->partition)];
    position = std::max(position, message->offset + 1);
  }
}

void StreamProcessor::Impl::produce(const std::string& topic, std::int32_t partition, std::string_view key,
                                    const char* value, std::size_t value_size, void* opaque) {
  try {
    kafka::internal::produce_copy(producer.get(), topic, partition, key, value, value_size, opaque);
  } catch (const StateError&) {
    // In a transaction, a refusal without a fatal error means the transaction is in its abortable
    // state: aborting clears it.
    if (exactly_once() && !producer_failed_for_good()) transaction_failed = true;
    throw;
  }
}

void StreamProcessor::Impl::send(std::string_view topic, std::string_view key, std::string_view value,
                                 std::int32_t partition) {
  if (topic != validated_topic) {
    kafka::validate_topic(topic);
    validated_topic.assign(topic);
  }
  if (!transaction_open) begin();
  if (transaction_topics.find(validated_topic) == transaction_topics.end())
    transaction_topics.insert(validated_topic);
  produce(validated_topic, partition, key, value.data(), value.size(), nullptr);
}

bool StreamProcessor::Impl::commit() {
  if (!transaction_open) return true;
  const auto started = Clock::now();
  std::uint64_t changelog_records = 0;
  auto offsets = kafka::internal::make_partition_list(tasks.size());
  try {
    std::string framed;
    for (auto& [partition, task] : tasks) {
      for (std::size_t s = 0; s < task.stores.size(); ++s) {
        for (const auto& [key, value] : task.stores[s]->dirty()) {
          if (value) {
            framed.clear();
            internal::append_changelog_value(framed, *value);
            produce(changelogs[s], partition, key, framed.data(), framed.size(),
                    reinterpret_cast<void*>(s + 1));
          } else {
            produce(changelogs[s], partition, key, nullptr, 0, reinterpret_cast<void*>(s + 1));
          }
          ++changelog_records;
        }
      }
      if (task.active && task.next_offset >= 0) {
        rd_kafka_topic_partition_t* entry =
            rd_kafka_topic_partition_list_add(offsets.get(), options.input_topic.c_str(), partition);
        entry->offset = task.next_offset;
        if (exactly_once()) {
          // Who committed it last: the member that takes the partition over after this one
          // departs fences this id when a transaction of ours still blocks the changelog.
          // librdkafka frees the metadata with the list.
          entry->metadata = std::malloc(transactional_id.size());
          if (entry->metadata != nullptr) {
            std::memcpy(entry->metadata, transactional_id.data(), transactional_id.size());
            entry->metadata_size = transactional_id.size();
          }
        }
        if (task.next_leader_epoch >= 0)
          rd_kafka_topic_partition_set_leader_epoch(entry, task.next_leader_epoch);
      }
    }
    // A member that lost its assignment commits nothing: its records are the next owner's (and a
    // static member's offsets would be fenced for good).
    if (offsets->cnt > 0 && kafka::internal::assignment_lost(consumer.get())) {
      throw AbortableTransactionError{assignment_lost_error()};
    }
    if (exactly_once()) {
      if (offsets->cnt > 0) {
        kafka::internal::send_offsets_to_transaction(producer.get(), consumer.get(), offsets.get(),
                                                     options.request_timeout);
      }
      kafka::internal::commit_transaction(producer.get(), options.request_timeout);
    } else {
      const auto flushed =
          rd_kafka_flush(producer.get(), kafka::internal::to_timeout_ms(options.request_timeout));
      if (flushed != RD_KAFKA_RESP_ERR_NO_ERROR) {
        throw AbortableTransactionError{
            kafka::internal::kafka_error(flushed, "flushing the output and changelog records")};
      }
      if (delivery_error != RD_KAFKA_RESP_ERR_NO_ERROR) {
        throw AbortableTransactionError{
            kafka::internal::kafka_error(delivery_error, "delivering the output and changelog records")};
      }
      if (offsets->cnt > 0) {
        // Retried as long as a start's reads (a minute by default, as Kafka's commitSync under
        // default.api.timeout.ms): finding a moved coordinator again can take seconds, and each
        // failed commit here means processing the records again.
        try {
          kafka::internal::commit_offsets(
              consumer.get(), offsets.get(), "committing the offsets", options.request_timeout,
              kafka::internal::start_retry_policy(options.request_timeout),
              [&] {
                if (kafka::internal::assignment_lost(consumer.get())) throw assignment_lost_error();
              },
              unanswered_commits);
        } catch (StateError& failure) {
          throw AbortableTransactionError{std::move(failure)};
        }
      }
    }
    rd_kafka_poll(producer.get(), 0);  // the last delivery reports, for the changelog positions
  } catch (AbortableTransactionError& failure) {
    processor::internal::log(LogLevel::Warning, "streams", failure.error.what(),
                             ": aborting the transaction");
    const RefusedTransaction refused = refused_transaction(std::make_exception_ptr(failure.error));
    abort(failure.error.what());
    throw_if_unauthorized(failure.error);
    find_refused_record(refused);
    return false;
  } catch (const StateError& error) {
    if (transaction_failed) {  // a changelog record refused: the transaction's failure, not the processor's
      processor::internal::log(LogLevel::Warning, "streams", error.what(), ": aborting the transaction");
      const RefusedTransaction refused = refused_transaction(std::current_exception());
      abort(error.what());
      throw_if_unauthorized(error);
      find_refused_record(refused);
      return false;
    }
    replace_producer_or_break(error);
    return false;
  }

  // Kafka holds the transaction: now the local state may take it, with each store partition's
  // changelog position, atomically.
  try {
    for (auto& [partition, task] : tasks) {
      for (std::size_t s = 0; s < task.stores.size(); ++s) {
        auto& store = *task.stores[s];
        if (store.dirty().empty()) continue;
        auto& position = delivered[s][static_cast<std::size_t>(partition)];
        // Without a delivery report the old position stays: replaying from there re-applies
        // these writes, which is harmless (a changelog replay ends at each key's last value).
        store.apply_committed(position >= 0 ? position : store.position().value_or(0));
        position = -1;
      }
      if (task.next_offset >= 0) task.rewind_offset = task.next_offset;
    }
  } catch (const StateError&) {
    // The local state is now behind the changelog: only a restore can repair it.
    broken = std::current_exception();
    throw;
  }
  transaction_open = false;
  transaction_topics.clear();
  delivery_error = RD_KAFKA_RESP_ERR_NO_ERROR;
  replacements_without_commit = 0;
  forget_committed_failures();
  const std::uint64_t records = transaction_records;
  transaction_records = 0;
  count([&](StreamProcessorStats& stats) {
    ++stats.commits;
    stats.changelog_records += changelog_records;
  });
  processor::internal::log(
      LogLevel::Debug, "streams", "committed ", records, " records, ", changelog_records,
      " changelog records in ",
      std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - started).count(), " us");
  return true;
}

void StreamProcessor::Impl::throw_if_unauthorized(const StateError& failure) {
  const auto code = failure.kafka_error_code();
  if (!producer) return;  // replaced, the new one not started yet: asked again at the next refusal
  if (code != RD_KAFKA_RESP_ERR_TOPIC_AUTHORIZATION_FAILED &&
      code != RD_KAFKA_RESP_ERR_GROUP_AUTHORIZATION_FAILED) {
    return;
  }
  // Only a missing ACL that Kafka's authorized operations confirm: processing the records again
  // would fail again, for good. A refusal the ACLs do not explain (a broker's transient state, a
  // cluster that cannot say) is answered as before: abort and process again.
  std::vector<std::string> written(written_topics.begin(), written_topics.end());
  written.insert(written.end(), changelogs.begin(), changelogs.end());
  const std::string refused =
      internal::refused_by_acls(producer.get(), static_cast<rd_kafka_resp_err_t>(*code),
                                options.application_id, written, options.request_timeout);
  if (refused.empty()) return;
  try {
    throw kafka::internal::kafka_error(static_cast<rd_kafka_resp_err_t>(*code),
                                       "the principal may not " + refused + " (" + failure.what() + ")");
  } catch (const StateError&) {
    broken = std::current_exception();
    throw;
  }
}

void StreamProcessor::Impl::abort(const std::string& reason, bool rewind) {
  if (!transaction_open) return;
  if (exactly_once()) {
    try {
      kafka::internal::abort_transaction(producer.get(), options.request_timeout);
    } catch (const StateError& error) {
      replace_producer_or_break(error);
      return;
    }
  }
  rd_kafka_poll(producer.get(), 0);
  written_topics.swap(transaction_topics);
  transaction_topics.clear();
  drop_open_transaction(rewind);
  count([](StreamProcessorStats& stats) { ++stats.aborts; });
  processor::internal::log(LogLevel::Warning, "streams", "transaction aborted (", reason,
                           "): ", rewind ? "its records are processed again" : "it held that record only");
}

}  // namespace processor::streams
