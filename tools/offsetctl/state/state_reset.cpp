// The write verbs of `offsetctl state`: reset and import. Both plan every new offset first
// (reading the directory, the file, the broker), print the plan as kafka-consumer-groups
// --reset-offsets does, and only under --execute write it: one StateBackendOffsetStore::
// store_offsets(), one atomic RocksDB batch, so that nothing is ever half-written.

#include <algorithm>
#include <charconv>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "command.hpp"
#include "offsets_csv.hpp"
#include "processor/error.hpp"
#include "reset/reset_plan.hpp"
#include "state/state_broker.hpp"
#include "state/state_verbs.hpp"

namespace processor::offsetctl {
namespace {

using Plan =
    std::map<std::pair<std::string, std::int32_t>, std::int64_t>;  // (topic, partition) -> new offset
using Current = std::map<std::pair<std::string, std::int32_t>, std::int64_t>;

[[noreturn]] void invalid(const std::string& why) { throw StateError(ErrorKind::InvalidArgument, why); }

// "T" (every partition the group has offsets for) or "T:P,P,...".
struct TopicScope {
  std::string topic;
  std::vector<std::int32_t> partitions;  // empty: the group's stored partitions of the topic
};

TopicScope parse_topic_scope(const std::string& text) {
  TopicScope scope;
  const auto colon = text.find(':');
  scope.topic = text.substr(0, colon);
  kafka::validate_topic(scope.topic);
  if (colon == std::string::npos) return scope;
  std::string_view rest = std::string_view(text).substr(colon + 1);
  while (true) {
    const auto comma = rest.find(',');
    const std::string_view number = rest.substr(0, comma);
    std::int32_t partition = -1;
    const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), partition);
    if (number.empty() || error != std::errc() || end != number.data() + number.size() || partition < 0) {
      invalid("--topic '" + text + "': partition '" + std::string(number) +
              "' is not a non-negative integer");
    }
    scope.partitions.push_back(partition);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return scope;
}

std::string read_file(const std::string& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) throw StateError(ErrorKind::NotFound, "cannot read offsets CSV '" + file + "'");
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// The CSV's rows for `group` (every row of a three-column file), each partition once.
Plan plan_from_csv(const std::string& file, const std::string& group) {
  Plan plan;
  for (const auto& row : parse_offsets_csv(read_file(file))) {
    if (!row.group.empty() && row.group != group) continue;
    if (!plan.emplace(std::make_pair(row.topic, row.partition), row.offset).second) {
      invalid("offsets CSV '" + file + "' lists " + kafka::partition_key(row.topic, row.partition) +
              " twice");
    }
  }
  if (plan.empty()) invalid("offsets CSV '" + file + "' has no offsets of group '" + group + "'");
  return plan;
}

bool in_scope(const std::string& topic, std::int32_t partition, const ResetRequest& request,
              const std::vector<TopicScope>& scopes) {
  if (request.all_topics) return true;
  return std::any_of(scopes.begin(), scopes.end(), [&](const TopicScope& scope) {
    return scope.topic == topic &&
           (scope.partitions.empty() ||
            std::find(scope.partitions.begin(), scope.partitions.end(), partition) != scope.partitions.end());
  });
}

// The partitions a reset applies to: --all-topics is every stored partition of the group.
std::vector<std::pair<std::string, std::int32_t>> target_partitions(const ResetRequest& request,
                                                                    const std::vector<TopicScope>& scopes,
                                                                    const Current& current,
                                                                    const std::string& dir) {
  std::vector<std::pair<std::string, std::int32_t>> targets;
  if (request.all_topics) {
    for (const auto& [tp, offset] : current) targets.push_back(tp);
    if (targets.empty())
      invalid("group '" + request.group + "' has no offsets in '" + dir + "' (--all-topics)");
    return targets;
  }
  for (const auto& scope : scopes) {
    if (!scope.partitions.empty()) {
      for (const auto partition : scope.partitions) targets.emplace_back(scope.topic, partition);
      continue;
    }
    const auto before = targets.size();
    for (const auto& [tp, offset] : current) {
      if (tp.first == scope.topic) targets.push_back(tp);
    }
    if (targets.size() == before) {
      throw StateError(ErrorKind::NotFound,
                       "group '" + request.group + "' has no offsets of topic '" + scope.topic + "' in '" +
                           dir + "'; name the partitions: --topic " + scope.topic + ":0,1,...");
    }
  }
  return targets;
}

std::int64_t shifted(std::int64_t offset, std::int64_t shift) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  if (shift > 0 && offset > kMax - shift) return kMax;
  return std::max<std::int64_t>(0, offset + shift);
}

Plan plan_reset(const ResetRequest& request, const Current& current, StateBroker* broker,
                const std::string& dir) {
  std::vector<TopicScope> scopes;
  for (const auto& topic : request.topics) scopes.push_back(parse_topic_scope(topic));
  if (!request.from_file.empty()) {
    Plan plan;
    for (const auto& [tp, offset] : plan_from_csv(request.from_file, request.group)) {
      if (in_scope(tp.first, tp.second, request, scopes)) plan.emplace(tp, offset);
    }
    if (plan.empty()) invalid("offsets CSV '" + request.from_file + "' has no offsets in the --topic scope");
    return plan;
  }
  Plan plan;
  for (const auto& tp : target_partitions(request, scopes, current, dir)) {
    const auto stored = current.find(tp);
    const std::string name = kafka::partition_key(tp.first, tp.second);
    std::int64_t offset = 0;
    if (request.to_offset) {
      offset = *request.to_offset;
    } else if (request.shift_by) {
      if (stored == current.end()) {
        throw StateError(ErrorKind::NotFound, "--shift-by: group '" + request.group + "' has no offset of " +
                                                  name + " in '" + dir + "' to shift");
      }
      offset = shifted(stored->second, *request.shift_by);
    } else {
      const auto range = broker->log_range(kafka::TopicPartition(tp.first, tp.second));
      if (!range) throw StateError(ErrorKind::NotFound, "the cluster does not know partition " + name);
      offset = request.to_earliest ? range->log_start_offset : range->high_watermark;
    }
    plan.emplace(tp, offset);
  }
  return plan;
}

// With a broker, every new offset is brought into the partition's log range, as
// kafka-consumer-groups does: a committed offset outside it would be reset by the consumer.
void clamp_to_log(Plan& plan, StateBroker& broker) {
  for (auto& [tp, offset] : plan) {
    const auto range = broker.log_range(kafka::TopicPartition(tp.first, tp.second));
    if (!range) continue;
    offset =
        std::clamp(offset, range->log_start_offset, std::max(range->log_start_offset, range->high_watermark));
  }
}

// Prints the plan and, under --execute, writes it in one batch.
int apply_plan(StateDirectory& directory, const std::string& group, const Plan& plan, WriteMode mode,
               std::ostream& out, std::ostream& err) {
  if (mode == WriteMode::Default) {
    err << "WARN: No action will be performed as the --execute option is missing. Add --execute to write "
           "these "
           "offsets to '"
        << directory.path().string() << "', or --dry-run to keep this behaviour without the warning.\n";
  }
  // The table of offsetctl groups reset, which is kafka-consumer-groups --reset-offsets' own.
  GroupPlan rows{group, {}};
  std::vector<kafka::PartitionOffset> offsets;
  for (const auto& [tp, offset] : plan) {
    rows.offsets.push_back({kafka::TopicPartition(tp.first, tp.second), offset});
    offsets.emplace_back(kafka::TopicPartition(tp.first, tp.second), kafka::OffsetInfo(offset));
  }
  if (mode == WriteMode::Execute) directory.store_offsets(group, offsets);
  out << format_reset_table({rows});
  return kExitOk;
}

StateDirectory::Access access_for(WriteMode mode) {
  return mode == WriteMode::Execute ? StateDirectory::Access::ReadWrite : StateDirectory::Access::ReadOnly;
}

}  // namespace

int run_state_reset(const StateTarget& target, const ResetRequest& request, std::ostream& out,
                    std::ostream& err) {
  const int specs = request.to_offset.has_value() + request.shift_by.has_value() + request.to_earliest +
                    request.to_latest + !request.from_file.empty();
  if (specs != 1) {
    invalid("reset needs exactly one of --to-offset, --shift-by, --to-earliest, --to-latest, --from-file");
  }
  if (request.all_topics == !request.topics.empty()) invalid("reset needs either --topic or --all-topics");
  if (request.to_offset && *request.to_offset < 0) {
    invalid("--to-offset " + std::to_string(*request.to_offset) + " is negative");
  }
  if ((request.to_earliest || request.to_latest) && request.bootstrap_servers.empty()) {
    invalid(std::string(request.to_earliest ? "--to-earliest" : "--to-latest") +
            " needs --bootstrap-server: only the cluster knows the partitions' log range");
  }
  // Opened first: a directory locked by a running application fails before anything is planned.
  StateDirectory directory(target.dir, access_for(request.mode), target.layout);
  Current current;
  for (const auto& stored : directory.offsets(request.group)) {
    current.emplace(std::make_pair(stored.partition.topic, stored.partition.partition), stored.info.offset);
  }
  std::optional<StateBroker> broker;
  if (!request.bootstrap_servers.empty())
    broker.emplace(request.bootstrap_servers, request.command_config, request.group);
  Plan plan = plan_reset(request, current, broker ? &*broker : nullptr, target.dir);
  if (broker) clamp_to_log(plan, *broker);
  return apply_plan(directory, request.group, plan, request.mode, out, err);
}

int run_state_import(const StateTarget& target, const std::string& group, const std::string& file,
                     WriteMode mode, std::ostream& out, std::ostream& err) {
  kafka::validate_group(group);
  StateDirectory directory(target.dir, access_for(mode), target.layout);
  const Plan plan = plan_from_csv(file, group);
  return apply_plan(directory, group, plan, mode, out, err);
}

}  // namespace processor::offsetctl
