#include "kafka/group/static_member.hpp"

#include <algorithm>
#include <cctype>
#include <thread>

#include "common/log_internal.hpp"
#include "kafka/rdkafka/client_factory.hpp"
#include "processor/error.hpp"
#include "processor/kafka/group_admin.hpp"

namespace processor::kafka::internal {

namespace {

std::string value_of(const KafkaProperties& properties, const char* name) {
  const auto it = properties.find(name);
  return it == properties.end() ? std::string() : it->second;
}

constexpr std::chrono::milliseconds kLookEvery{250};
constexpr std::chrono::seconds kLogEvery{5};

}  // namespace

KafkaProperties admin_properties_of(const KafkaProperties& consumer) {
  KafkaProperties config = consumer;
  for (const char* group_only : {"group.id", "group.protocol", "group.remote.assignor", "group.instance.id",
                                 "partition.assignment.strategy", "session.timeout.ms",
                                 "heartbeat.interval.ms", "max.poll.interval.ms"}) {
    config.erase(group_only);
  }
  return config;
}

void await_static_member_release(const KafkaProperties& consumer, std::chrono::milliseconds limit) {
  const std::string instance = value_of(consumer, "group.instance.id");
  std::string protocol = value_of(consumer, "group.protocol");
  std::transform(protocol.begin(), protocol.end(), protocol.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  const std::string group = value_of(consumer, "group.id");
  if (instance.empty() || protocol != "consumer" || group.empty()) return;
  using Clock = std::chrono::steady_clock;
  const auto started = Clock::now();
  auto next_log = started;
  try {
    auto admin = GroupAdmin::create(admin_properties_of(consumer), std::chrono::seconds(5));
    for (;;) {
      const GroupDescription described = admin->describe_groups({group}).at(0);
      const bool held =
          std::any_of(described.members.begin(), described.members.end(),
                      [&](const GroupMember& member) { return member.group_instance_id == instance; });
      if (!held) {
        if (next_log != started) {
          processor::internal::log(
              LogLevel::Info, "consumer", "static member '", instance, "' of group '", group,
              "' released after ",
              std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - started).count(),
              " ms: joining");
        }
        return;
      }
      const auto now = Clock::now();
      if (now - started >= limit) {
        processor::internal::log(
            LogLevel::Warning, "consumer", "group '", group, "' still lists a member as '", instance,
            "' after ", std::chrono::duration_cast<std::chrono::seconds>(limit).count(),
            " s: joining anyway (another instance with this group.instance.id is refused)");
        return;
      }
      if (now >= next_log) {
        processor::internal::log(
            LogLevel::Info, "consumer", "group '", group, "' still lists a member as '", instance,
            "' (a previous incarnation of this static member, until the coordinator expires "
            "its session): waiting to join, ",
            std::chrono::duration_cast<std::chrono::seconds>(now - started).count(), " s so far");
        next_log = now + kLogEvery;
      }
      std::this_thread::sleep_for(kLookEvery);
    }
  } catch (const StateError& error) {
    processor::internal::log(LogLevel::Debug, "consumer", "describing group '", group,
                             "' before a static member joins failed (", error.what(), "): joining");
  }
}

}  // namespace processor::kafka::internal
