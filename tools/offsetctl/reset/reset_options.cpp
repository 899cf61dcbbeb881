// Kafka's argument rules for --reset-offsets (ConsumerGroupCommandOptions.checkArgs, 4.4).

#include <array>
#include <string>
#include <utility>

#include "processor/error.hpp"
#include "reset/reset_command.hpp"

namespace processor::offsetctl {
namespace {

[[noreturn]] void usage_error(const std::string& message) {
  throw StateError(ErrorKind::InvalidArgument, message);
}

}  // namespace

void validate_reset_options(const ResetOptions& options, std::ostream& err) {
  if (options.dry_run && options.execute) {
    usage_error("Option [reset-offsets] only accepts one of [execute] and [dry-run]");
  }
  if (!options.dry_run && !options.execute) {
    err << "WARN: No action will be performed as the --execute option is missing. In version 5.0, this "
           "command "
           "will require either --dry-run or --execute to be specified. You should add the --dry-run option "
           "explicitly if you are scripting this command and want to keep the current default behavior "
           "without "
           "prompting.\n";
  }
  if (options.groups.empty() && !options.all_groups) {
    usage_error("Option [reset-offsets] takes one of these options: [all-groups], [group]");
  }
  // Kafka checks the scenarios in this order, and names the other in the order of its set.
  const std::array<std::pair<const char*, bool>, 8> checked{{
      {"to-offset", options.to_offset.has_value()},
      {"to-datetime", options.to_datetime.has_value()},
      {"by-duration", options.by_duration.has_value()},
      {"to-earliest", options.to_earliest},
      {"to-latest", options.to_latest},
      {"to-current", options.to_current},
      {"shift-by", options.shift_by.has_value()},
      {"from-file", options.from_file.has_value()},
  }};
  const std::array<std::pair<const char*, bool>, 8> named{{
      {"to-datetime", options.to_datetime.has_value()},
      {"from-file", options.from_file.has_value()},
      {"shift-by", options.shift_by.has_value()},
      {"to-offset", options.to_offset.has_value()},
      {"to-earliest", options.to_earliest},
      {"to-current", options.to_current},
      {"to-latest", options.to_latest},
      {"by-duration", options.by_duration.has_value()},
  }};
  int scenarios = 0;
  for (const auto& [name, present] : checked) {
    if (!present) continue;
    ++scenarios;
    for (const auto& [other, other_present] : named) {
      if (other_present && std::string(other) != name) {
        usage_error(std::string("Option \"[") + name + "]\" can't be used with option \"[" + other + "]\"");
      }
    }
  }
  if (!options.groups.empty() && options.all_groups) {
    usage_error("Option \"[group]\" can't be used with option \"[all-groups]\"");
  }
  if (!options.all_topics && options.topics.empty() && !options.from_file) {
    usage_error("One of the reset scopes should be defined: --all-topics, --topic.");
  }
  if (scenarios == 0) {
    usage_error(
        "Option '[reset-offsets]' requires one of the following scenarios: [[to-datetime], [from-file], "
        "[shift-by], "
        "[to-offset], [to-earliest], [to-current], [to-latest], [by-duration]]");
  }
}

}  // namespace processor::offsetctl
