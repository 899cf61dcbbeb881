#include "processor/kafka/kafka_offset_store.hpp"

#include <algorithm>
#include <tuple>

#include "common/log_internal.hpp"
#include "kafka/client/kafka_client_impl.hpp"
#include "kafka/group/commit_offsets.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/rdkafka/admin_request.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/retry.hpp"

namespace processor::kafka {

using internal::PartitionListPtr;
using internal::RdPtr;

namespace {

internal::RetryPolicy retry_policy(const KafkaOffsetStoreOptions& options) {
  return internal::RetryPolicy{options.retry_deadline, options.retry_backoff, options.retry_backoff_max};
}

void commit_result_callback(rd_kafka_t*, rd_kafka_resp_err_t error, rd_kafka_topic_partition_list_t* offsets,
                            void* opaque) {
  std::unique_ptr<CommitCallback> done(static_cast<CommitCallback*>(opaque));
  std::string partition;
  const rd_kafka_resp_err_t first = internal::first_error(error, offsets, &partition);
  try {
    (*done)(internal::failure_of(first, "asynchronous offset commit", partition));
  } catch (...) {
    processor::internal::log(LogLevel::Error, "offset_store",
                             "an asynchronous commit callback threw; ignored");
  }
}

}  // namespace

KafkaOffsetStore::KafkaOffsetStore(std::shared_ptr<KafkaClient> client, KafkaOffsetStoreOptions options)
    : client_(std::move(client)), options_(options) {
  if (!client_)
    throw StateError(ErrorKind::InvalidArgument, "KafkaOffsetStore needs a KafkaClient, got null");
}

namespace {

void require_group(const KafkaClient& client, std::string_view group) {
  if (group != client.group_id()) {
    throw StateError(ErrorKind::InvalidArgument, "this KafkaOffsetStore commits for group '" +
                                                     client.group_id() + "', not '" + std::string(group) +
                                                     "'");
  }
}

bool by_topic_partition(const TopicPartition& a, const TopicPartition& b) {
  return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
}

std::vector<TopicPartition> sorted_assignment(const KafkaClient& client) {
  auto assigned = client.assignment();
  std::sort(assigned.begin(), assigned.end(), by_topic_partition);
  return assigned;
}

void refuse_unowned(const KafkaClient& client, const std::vector<TopicPartition>& owned,
                    std::span<const PartitionOffset> offsets) {
  for (const auto& [tp, info] : offsets) {
    if (!std::binary_search(owned.begin(), owned.end(), tp, by_topic_partition)) {
      throw internal::kafka_error(
          RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST,
          "refusing to commit offset " + std::to_string(info.offset) + " for " + tp.to_key() +
              ": the partition is not assigned to this member of group '" + client.group_id() + "'");
    }
  }
}

// A member commits only the partitions it owns, and nothing once its assignment is lost; a
// client that never subscribed is not a member and commits as a standalone (the broker accepts
// that only for a group without members). Ownership is cached between rebalances.
void require_ownership(const KafkaClient& client, KafkaClient::Impl& impl,
                       std::span<const PartitionOffset> offsets) {
  if (!impl.subscribed) return;
  if (internal::assignment_lost(impl.rk())) {
    throw internal::kafka_error(RD_KAFKA_RESP_ERR__ASSIGNMENT_LOST,
                                "refusing to commit " + std::to_string(offsets.size()) +
                                    " offsets: this member of group '" + client.group_id() +
                                    "' lost its assignment");
  }
  if (impl.rebalances_running.load() > 0) {  // e.g. a commit on revoke: ask librdkafka
    refuse_unowned(client, sorted_assignment(client), offsets);
    return;
  }
  processor::detail::MutexLock lock(impl.ownership_mutex);
  if (impl.ownership_stale.exchange(false)) {
    try {
      impl.owned = sorted_assignment(client);
    } catch (...) {
      impl.ownership_stale.store(true);
      throw;
    }
  }
  refuse_unowned(client, impl.owned, offsets);
}

}  // namespace

void KafkaOffsetStore::store_offset(std::string_view group, const TopicPartition& tp,
                                    const OffsetInfo& info) {
  const PartitionOffset entry{tp, info};
  store_offsets(group, std::span<const PartitionOffset>(&entry, 1));
}

void KafkaOffsetStore::store_offsets(std::string_view group, std::span<const PartitionOffset> offsets) {
  require_group(*client_, group);
  for (const auto& [tp, info] : offsets) validate_offset_entry(tp, info);
  if (offsets.empty()) return;
  KafkaClient::Impl& impl = client_->impl();
  require_ownership(*client_, impl, offsets);

  const std::string what =
      "committing " + std::to_string(offsets.size()) + " offsets of group '" + impl.group + "'";
  const auto list = internal::to_partition_list(offsets);
  internal::commit_offsets(
      impl.rk(), list.get(), what, options_.request_timeout, retry_policy(options_),
      [&] { require_ownership(*client_, impl, offsets); }, impl.unanswered_commits);
}

namespace {

// One OffsetCommit under way, answered on a queue of its own.
class PendingKafkaCommit final : public PendingStore {
 public:
  PendingKafkaCommit(std::shared_ptr<KafkaClient> client, internal::UnansweredCommits& unanswered,
                     rd_kafka_t* rk, std::string what, std::chrono::milliseconds request_timeout)
      : client_(std::move(client)),
        unanswered_(unanswered),
        queue_(rd_kafka_queue_new(rk)),
        what_(std::move(what)),
        deadline_(std::chrono::steady_clock::now() + request_timeout) {}

  // Given up on unanswered: librdkafka may still send it, so the client's next commit waits for it.
  ~PendingKafkaCommit() override {
    if (!event_ && queue_) unanswered_.add(std::move(queue_));
  }
  PendingKafkaCommit(const PendingKafkaCommit&) = delete;
  PendingKafkaCommit& operator=(const PendingKafkaCommit&) = delete;

  rd_kafka_queue_t* queue() const noexcept { return queue_.get(); }

  bool wait(std::chrono::milliseconds timeout) override {
    if (event_ || timed_out_) return true;
    const auto left = std::max(
        std::chrono::milliseconds::zero(),
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - std::chrono::steady_clock::now()));
    event_.reset(
        rd_kafka_queue_poll(queue_.get(), internal::to_timeout_ms(std::min(std::max(timeout, {}), left))));
    timed_out_ = !event_ && std::chrono::steady_clock::now() >= deadline_;
    return event_ || timed_out_;
  }

  void get() override {
    if (!event_) throw internal::kafka_error(RD_KAFKA_RESP_ERR__TIMED_OUT, what_);
    std::string partition;
    const rd_kafka_resp_err_t error = internal::first_error(
        rd_kafka_event_error(event_.get()), rd_kafka_event_topic_partition_list(event_.get()), &partition);
    if (auto failure = internal::failure_of(error, what_, partition)) throw *failure;
  }

 private:
  std::shared_ptr<KafkaClient> client_;      // outlives the queue
  internal::UnansweredCommits& unanswered_;  // the client's
  RdPtr<rd_kafka_queue_t> queue_;
  RdPtr<rd_kafka_event_t> event_;
  bool timed_out_ = false;
  std::string what_;
  std::chrono::steady_clock::time_point deadline_;
};

}  // namespace

std::unique_ptr<PendingStore> KafkaOffsetStore::begin_store_offsets(
    std::string_view group, std::span<const PartitionOffset> offsets) {
  require_group(*client_, group);
  for (const auto& [tp, info] : offsets) validate_offset_entry(tp, info);
  KafkaClient::Impl& impl = client_->impl();
  if (offsets.empty()) return OffsetStore::begin_store_offsets(group, offsets);
  require_ownership(*client_, impl, offsets);
  const std::string what =
      "committing " + std::to_string(offsets.size()) + " offsets of group '" + impl.group + "'";
  // Not sent while an earlier commit is unanswered (the automatic commit waits for nothing).
  if (!impl.unanswered_commits.settle(std::chrono::steady_clock::now()))
    throw internal::unanswered_commit_error(what);
  auto pending = std::make_unique<PendingKafkaCommit>(client_, impl.unanswered_commits, impl.rk(), what,
                                                      options_.request_timeout);
  auto list = internal::to_partition_list(offsets);
  const rd_kafka_resp_err_t sent =
      rd_kafka_commit_queue(impl.rk(), list.get(), pending->queue(), nullptr, nullptr);
  if (sent != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(sent, "sending an offset commit");
  return pending;
}

void KafkaOffsetStore::store_offsets_async(std::string_view group, std::span<const PartitionOffset> offsets,
                                           CommitCallback done) {
  require_group(*client_, group);
  for (const auto& [tp, info] : offsets) validate_offset_entry(tp, info);
  KafkaClient::Impl& impl = client_->impl();
  require_ownership(*client_, impl, offsets);
  auto list = internal::to_partition_list(offsets);
  auto callback = std::make_unique<CommitCallback>(std::move(done));
  RdPtr<rd_kafka_queue_t> main_queue(rd_kafka_queue_get_main(impl.rk()));
  const rd_kafka_resp_err_t sent =
      rd_kafka_commit_queue(impl.rk(), list.get(), main_queue.get(), commit_result_callback, callback.get());
  if (sent != RD_KAFKA_RESP_ERR_NO_ERROR) throw internal::kafka_error(sent, "sending an asynchronous commit");
  callback.release();  // owned by commit_result_callback from now on
}

std::unordered_map<TopicPartition, OffsetInfo> KafkaOffsetStore::committed(
    const std::vector<TopicPartition>& partitions) {
  for (const auto& tp : partitions) validate_topic_partition(tp);
  std::unordered_map<TopicPartition, OffsetInfo> out;
  if (partitions.empty()) return out;
  KafkaClient::Impl& impl = client_->impl();
  PartitionListPtr list;
  internal::with_retries(retry_policy(options_), [&] {
    list = internal::to_partition_list(partitions);
    const rd_kafka_resp_err_t error =
        rd_kafka_committed(impl.rk(), list.get(), internal::to_timeout_ms(options_.request_timeout));
    std::string partition;
    return internal::failure_of(internal::first_error(error, list.get(), &partition),
                                "reading committed offsets of group '" + impl.group + "'", partition);
  });
  for (int i = 0; i < list->cnt; ++i) {
    if (auto info = internal::offset_info_of(list->elems[i])) {
      out.emplace(TopicPartition(list->elems[i].topic, list->elems[i].partition), std::move(*info));
    }
  }
  return out;
}

std::optional<OffsetInfo> KafkaOffsetStore::get_offset(std::string_view group, const TopicPartition& tp) {
  require_group(*client_, group);
  auto found = committed({tp});
  if (found.empty()) return std::nullopt;
  return found.begin()->second;
}

std::unordered_map<TopicPartition, OffsetInfo> KafkaOffsetStore::get_all_offsets(std::string_view group) {
  require_group(*client_, group);
  KafkaClient::Impl& impl = client_->impl();
  std::unordered_map<TopicPartition, OffsetInfo> out;
  const std::string what = "listing the offsets of group '" + impl.group + "'";
  internal::with_retries(retry_policy(options_), [&]() -> std::optional<StateError> {
    out.clear();
    std::string partition;
    const rd_kafka_resp_err_t error = internal::list_group_offsets(
        impl.rk(), impl.group, options_.request_timeout,
        [&](const rd_kafka_topic_partition_t& entry) {
          if (auto info = internal::offset_info_of(entry)) {
            out.emplace(TopicPartition(entry.topic, entry.partition), std::move(*info));
          }
        },
        &partition);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) return internal::failure_of(error, what, partition);
    return std::nullopt;
  });
  return out;
}

namespace {

void delete_group_offsets(KafkaClient::Impl& impl, const KafkaOffsetStoreOptions& options,
                          const std::vector<TopicPartition>& partitions) {
  if (partitions.empty()) return;
  const std::string what = "deleting offsets of group '" + impl.group + "'";
  internal::with_retries(retry_policy(options), [&]() -> std::optional<StateError> {
    auto list = internal::to_partition_list(partitions);
    RdPtr<rd_kafka_event_t> event;
    const rd_kafka_resp_err_t error = internal::admin_request(
        impl.rk(), RD_KAFKA_ADMIN_OP_DELETECONSUMERGROUPOFFSETS, options.request_timeout,
        [&](rd_kafka_AdminOptions_t* admin, rd_kafka_queue_t* queue) {
          RdPtr<rd_kafka_DeleteConsumerGroupOffsets_t> request(
              rd_kafka_DeleteConsumerGroupOffsets_new(impl.group.c_str(), list.get()));
          rd_kafka_DeleteConsumerGroupOffsets_t* requests[] = {request.get()};
          rd_kafka_DeleteConsumerGroupOffsets(impl.rk(), requests, 1, admin, queue);
        },
        &event);
    if (error != RD_KAFKA_RESP_ERR_NO_ERROR) return internal::failure_of(error, what);
    const auto* result = rd_kafka_event_DeleteConsumerGroupOffsets_result(event.get());
    std::size_t count = 0;
    const rd_kafka_group_result_t** groups =
        rd_kafka_DeleteConsumerGroupOffsets_result_groups(result, &count);
    std::string partition;
    return internal::failure_of(internal::first_group_error(groups, count, &partition), what, partition);
  });
}

}  // namespace

void KafkaOffsetStore::delete_offset(std::string_view group, const TopicPartition& tp) {
  require_group(*client_, group);
  validate_topic_partition(tp);
  delete_group_offsets(client_->impl(), options_, {tp});
}

void KafkaOffsetStore::clear_offsets(std::string_view group) {
  std::vector<TopicPartition> partitions;
  for (const auto& [tp, info] : get_all_offsets(group)) partitions.push_back(tp);
  delete_group_offsets(client_->impl(), options_, partitions);
}

}  // namespace processor::kafka
