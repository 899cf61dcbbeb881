#pragma once
// The CSV of kafka-consumer-groups --reset-offsets (--export writes it, --from-file reads it),
// also what `offsetctl state export|import` use:
//   topic,partition,offset          one group (the group is given on the command line)
//   group,topic,partition,offset    several groups
// One row per line, no header, no quoting (topic names hold no commas; a group name with a comma,
// quote or line break cannot be written). Kafka's --export ends with an empty line, which the
// parser skips.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace processor::offsetctl {

struct CsvOffset {
  std::string group;  // "" in a three-column file
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
};

// Parses `text`; blank lines are skipped, "\r\n" line ends accepted. All rows must have the same
// number of columns (3 or 4). Throws StateError(InvalidArgument) naming the line number and the
// bad value: a wrong column count, a partition or offset that is not a non-negative integer, an
// invalid topic name, an empty group; a negative offset with Kafka's message first ("Invalid
// negative offset (offsets CSV line 2: offset '-5')"). Nothing is returned on error.
std::vector<CsvOffset> parse_offsets_csv(std::string_view text);

// One row per offset, in the order given; with_group writes the four-column form.
std::string format_offsets_csv(const std::vector<CsvOffset>& offsets, bool with_group);

}  // namespace processor::offsetctl
