#include "offsets_csv.hpp"

#include <charconv>
#include <string>

#include "processor/error.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace processor::offsetctl {
namespace {

[[noreturn]] void bad_row(std::size_t line, const std::string& why) {
  throw StateError(ErrorKind::InvalidArgument, "offsets CSV line " + std::to_string(line) + ": " + why);
}

template <class Int>
Int parse_non_negative(std::string_view field, std::size_t line, std::string_view what) {
  Int value = 0;
  const auto [end, ec] = std::from_chars(field.data(), field.data() + field.size(), value);
  if (field.empty() || ec != std::errc() || end != field.data() + field.size() || value < 0) {
    bad_row(line, std::string(what) + " '" + std::string(field) + "' is not a non-negative integer");
  }
  return value;
}

std::vector<std::string_view> split_fields(std::string_view row) {
  std::vector<std::string_view> fields;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = row.find(',', start);
    fields.push_back(
        row.substr(start, comma == std::string_view::npos ? std::string_view::npos : comma - start));
    if (comma == std::string_view::npos) return fields;
    start = comma + 1;
  }
}

}  // namespace

std::vector<CsvOffset> parse_offsets_csv(std::string_view text) {
  std::vector<CsvOffset> rows;
  std::size_t columns = 0;
  std::size_t line = 0;
  while (!text.empty()) {
    ++line;
    const std::size_t newline = text.find('\n');
    std::string_view row = text.substr(0, newline);
    text.remove_prefix(newline == std::string_view::npos ? text.size() : newline + 1);
    if (!row.empty() && row.back() == '\r') row.remove_suffix(1);
    if (row.find_first_not_of(" \t") == std::string_view::npos) continue;

    const auto fields = split_fields(row);
    if (fields.size() != 3 && fields.size() != 4) {
      bad_row(line, "expected topic,partition,offset or group,topic,partition,offset, got " +
                        std::to_string(fields.size()) + " columns in '" + std::string(row) + "'");
    }
    if (columns != 0 && fields.size() != columns) {
      bad_row(line, "has " + std::to_string(fields.size()) + " columns where earlier lines have " +
                        std::to_string(columns));
    }
    columns = fields.size();
    const std::size_t first = columns - 3;
    CsvOffset offset;
    if (columns == 4) {
      if (fields[0].empty()) bad_row(line, "empty group");
      offset.group = std::string(fields[0]);
    }
    offset.topic = std::string(fields[first]);
    try {
      kafka::validate_topic(offset.topic);
    } catch (const StateError& e) {
      bad_row(line, e.what());
    }
    offset.partition = parse_non_negative<std::int32_t>(fields[first + 1], line, "partition");
    const std::string_view offset_field = fields[first + 2];
    std::int64_t negative = 0;
    const auto [end, ec] =
        std::from_chars(offset_field.data(), offset_field.data() + offset_field.size(), negative);
    if (ec == std::errc() && end == offset_field.data() + offset_field.size() && negative < 0) {
      // Kafka's own message for this row (OffsetAndMetadata), then where it is.
      throw StateError(ErrorKind::InvalidArgument, "Invalid negative offset (offsets CSV line " +
                                                       std::to_string(line) + ": offset '" +
                                                       std::string(offset_field) + "')");
    }
    offset.offset = parse_non_negative<std::int64_t>(offset_field, line, "offset");
    rows.push_back(std::move(offset));
  }
  return rows;
}

std::string format_offsets_csv(const std::vector<CsvOffset>& offsets, bool with_group) {
  std::string out;
  for (const auto& o : offsets) {
    if (with_group) out += o.group + ",";
    out += o.topic + "," + std::to_string(o.partition) + "," + std::to_string(o.offset) + "\n";
  }
  return out;
}

}  // namespace processor::offsetctl
