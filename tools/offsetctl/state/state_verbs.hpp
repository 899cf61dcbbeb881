#pragma once
// The verbs of `offsetctl state --state-dir DIR ...`, one function each, as state_commands.cpp
// runs them once CLI11 has parsed the command line. Each returns the exit code; errors are
// StateError naming the bad value, the key or the directory, and leave the directory unchanged.

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "state/state_directory.hpp"

namespace processor::offsetctl {

// The options every `state` verb shares.
struct StateTarget {
  std::string dir;
  StateLayout layout;
};

// groups: one line per group, sorted: "<group> offsets=<n> checkpoints=<m>".
int run_state_groups(const StateTarget& target, std::ostream& out);

struct DescribeRequest {
  std::string group;
  std::string bootstrap_servers;  // "" when not given: no LOG-END-OFFSET, no LAG
  std::string command_config;     // a Java client properties file for the cluster; "" for none
  std::string output = "table";   // "table" or "json"
};
int run_state_describe(const StateTarget& target, const DescribeRequest& request, std::ostream& out);

int run_checkpoints_list(const StateTarget& target, const std::string& group, std::ostream& out);
int run_checkpoints_show(const StateTarget& target, const std::string& group, std::optional<std::uint64_t> id,
                         std::ostream& out);

struct DiffRequest {
  std::string group;
  std::string bootstrap_servers;
  std::string command_config;
  std::optional<std::uint64_t> checkpoint_id;  // the latest when not given
};
int run_state_diff(const StateTarget& target, const DiffRequest& request, std::ostream& out);

// Neither --dry-run nor --execute: a dry run, with kafka-consumer-groups' warning.
enum class WriteMode { Default, DryRun, Execute };

struct ResetRequest {
  std::string group;
  std::vector<std::string> topics;  // "T" or "T:P,P,..."
  bool all_topics = false;
  std::optional<std::int64_t> to_offset;
  std::optional<std::int64_t> shift_by;
  bool to_earliest = false;
  bool to_latest = false;
  std::string from_file;
  std::string bootstrap_servers;
  std::string command_config;
  WriteMode mode = WriteMode::Default;
};
int run_state_reset(const StateTarget& target, const ResetRequest& request, std::ostream& out,
                    std::ostream& err);

// export: the group's offsets as the three-column CSV, to `file` ("" for `out`).
int run_state_export(const StateTarget& target, const std::string& group, const std::string& file,
                     std::ostream& out);

// import: the CSV's rows of the group (a three-column file is all the group's), written in one
// batch.
int run_state_import(const StateTarget& target, const std::string& group, const std::string& file,
                     WriteMode mode, std::ostream& out, std::ostream& err);

}  // namespace processor::offsetctl
