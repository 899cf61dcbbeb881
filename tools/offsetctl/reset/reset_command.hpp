#pragma once
// `offsetctl groups reset` and `offsetctl groups delete-offsets`: kafka-consumer-groups
// --reset-offsets and --delete-offsets, with Kafka 4.4's semantics and output. The options are
// what the CLI parsed; validate_reset_options() applies Kafka's argument rules before anything
// touches the cluster.

#include <chrono>
#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace processor::offsetctl {

struct ResetOptions {
  std::string bootstrap_server;
  std::string command_config;       // a Java client properties file; "" for none
  std::vector<std::string> groups;  // --group, repeatable
  bool all_groups = false;
  std::vector<std::string> topics;  // --topic T or T:P,P..., repeatable
  bool all_topics = false;
  // The reset specification: exactly one of these.
  bool to_earliest = false;
  bool to_latest = false;
  bool to_current = false;
  std::optional<std::int64_t> to_offset;
  std::optional<std::int64_t> shift_by;
  std::optional<std::string> to_datetime;
  std::optional<std::string> by_duration;
  std::optional<std::string> from_file;
  bool dry_run = false;
  bool execute = false;
  bool export_csv = false;
  std::chrono::milliseconds timeout{5000};  // --timeout, Kafka's default
};

struct DeleteOffsetsOptions {
  std::string bootstrap_server;
  std::string command_config;
  std::string group;
  std::vector<std::string> topics;
  std::chrono::milliseconds timeout{5000};
};

// Kafka's checks of the arguments (ConsumerGroupCommandOptions.checkArgs), in its order and with
// its messages. Writes Kafka's warning for a reset without --dry-run/--execute to `err`.
// Throws StateError(InvalidArgument) with Kafka's message for a usage error.
void validate_reset_options(const ResetOptions& options, std::ostream& err);

// Runs the reset: the table (or CSV) on `out`, Kafka's warnings and the progress line on `err`.
// Returns kExitOk, or kExitError when a group was refused (it has members) or the reset failed;
// nothing is committed for a group unless every offset of its plan could be computed.
int run_reset(const ResetOptions& options, std::ostream& out, std::ostream& err);

// Deletes the group's committed offsets of the topics' partitions; the TOPIC PARTITION STATUS
// table on `out`. Returns kExitError when any partition or the group failed.
int run_delete_offsets(const DeleteOffsetsOptions& options, std::ostream& out, std::ostream& err);

}  // namespace processor::offsetctl
