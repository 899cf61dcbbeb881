// The read verbs of `offsetctl state`: groups, describe, checkpoints list|show, export. Each
// opens the directory read-only, so they work while a running application holds it.

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "offsets_csv.hpp"
#include "processor/error.hpp"
#include "state/state_broker.hpp"
#include "state/state_table.hpp"
#include "state/state_verbs.hpp"

namespace processor::offsetctl {
namespace {

StateDirectory open_for_reading(const StateTarget& target) {
  return StateDirectory(target.dir, StateDirectory::Access::ReadOnly, target.layout);
}

// kafka-consumer-groups' column widths: group and topic at least 15, partition 10, offsets 15.
constexpr std::size_t kNameWidth = 15;
constexpr std::size_t kPartitionWidth = 10;
constexpr std::size_t kOffsetWidth = 15;

struct DescribedOffset {
  const StoredOffset* stored;
  std::optional<std::int64_t> log_end_offset;
  std::optional<std::int64_t> lag;
};

std::string or_dash(const std::optional<std::int64_t>& value) { return value ? std::to_string(*value) : "-"; }

nlohmann::json or_null(const std::optional<std::int64_t>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace

int run_state_groups(const StateTarget& target, std::ostream& out) {
  auto directory = open_for_reading(target);
  for (const auto& group : directory.groups()) {
    out << group.group << " offsets=" << group.offsets << " checkpoints=" << group.checkpoints << '\n';
  }
  return kExitOk;
}

int run_state_describe(const StateTarget& target, const DescribeRequest& request, std::ostream& out) {
  auto directory = open_for_reading(target);
  const auto offsets = directory.offsets(request.group);
  if (offsets.empty()) {
    throw StateError(ErrorKind::NotFound,
                     "group '" + request.group + "' has no offsets in '" + directory.path().string() + "'");
  }
  const bool with_broker = !request.bootstrap_servers.empty();
  std::vector<DescribedOffset> described;
  std::optional<StateBroker> broker;
  if (with_broker) broker.emplace(request.bootstrap_servers, request.command_config, request.group);
  for (const auto& stored : offsets) {
    DescribedOffset entry{&stored, std::nullopt, std::nullopt};
    if (broker) {
      if (const auto range = broker->log_range(stored.partition)) {
        entry.log_end_offset = range->high_watermark;
        entry.lag = std::max<std::int64_t>(0, range->high_watermark - stored.info.offset);
      }
    }
    described.push_back(entry);
  }

  if (request.output == "json") {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& entry : described) {
      nlohmann::json row = {{"topic", entry.stored->partition.topic},
                            {"partition", entry.stored->partition.partition},
                            {"current_offset", entry.stored->info.offset}};
      if (with_broker) {
        row["log_end_offset"] = or_null(entry.log_end_offset);
        row["lag"] = or_null(entry.lag);
      }
      rows.push_back(std::move(row));
    }
    out << nlohmann::json{{"group", request.group}, {"offsets", std::move(rows)}}.dump(2) << '\n';
    return kExitOk;
  }

  std::vector<TextTable::Column> columns = {{"GROUP", kNameWidth},
                                            {"TOPIC", kNameWidth},
                                            {"PARTITION", kPartitionWidth},
                                            {"CURRENT-OFFSET", kOffsetWidth}};
  if (with_broker) {
    columns.push_back({"LOG-END-OFFSET", kOffsetWidth});
    columns.push_back({"LAG", kOffsetWidth});
  }
  TextTable table(std::move(columns));
  for (const auto& entry : described) {
    std::vector<std::string> cells = {request.group, entry.stored->partition.topic,
                                      std::to_string(entry.stored->partition.partition),
                                      std::to_string(entry.stored->info.offset)};
    if (with_broker) {
      cells.push_back(or_dash(entry.log_end_offset));
      cells.push_back(or_dash(entry.lag));
    }
    table.add_row(std::move(cells));
  }
  table.print(out);
  return kExitOk;
}

int run_checkpoints_list(const StateTarget& target, const std::string& group, std::ostream& out) {
  auto directory = open_for_reading(target);
  const auto checkpoints = directory.checkpoints(group);
  if (checkpoints.empty()) {
    throw StateError(ErrorKind::NotFound,
                     "group '" + group + "' has no checkpoint in '" + directory.path().string() + "'");
  }
  TextTable table({{"ID", 0}, {"CREATED-AT", 0}, {"PARTITIONS", 0}});
  for (const auto& checkpoint : checkpoints) {
    table.add_row({std::to_string(checkpoint.id), format_utc(checkpoint.created_at),
                   std::to_string(checkpoint.offsets.size())});
  }
  table.print(out);
  return kExitOk;
}

int run_checkpoints_show(const StateTarget& target, const std::string& group, std::optional<std::uint64_t> id,
                         std::ostream& out) {
  auto directory = open_for_reading(target);
  const auto checkpoint = directory.checkpoint(group, id);
  out << "checkpoint " << checkpoint.id << " of group " << group << ", created at "
      << format_utc(checkpoint.created_at) << ", " << checkpoint.offsets.size() << " partitions\n";
  TextTable table({{"TOPIC", kNameWidth}, {"PARTITION", kPartitionWidth}, {"OFFSET", 0}});
  for (const auto& [tp, offset] : sorted_positions(checkpoint)) {
    table.add_row({tp.topic, std::to_string(tp.partition), std::to_string(offset)});
  }
  table.print(out);
  return kExitOk;
}

int run_state_export(const StateTarget& target, const std::string& group, const std::string& file,
                     std::ostream& out) {
  auto directory = open_for_reading(target);
  std::vector<CsvOffset> rows;
  for (const auto& stored : directory.offsets(group)) {
    rows.push_back(CsvOffset{group, stored.partition.topic, stored.partition.partition, stored.info.offset});
  }
  if (rows.empty()) {
    throw StateError(ErrorKind::NotFound,
                     "group '" + group + "' has no offsets in '" + directory.path().string() + "'");
  }
  const std::string csv = format_offsets_csv(rows, false);
  if (file.empty()) {
    out << csv;
    return kExitOk;
  }
  std::ofstream written(file, std::ios::binary | std::ios::trunc);
  written << csv;
  written.close();
  if (!written) throw StateError(ErrorKind::Storage, "cannot write the offsets CSV to '" + file + "'");
  return kExitOk;
}

}  // namespace processor::offsetctl
