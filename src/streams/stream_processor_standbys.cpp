// StreamProcessor's standby replicas: warm copies of partitions other members own, placed from
// the group's description and kept by following their changelogs.

#include <set>

#include "common/log_internal.hpp"
#include "kafka/group/rebalance.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "kafka/rdkafka/partition_list.hpp"
#include "streams/standby_placement.hpp"
#include "streams/stream_processor_impl.hpp"

namespace processor::streams {
namespace {

// How often the standby placement is read again from the group's description (and after each
// rebalance).
constexpr std::chrono::seconds kPlacementInterval{2};

}  // namespace

void StreamProcessor::Impl::drop_standby(std::int32_t partition) {
  standby_restorer->remove(partition);  // loads what it read first
  standbys.erase(partition);
}

void StreamProcessor::Impl::maintain_standbys() {
  if (!standby_restorer) return;
  if (Clock::now() >= next_placement) {
    next_placement = Clock::now() + kPlacementInterval;
    place_standbys();
  }
  if (!standby_restorer->idle()) {
    // A standby is a cache: its failure is logged and costs the warm copy, never the processing.
    try {
      standby_restorer->poll(std::chrono::milliseconds(0));
    } catch (const StateError& error) {
      processor::internal::log(LogLevel::Warning, "streams", "standby replicas failed (", error.what(),
                               "): dropped, placed again in ", kPlacementInterval.count(), " s");
      while (!standbys.empty()) drop_standby(standbys.begin()->first);
    }
  }
  const std::uint64_t held = standbys.size();
  const std::uint64_t records = standby_restorer->counters().records;
  count([&](StreamProcessorStats& stats) {
    stats.standby_partitions = held;
    stats.standby_records = records;
  });
}

void StreamProcessor::Impl::place_standbys() {
  const auto described = describe_group("standby placement");
  if (!described || described->state != "Stable") return;  // placed again once the group settles
  const kafka::GroupDescription& group = *described;
  const std::string self = kafka::internal::member_id(consumer.get());
  std::vector<internal::MemberPartitions> members;
  std::set<std::int32_t> assigned_here;  // by the group, whether or not the assignment was served yet
  for (const auto& member : group.members) {
    internal::MemberPartitions& entry = members.emplace_back();
    entry.member_id = member.member_id;
    for (const auto& tp : member.assignment) {
      if (tp.topic != options.input_topic) continue;
      entry.partitions.push_back(tp.partition);
      if (member.member_id == self) assigned_here.insert(tp.partition);
    }
  }
  std::set<std::int32_t> wanted = internal::standby_partitions(members, self, options.num_standby_replicas);
  for (const auto& [partition, task] : tasks) wanted.erase(partition);
  for (auto it = standbys.begin(); it != standbys.end();) {
    const std::int32_t partition = it->first;
    ++it;
    // A standby of a partition the group has just given this member stays until the assignment
    // is served: it is then promoted (a failover's warm copy), not dropped a moment before.
    if (wanted.count(partition) == 0 && assigned_here.count(partition) == 0) {
      drop_standby(partition);
      processor::internal::log(LogLevel::Info, "streams", "standby of ", input_key(partition),
                               " dropped (placed elsewhere now)");
    }
  }
  for (const std::int32_t partition : wanted) {
    if (standbys.count(partition) != 0 || partition >= partitions) continue;
    try {
      auto& stores = standbys[partition] = open_stores(partition);
      for (std::size_t i = 0; i < stores.size(); ++i) standby_restorer->add(*stores[i], changelogs[i]);
    } catch (const StateError& error) {
      processor::internal::log(LogLevel::Warning, "streams", "no standby of ", input_key(partition), " (",
                               error.what(), ")");
      drop_standby(partition);
    }
  }
}

}  // namespace processor::streams
