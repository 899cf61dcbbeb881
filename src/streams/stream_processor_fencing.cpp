// StreamProcessor's fencing: ends a departed member's transaction that blocks a restoration, and
// tells a member that runs under this member's transactional.id.

#include <algorithm>
#include <optional>

#include "common/log_internal.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/producer/transactions.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "streams/stream_processor_impl.hpp"

namespace processor::streams {
namespace {

// How long a transaction may block a changelog before the processor fences the transactional.id
// that last committed the partition: far longer than a live member's commit takes to write its
// markers, far shorter than the transaction timeout the coordinator would otherwise wait for.
constexpr std::chrono::seconds kFenceAfter{2};

}  // namespace

void StreamProcessor::Impl::fence_departed_owner(std::int32_t partition) {
  if (!exactly_once() || !admin) {
    fenced_for.insert(partition);
    return;
  }
  // Whether the transactional.id that last committed the partition belongs to a live member: the
  // members' client ids are their transactional.ids when every member is a StreamProcessor of
  // this application that kept the default client.id. Then a departed member's transaction is
  // ended at once and a live member's never (it commits or aborts it itself); otherwise only
  // once it has blocked the restoration for kFenceAfter.
  const auto blocked_for = restorer->blocked(kFenceAfter);
  const bool waited = std::find(blocked_for.begin(), blocked_for.end(), partition) != blocked_for.end();
  if (!waited && Clock::now() < next_fence_look) return;
  next_fence_look = Clock::now() + std::chrono::milliseconds(500);
  std::optional<std::vector<kafka::GroupMember>> members;
  if (auto group = describe_group("fencing")) members = std::move(group->members);
  const std::string prefix = options.application_id + "-";
  const bool ids_known = members && std::all_of(members->begin(), members->end(), [&](const auto& member) {
                           return member.client_id.size() > prefix.size() &&
                                  member.client_id.compare(0, prefix.size(), prefix) == 0;
                         });
  if (!ids_known && !waited) return;  // looked at again on the next poll
  fenced_for.insert(partition);
  std::string owner;
  try {
    for (const auto& committed : admin->committed_offsets(options.application_id)) {
      if (committed.tp.topic == options.input_topic && committed.tp.partition == partition)
        owner = committed.metadata;
    }
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Warning, "streams", "reading who last committed ", options.input_topic,
                             ":", partition, " failed (", error.what(),
                             "): waiting for the transaction timeout instead");
    return;
  }
  // The metadata is read from Kafka: only an id of this application, not this member's, is fenced.
  const bool printable = std::all_of(owner.begin(), owner.end(), [](char c) { return c > ' ' && c < 127; });
  if (owner.size() <= prefix.size() || owner.size() > 249 || owner.compare(0, prefix.size(), prefix) != 0 ||
      !printable || owner == transactional_id) {
    processor::internal::log(LogLevel::Info, "streams", "a transaction still blocks the changelog of ",
                             input_key(partition),
                             " and no departed member of this application committed it last: waiting for "
                             "the coordinator to abort it (transaction timeout)");
    return;
  }
  if (ids_known && std::any_of(members->begin(), members->end(),
                               [&](const auto& member) { return member.client_id == owner; })) {
    processor::internal::log(LogLevel::Info, "streams", "a transaction of '", owner,
                             "', a live member, blocks the changelog of ", input_key(partition),
                             ": waiting for it to end");
    return;
  }
  processor::internal::log(
      LogLevel::Info, "streams", "a transaction blocks the changelog of ", input_key(partition),
      ids_known ? std::string() : " for " + std::to_string(kFenceAfter.count()) + " s", ": fencing '", owner,
      "' (its last committer, ", ids_known ? "no longer a member" : "a member that departed",
      ") so that the coordinator aborts it");
  try {
    kafka::KafkaProperties config = producer_config;
    config["transactional.id"] = owner;
    auto fencer = kafka::internal::create_client(RD_KAFKA_PRODUCER, config, {}, "the fencing producer");
    kafka::internal::init_transactions(fencer.get(), options.request_timeout, "fencing '" + owner + "'");
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Warning, "streams", "fencing '", owner, "' failed (", error.what(),
                             "): waiting for the transaction timeout instead");
    return;
  }
  count([](StreamProcessorStats& stats) { ++stats.departed_fenced; });
}

std::optional<std::string> StreamProcessor::Impl::member_sharing_transactional_id() const {
  if (!admin || !members_named_by_transactional_id) return std::nullopt;
  const auto group = describe_group("its transactional.id's other users");
  if (!group) return std::nullopt;
  const std::string self = kafka::internal::member_id(consumer.get());
  for (const auto& member : group->members) {
    if (member.client_id != transactional_id || member.member_id == self) continue;
    // This state directory's killed incarnation, listed until its session expires.
    if (!previous_member_id.empty() && member.member_id == previous_member_id) continue;
    return member.host;
  }
  return std::nullopt;
}

std::optional<kafka::GroupDescription> StreamProcessor::Impl::describe_group(std::string_view purpose) const {
  try {
    return admin->describe_groups({options.application_id}).at(0);
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Debug, "streams", "describing the group for ", purpose,
                             " failed: ", error.what());
    return std::nullopt;
  }
}

}  // namespace processor::streams
