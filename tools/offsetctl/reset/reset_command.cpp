// `offsetctl groups reset`: kafka-consumer-groups --reset-offsets (ConsumerGroupCommand and
// GroupOffsetsResetter of Kafka 4.4), step by step in Kafka's order so that what it prints, and
// when it refuses, are Kafka's.

#include "reset/reset_command.hpp"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iterator>
#include <memory>
#include <unordered_map>
#include <unordered_set>

#include "cluster_config.hpp"
#include "command.hpp"
#include "offsets_csv.hpp"
#include "processor/error.hpp"
#include "processor/kafka/group_admin.hpp"
#include "reset/command_failure.hpp"
#include "reset/java_map_order.hpp"
#include "reset/progress_line.hpp"
#include "reset/reset_plan.hpp"
#include "reset/reset_time_args.hpp"

namespace processor::offsetctl {
namespace {

using kafka::GroupAdmin;
using kafka::TopicPartition;

// Above this many partitions an --execute shows a progress line and commits in batches.
constexpr std::size_t kProgressThreshold = 1000;
constexpr std::size_t kCommitBatch = 1000;

[[noreturn]] void usage_error(const std::string& message) {
  throw StateError(ErrorKind::InvalidArgument, message);
}

// The reset specification the options name; parses the time arguments and the CSV file.
// A time argument Kafka cannot parse is a failure of the command (Kafka's "Error: Executing ...").
struct ParsedSpec {
  ResetScenario scenario = ResetScenario::ToEarliest;
  std::int64_t value = 0;
  std::vector<CsvOffset> file_rows;
  bool file_has_groups = false;
};

ParsedSpec parse_spec(const ResetOptions& options) {
  ParsedSpec spec;
  if (options.to_earliest) spec.scenario = ResetScenario::ToEarliest;
  if (options.to_latest) spec.scenario = ResetScenario::ToLatest;
  if (options.to_current) spec.scenario = ResetScenario::ToCurrent;
  if (options.to_offset) {
    spec.scenario = ResetScenario::ToOffset;
    spec.value = *options.to_offset;
  }
  if (options.shift_by) {
    spec.scenario = ResetScenario::ShiftBy;
    spec.value = *options.shift_by;
  }
  if (options.to_datetime) {
    spec.scenario = ResetScenario::ToDatetime;
    try {
      spec.value = parse_reset_datetime(*options.to_datetime);
    } catch (const StateError& e) {
      throw command_failure("java.text.ParseException: " + std::string(e.what()));
    }
  }
  if (options.by_duration) {
    spec.scenario = ResetScenario::ByDuration;
    std::int64_t duration_ms = 0;
    try {
      duration_ms = parse_reset_duration_ms(*options.by_duration);
    } catch (const StateError& e) {
      throw command_failure(e.what());
    }
    const auto now = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::system_clock::now().time_since_epoch());
    spec.value = now.count() - duration_ms;
  }
  if (options.from_file) {
    spec.scenario = ResetScenario::FromFile;
    std::ifstream file(*options.from_file, std::ios::binary);
    if (!file) throw command_failure("java.nio.file.NoSuchFileException: " + *options.from_file);
    const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
    spec.file_rows = parse_offsets_csv(text);
    spec.file_has_groups = !spec.file_rows.empty() && !spec.file_rows.front().group.empty();
    if (!spec.file_has_groups && options.groups.size() != 1) {
      usage_error("the three-column CSV of --from-file (topic,partition,offset) needs exactly one --group");
    }
  }
  return spec;
}

// The partitions of the --topic arguments: those named with partitions first, then every
// partition of the topics named alone (as Kafka's parseTopicPartitionsToReset). Kafka then checks
// that each exists.
std::vector<TopicPartition> topic_partitions(GroupAdmin& admin, const std::vector<std::string>& arguments,
                                             std::ostream& err) {
  std::vector<TopicPartition> named;
  std::vector<std::string> whole_topics;
  for (const auto& argument : arguments) {
    TopicArgument parsed = parse_topic_argument(argument);
    if (!parsed.partitions) {
      whole_topics.push_back(parsed.topic);
      continue;
    }
    for (const std::int32_t partition : *parsed.partitions) named.emplace_back(parsed.topic, partition);
  }
  if (!whole_topics.empty()) {
    // Kafka appends these by iterating describeTopics' map of topics, each topic's partitions in
    // order; where two partitions share a bucket of the reset's HashMap, that order decides.
    std::vector<TopicPartition> described = partitions_or_kafka_error(admin, whole_topics, &err);
    const std::vector<std::string> topic_order = in_java_sized_hash_map_order(whole_topics);
    const auto rank = [&](const TopicPartition& tp) {
      return std::find(topic_order.begin(), topic_order.end(), tp.topic) - topic_order.begin();
    };
    std::stable_sort(described.begin(), described.end(),
                     [&](const TopicPartition& a, const TopicPartition& b) { return rank(a) < rank(b); });
    for (auto& tp : described) named.push_back(std::move(tp));
  }
  return named;
}

// Kafka's checkAllTopicPartitionsValid: every partition exists.
void require_partitions_exist(GroupAdmin& admin, const std::vector<TopicPartition>& partitions,
                              std::ostream& err) {
  std::vector<std::string> topics;
  std::unordered_set<std::string> seen;
  for (const auto& tp : partitions) {
    if (seen.insert(tp.topic).second) topics.push_back(tp.topic);
  }
  const auto existing = partitions_or_kafka_error(admin, topics, &err);
  const std::unordered_set<TopicPartition> exists(existing.begin(), existing.end());
  std::string missing;
  for (const auto& tp : partitions) {
    if (exists.count(tp) == 0) missing += (missing.empty() ? "" : ",") + kafka_partition_name(tp);
  }
  if (!missing.empty()) throw command_failure("The partitions \"" + missing + "\" do not exist");
}

OffsetsByPartition listed(GroupAdmin& admin, const std::vector<TopicPartition>& partitions,
                          kafka::OffsetSpec spec) {
  OffsetsByPartition out;
  for (const auto& entry : admin.list_offsets(partitions, spec)) out[entry.tp] = entry.offset.value_or(-1);
  return out;
}

PartitionFacts fetch_facts(GroupAdmin& admin, const std::string& group, const ResetSpec& spec,
                           const std::vector<TopicPartition>& partitions) {
  const FactsNeeded needed = facts_needed(spec.scenario);
  PartitionFacts facts;
  if (partitions.empty()) return facts;
  if (needed.committed) {
    for (const auto& committed : admin.committed_offsets(group))
      facts.committed[committed.tp] = committed.offset;
  }
  if (needed.earliest) facts.earliest = listed(admin, partitions, kafka::OffsetSpec::earliest());
  if (needed.latest) facts.latest = listed(admin, partitions, kafka::OffsetSpec::latest());
  if (needed.by_timestamp) facts.by_timestamp = listed(admin, partitions, kafka::OffsetSpec::at(spec.value));
  return facts;
}

void commit(GroupAdmin& admin, const std::string& group, const std::vector<PlannedOffset>& offsets,
            std::ostream& err) {
  std::vector<std::pair<TopicPartition, std::int64_t>> batch;
  std::unique_ptr<ProgressLine> progress;
  if (offsets.size() > kProgressThreshold)
    progress = std::make_unique<ProgressLine>(err, "reset " + group, offsets.size());
  const std::size_t batch_size = progress ? kCommitBatch : offsets.size();
  for (std::size_t start = 0; start < offsets.size(); start += batch_size) {
    batch.clear();
    for (std::size_t i = start; i < std::min(offsets.size(), start + batch_size); ++i) {
      batch.emplace_back(offsets[i].tp, offsets[i].offset);
    }
    for (const auto& result : admin.alter_offsets(group, batch)) {
      if (!result.error.empty()) {
        throw command_failure("committing the offset of " + kafka_partition_name(result.tp) +
                              " failed: " + result.error);
      }
    }
    if (progress) progress->update(start + batch.size());
  }
}

}  // namespace

int run_reset(const ResetOptions& options, std::ostream& out, std::ostream& err) {
  return run_kafka_style(out, err, [&]() -> int {
    validate_reset_options(options, err);
    const ParsedSpec parsed = parse_spec(options);
    const kafka::KafkaProperties properties =
        cluster_properties(options.bootstrap_server, options.command_config);
    const std::unique_ptr<GroupAdmin> admin = GroupAdmin::create(properties, options.timeout);

    std::vector<std::string> groups;
    std::unordered_set<std::string> seen_groups;
    const auto add_group = [&](const std::string& group) {
      if (seen_groups.insert(group).second) groups.push_back(group);
    };
    if (options.all_groups) {
      for (const auto& listing : admin->list_groups()) add_group(listing.group);
    } else {
      for (const auto& group : options.groups) add_group(group);
    }
    std::unordered_map<std::string, std::string> state_of;
    for (const auto& description : admin->describe_groups(groups))
      state_of[description.group] = description.state;

    // The scope, the same for every group unless --all-topics.
    std::optional<std::vector<TopicPartition>> scoped;
    if (!options.all_topics && !options.topics.empty())
      scoped = topic_partitions(*admin, options.topics, err);

    std::vector<GroupPlan> plans;
    bool refused = false;
    for (const auto& group : in_java_hash_map_order(groups)) {
      const std::string& state = state_of[group];
      if (state != "Empty" && state != "Dead") {
        out << "\nError: Assignments can only be reset if the group '" << group
            << "' is inactive, but the current state is " << state << ".\n";
        plans.push_back({group, {}});
        refused = true;
        continue;
      }
      ResetSpec spec{parsed.scenario, parsed.value, {}};
      std::vector<TopicPartition> partitions;
      if (options.all_topics) {
        for (const auto& committed : admin->committed_offsets(group)) partitions.push_back(committed.tp);
      } else if (scoped) {
        partitions = *scoped;
      }
      require_partitions_exist(*admin, partitions, err);
      if (spec.scenario == ResetScenario::FromFile) {
        bool found = false;
        for (const auto& row : parsed.file_rows) {
          if (parsed.file_has_groups && row.group != group) continue;
          found = true;
          spec.file_offsets.emplace_back(TopicPartition(row.topic, row.partition), row.offset);
        }
        if (!found) {
          out << "\nError: No reset plan for group " << group << " found.\n";
          plans.push_back({group, {}});
          continue;
        }
      }
      const std::vector<TopicPartition> covered = partitions_to_plan(spec, partitions);
      const PartitionFacts facts = fetch_facts(*admin, group, spec, covered);
      ResetPlan plan = plan_reset(spec, partitions, facts);
      out << plan.notices;
      for (const auto& warning : plan.warnings) err << "WARN " << warning << "\n";
      if (options.execute) commit(*admin, group, plan.offsets, err);
      plans.push_back({group, std::move(plan.offsets)});
    }

    std::vector<GroupPlan> printed;
    for (const auto& group : in_java_hash_map_order(groups)) {
      for (auto& plan : plans) {
        if (plan.group == group) printed.push_back(std::move(plan));
      }
    }
    if (options.export_csv) {
      out << format_reset_export(printed, options.groups.size() != 1);
    } else {
      out << format_reset_table(printed);
    }
    return refused ? kExitError : kExitOk;
  });
}

}  // namespace processor::offsetctl
