#include "reset/reset_plan.hpp"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include "offsets_csv.hpp"
#include "processor/error.hpp"
#include "reset/java_map_order.hpp"

namespace processor::offsetctl {
namespace {

using kafka::TopicPartition;

std::int64_t fact_of(const OffsetsByPartition& facts, const TopicPartition& tp, std::string_view what) {
  const auto found = facts.find(tp);
  if (found == facts.end()) {
    throw StateError(ErrorKind::Unavailable, "Error getting " + std::string(what) +
                                                 " of topic partition: " + kafka_partition_name(tp));
  }
  return found->second;
}

// Kafka's checkOffsetsRange: an offset above the log end goes to the log end, one below the log
// start to the log start, each with a warning.
std::int64_t clamp(const TopicPartition& tp, std::int64_t requested, const PartitionFacts& facts,
                   std::vector<std::string>& warnings) {
  const std::int64_t latest = fact_of(facts.latest, tp, "ending offset");
  if (requested > latest) {
    warnings.push_back("New offset (" + std::to_string(requested) +
                       ") is higher than latest offset for topic partition " + kafka_partition_name(tp) +
                       ". Value will be set to " + std::to_string(latest) + ".");
    return latest;
  }
  const std::int64_t earliest = fact_of(facts.earliest, tp, "starting offset");
  if (requested < earliest) {
    warnings.push_back("New offset (" + std::to_string(requested) +
                       ") is lower than earliest offset for topic partition " + kafka_partition_name(tp) +
                       ". Value will be set to " + std::to_string(earliest) + ".");
    return earliest;
  }
  return requested;
}

// Java's String.split(regex) for a one-character separator: trailing empty pieces dropped.
std::vector<std::string_view> java_split(std::string_view text, char separator) {
  std::vector<std::string_view> pieces;
  std::size_t start = 0;
  while (true) {
    const std::size_t at = text.find(separator, start);
    pieces.push_back(text.substr(start, at == std::string_view::npos ? std::string_view::npos : at - start));
    if (at == std::string_view::npos) break;
    start = at + 1;
  }
  while (!pieces.empty() && pieces.back().empty()) pieces.pop_back();
  if (pieces.empty() && !text.empty()) return {};  // "," splits to nothing
  return pieces;
}

// Java's Integer.parseInt: optional sign, decimal digits, int32 range.
std::optional<std::int32_t> java_parse_int(std::string_view text) {
  if (!text.empty() && text.front() == '+') {
    text.remove_prefix(1);
    if (!text.empty() && (text.front() == '-' || text.front() == '+')) return std::nullopt;
  }
  std::int32_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace

FactsNeeded facts_needed(ResetScenario scenario) {
  switch (scenario) {
    case ResetScenario::ToEarliest:
      return {false, true, false, false};
    case ResetScenario::ToLatest:
      return {false, false, true, false};
    case ResetScenario::ToCurrent:
      return {true, false, true, false};
    case ResetScenario::ToOffset:
    case ResetScenario::FromFile:
      return {false, true, true, false};
    case ResetScenario::ShiftBy:
      return {true, true, true, false};
    case ResetScenario::ToDatetime:
    case ResetScenario::ByDuration:
      return {false, false, true, true};
  }
  return {};
}

std::vector<TopicPartition> partitions_to_plan(const ResetSpec& spec,
                                               const std::vector<TopicPartition>& partitions) {
  std::vector<TopicPartition> unique;
  std::unordered_set<TopicPartition> seen;
  const auto add = [&](const TopicPartition& tp) {
    if (seen.insert(tp).second) unique.push_back(tp);
  };
  if (spec.scenario == ResetScenario::FromFile) {
    for (const auto& [tp, offset] : spec.file_offsets) add(tp);
  } else {
    for (const auto& tp : partitions) add(tp);
  }
  return unique;
}

ResetPlan plan_reset(const ResetSpec& spec, const std::vector<TopicPartition>& partitions,
                     const PartitionFacts& facts) {
  const std::vector<TopicPartition> covered = partitions_to_plan(spec, partitions);
  ResetPlan plan;
  // Kafka fills a HashMap from the partitions and iterates it: for the warnings, the notices of
  // empty partitions and the rows.
  std::vector<TopicPartition> ordered = in_java_hash_map_order(covered);
  OffsetsByPartition chosen;

  switch (spec.scenario) {
    case ResetScenario::ToEarliest:
      for (const auto& tp : ordered) chosen[tp] = fact_of(facts.earliest, tp, "starting offset");
      break;
    case ResetScenario::ToLatest:
      for (const auto& tp : ordered) chosen[tp] = fact_of(facts.latest, tp, "ending offset");
      break;
    case ResetScenario::ToOffset:
      for (const auto& tp : ordered) chosen[tp] = clamp(tp, spec.value, facts, plan.warnings);
      break;
    case ResetScenario::ShiftBy:
      for (const auto& tp : ordered) {
        if (facts.committed.find(tp) == facts.committed.end()) {
          throw StateError(ErrorKind::InvalidArgument, "Cannot shift offset for partition " +
                                                           kafka_partition_name(tp) +
                                                           " since there is no current committed offset");
        }
      }
      for (const auto& tp : ordered)
        chosen[tp] = clamp(tp, facts.committed.at(tp) + spec.value, facts, plan.warnings);
      break;
    case ResetScenario::FromFile: {
      OffsetsByPartition requested;
      for (const auto& [tp, offset] : spec.file_offsets) requested[tp] = offset;
      for (const auto& tp : ordered) chosen[tp] = clamp(tp, requested.at(tp), facts, plan.warnings);
      break;
    }
    case ResetScenario::ToCurrent: {
      // Kafka puts the partitions with a committed offset first, then the others at the log end.
      std::vector<TopicPartition> inserted;
      for (const auto& tp : covered) {
        if (facts.committed.count(tp) != 0) {
          inserted.push_back(tp);
          chosen[tp] = facts.committed.at(tp);
        }
      }
      for (const auto& tp : covered) {
        if (facts.committed.count(tp) == 0) {
          inserted.push_back(tp);
          chosen[tp] = fact_of(facts.latest, tp, "ending offset");
        }
      }
      ordered = in_java_hash_map_order(inserted);
      break;
    }
    case ResetScenario::ToDatetime:
    case ResetScenario::ByDuration: {
      std::vector<TopicPartition> empty;
      for (const auto& tp : ordered) {
        const auto found = facts.by_timestamp.find(tp);
        if (found != facts.by_timestamp.end() && found->second >= 0) {
          chosen[tp] = found->second;
        } else {
          empty.push_back(tp);
          chosen[tp] = fact_of(facts.latest, tp, "offset by timestamp");
        }
      }
      for (const auto& tp : in_java_hash_map_order(empty)) {
        plan.notices += "\nWarn: Partition " + std::to_string(tp.partition) + " from topic " + tp.topic +
                        " is empty. Falling back to latest known offset.\n";
      }
      break;
    }
  }
  plan.offsets.reserve(ordered.size());
  for (const auto& tp : ordered) plan.offsets.push_back({tp, chosen.at(tp)});
  return plan;
}

TopicArgument parse_topic_argument(std::string_view argument) {
  TopicArgument parsed;
  if (argument.find(':') == std::string_view::npos) {
    parsed.topic = std::string(argument);
    return parsed;
  }
  const std::string quoted = "'" + std::string(argument) + "'";
  const auto pieces = java_split(argument, ':');
  if (pieces.size() != 2) {
    throw StateError(ErrorKind::InvalidArgument,
                     "Invalid topic arg " + quoted + ", expected topic name and partitions");
  }
  parsed.topic = std::string(pieces[0]);
  parsed.partitions.emplace();
  for (const std::string_view partition : java_split(pieces[1], ',')) {
    const auto number = java_parse_int(partition);
    if (!number) {
      // Kafka's message has the doubled quote at the end.
      throw StateError(ErrorKind::InvalidArgument, "Invalid partition '" + std::string(partition) +
                                                       "' specified in topic arg " + quoted + "'");
    }
    parsed.partitions->push_back(*number);
  }
  return parsed;
}

std::string kafka_partition_name(const TopicPartition& tp) {
  return tp.topic + "-" + std::to_string(tp.partition);
}

std::string format_reset_table(const std::vector<GroupPlan>& groups) {
  std::size_t group_width = 15;
  std::size_t topic_width = 15;
  for (const auto& group : groups) {
    group_width = std::max(group_width, group.group.size());
    for (const auto& row : group.offsets) topic_width = std::max(topic_width, row.tp.topic.size());
  }
  const auto pad = [](std::string text, std::size_t width) {
    if (text.size() < width) text.append(width - text.size(), ' ');
    return text;
  };
  const auto line = [&](const std::string& group, const std::string& topic, const std::string& partition,
                        const std::string& offset) {
    return "\n" + pad(group, group_width) + " " + pad(topic, topic_width) + " " + pad(partition, 10) + " " +
           offset;
  };
  std::string out;
  if (!groups.empty()) out += line("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET");
  for (const auto& group : groups) {
    for (const auto& row : group.offsets) {
      out += line(group.group, row.tp.topic, std::to_string(row.tp.partition), std::to_string(row.offset));
    }
  }
  return out + "\n";
}

std::string format_reset_export(const std::vector<GroupPlan>& groups, bool with_group) {
  std::vector<CsvOffset> rows;
  for (const auto& group : groups) {
    for (const auto& row : group.offsets)
      rows.push_back({group.group, row.tp.topic, row.tp.partition, row.offset});
  }
  return format_offsets_csv(rows, with_group) + "\n";
}

}  // namespace processor::offsetctl
