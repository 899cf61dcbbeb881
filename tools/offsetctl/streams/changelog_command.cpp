// `offsetctl changelog --bootstrap-server B --application APP --store S [--state-dir DIR]
// [--records N]`: a StreamProcessor store's changelog topic as Kafka holds it (each partition's
// log range; its records read read_committed) beside the changelog position of the local state
// in DIR, and, with --records, the records themselves decoded (the version byte taken off,
// tombstones named). Read through the library's ChangelogReader, as a restore reads.

#include <librdkafka/rdkafka.h>

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cluster_config.hpp"
#include "command.hpp"
#include "kafka/group/start_offsets.hpp"
#include "processor/error.hpp"
#include "processor/state/rocksdb_state_backend.hpp"
#include "processor/streams/stream_processor.hpp"
#include "streams/changelog_format.hpp"
#include "streams/changelog_reader.hpp"
#include "streams/state_keys.hpp"

namespace processor::offsetctl {
namespace {

constexpr std::chrono::seconds kRequestTimeout{10};
// RECORDS-BEHIND counts this far at most: a member far behind restores the whole changelog anyway.
constexpr std::int64_t kCountBehindAtMost = 100'000;

struct ChangelogArguments {
  std::string bootstrap_servers;
  std::string command_config;
  std::string application;
  std::string store;
  std::string state_dir;
  std::int64_t records = 0;
};

// Bytes as text: printable ASCII as it is, anything else as \xNN.
std::string printable(std::string_view bytes) {
  std::string out;
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f && c != '\\') {
      out.push_back(c);
    } else {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    }
  }
  return out;
}

// The local state's changelog position of each partition, when DIR holds one.
std::vector<std::optional<std::int64_t>> local_positions(const ChangelogArguments& args,
                                                         std::int32_t partitions) {
  std::vector<std::optional<std::int64_t>> positions(static_cast<std::size_t>(partitions));
  if (args.state_dir.empty()) return positions;
  state::RocksDbOptions options;
  options.read_only = true;  // a running processor holds the directory's LOCK
  state::RocksDbStateBackend db(args.state_dir, options);
  for (std::int32_t p = 0; p < partitions; ++p) {
    const std::string key = streams::internal::position_key(args.store, p);
    if (const auto bytes = db.get(key)) {
      positions[static_cast<std::size_t>(p)] = streams::internal::decode_position(*bytes, key);
    }
  }
  return positions;
}

// How many records a restore on this member would replay: those between each local position and
// the log end (transaction markers take offsets there too, and are not records).
std::vector<std::string> records_behind(streams::internal::ChangelogReader& reader, const std::string& topic,
                                        const std::vector<kafka::internal::LogRange>& ranges,
                                        const std::vector<std::optional<std::int64_t>>& positions) {
  std::vector<std::string> behind(ranges.size(), "-");
  std::map<std::int32_t, std::int64_t> starts;
  std::map<std::int32_t, std::int64_t> counts;
  for (std::size_t p = 0; p < ranges.size(); ++p) {
    if (!positions[p]) continue;
    behind[p] = "0";
    if (*positions[p] < ranges[p].high) starts[static_cast<std::int32_t>(p)] = *positions[p];
  }
  reader.read_to_end(
      topic, starts,
      [&](const rd_kafka_message_t& message) { return ++counts[message.partition] < kCountBehindAtMost; },
      kRequestTimeout);
  for (const auto& [partition, count] : counts) {
    behind[static_cast<std::size_t>(partition)] =
        count >= kCountBehindAtMost ? ">=" + std::to_string(kCountBehindAtMost) : std::to_string(count);
  }
  return behind;
}

void print_ranges(const std::string& topic, const std::vector<kafka::internal::LogRange>& ranges,
                  const std::vector<std::optional<std::int64_t>>& positions,
                  const std::vector<std::string>& behind, std::ostream& out) {
  const int width = std::max<int>(5, static_cast<int>(topic.size()));
  char line[512];
  std::snprintf(line, sizeof line, "%-*s %-10s %-10s %-10s %-15s %s\n", width, "TOPIC", "PARTITION",
                "LOG-START", "LOG-END", "LOCAL-POSITION", "RECORDS-BEHIND");
  out << line;
  for (std::size_t p = 0; p < ranges.size(); ++p) {
    const std::string position = positions[p] ? std::to_string(*positions[p]) : "-";
    std::snprintf(line, sizeof line, "%-*s %-10zu %-10lld %-10lld %-15s %s\n", width, topic.c_str(), p,
                  static_cast<long long>(ranges[p].low), static_cast<long long>(ranges[p].high),
                  position.c_str(), behind[p].c_str());
    out << line;
  }
}

// Up to `limit` records of each partition from its log start, decoded, in offset order per
// partition.
void print_records(streams::internal::ChangelogReader& reader, const std::string& topic,
                   const std::vector<kafka::internal::LogRange>& ranges, std::int64_t limit,
                   std::ostream& out) {
  std::map<std::int32_t, std::int64_t> starts;
  for (std::size_t p = 0; p < ranges.size(); ++p) {
    if (ranges[p].high > ranges[p].low) starts[static_cast<std::int32_t>(p)] = ranges[p].low;
  }
  std::map<std::int32_t, std::vector<std::string>> lines;
  reader.read_to_end(
      topic, starts,
      [&](const rd_kafka_message_t& message) {
        const std::string_view key(static_cast<const char*>(message.key), message.key_len);
        std::string value;
        if (message.payload == nullptr) {
          value = "(deleted: tombstone)";
        } else {
          const std::string where =
              kafka::partition_key(topic, message.partition) + "@" + std::to_string(message.offset);
          try {
            value = printable(streams::internal::decode_changelog_value(
                std::string_view(static_cast<const char*>(message.payload), message.len), where));
          } catch (const StateError& error) {
            value = std::string("(undecodable: ") + error.what() + ")";
          }
        }
        char prefix[64];
        std::snprintf(prefix, sizeof prefix, "%-10d %-10lld ", message.partition,
                      static_cast<long long>(message.offset));
        auto& partition_lines = lines[message.partition];
        partition_lines.push_back(prefix + printable(key) + " -> " + value);
        return static_cast<std::int64_t>(partition_lines.size()) < limit;
      },
      kRequestTimeout);
  out << "\nPARTITION  OFFSET     KEY -> VALUE\n";
  for (const auto& [partition, partition_lines] : lines) {
    for (const auto& line : partition_lines) out << line << "\n";
  }
}

int run_changelog(const ChangelogArguments& args, std::ostream& out, std::ostream& err) {
  try {
    const std::string topic = streams::changelog_topic(args.application, args.store);
    const auto properties =
        cluster_properties(args.bootstrap_servers, args.command_config, {{"log_level", "3"}});
    streams::internal::ChangelogReader reader(properties, "offsetctl-changelog", "the changelog reader");
    const std::int32_t partitions = reader.partition_count(topic, kRequestTimeout);
    std::vector<kafka::internal::LogRange> ranges;
    for (std::int32_t p = 0; p < partitions; ++p) {
      ranges.push_back(reader.log_range(kafka::TopicPartition(topic, p), kRequestTimeout,
                                        kafka::internal::RetryPolicy{kRequestTimeout}));
    }
    const auto positions = local_positions(args, partitions);
    print_ranges(topic, ranges, positions, records_behind(reader, topic, ranges, positions), out);
    if (args.records > 0) print_records(reader, topic, ranges, args.records, out);
    return kExitOk;
  } catch (const StateError& error) {
    err << "Error: " << error.what() << "\n";
    return kExitError;
  }
}

}  // namespace

void add_changelog_commands(CLI::App& app, Invocation& invocation) {
  auto args = std::make_shared<ChangelogArguments>();
  auto* changelog = app.add_subcommand(
      "changelog", "a StreamProcessor store's changelog topic: log ranges, local positions, decoded records");
  changelog->add_option("--bootstrap-server", args->bootstrap_servers, "the cluster")->required();
  add_command_config_option(*changelog, args->command_config);
  changelog->add_option("--application", args->application, "the StreamProcessor's application_id")
      ->required();
  changelog->add_option("--store", args->store, "the store name")->required();
  changelog->add_option("--state-dir", args->state_dir,
                        "a member's state directory, for its local positions");
  changelog->add_option("--records", args->records, "print up to N records of each partition, decoded")
      ->check(CLI::NonNegativeNumber);
  changelog->callback([&invocation, args] {
    invocation.run = [args] { return run_changelog(*args, std::cout, std::cerr); };
  });
}

}  // namespace processor::offsetctl
