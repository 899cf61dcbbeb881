// Fuzz target: the offsets CSV of `offsetctl groups reset --from-file` (and `state import`).
//
// Input: the file's bytes.
// Contract: parse_offsets_csv() returns rows or throws StateError(InvalidArgument), nothing
// else; the rows all have a group or none do, have legal topics, partitions >= 0 and offsets >= 0,
// and format_offsets_csv() of them parses back to the same rows.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_contract.hpp"
#include "offsets_csv.hpp"
#include "processor/kafka/topic_partition.hpp"

namespace {

using namespace processor;
using processor::offsetctl::CsvOffset;
using processor::offsetctl::format_offsets_csv;
using processor::offsetctl::parse_offsets_csv;

bool same_rows(const std::vector<CsvOffset>& a, const std::vector<CsvOffset>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].group != b[i].group || a[i].topic != b[i].topic || a[i].partition != b[i].partition ||
        a[i].offset != b[i].offset) {
      return false;
    }
  }
  return true;
}

// parse_offsets_csv(text), or nullopt-like false when it threw InvalidArgument.
bool parse(std::string_view text, std::vector<CsvOffset>& rows, std::string_view what) {
  try {
    rows = parse_offsets_csv(text);
    return true;
  } catch (const StateError& error) {
    if (error.kind() != ErrorKind::InvalidArgument) {
      fuzz::violation(std::string(what) + " threw StateError(" + std::string(to_string(error.kind())) +
                      "): " + error.what());
    }
    return false;
  } catch (const std::exception& error) {
    fuzz::violation(std::string(what) + " threw a non-StateError exception: " + error.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<CsvOffset> rows;
  if (!parse(text, rows, "parse_offsets_csv")) return 0;
  const bool with_group = !rows.empty() && !rows.front().group.empty();
  for (const auto& row : rows) {
    fuzz::require(row.group.empty() != with_group, "rows with and without a group came back together");
    fuzz::require(row.partition >= 0, "a negative partition was returned");
    fuzz::require(row.offset >= 0, "a negative offset was returned");
    try {
      kafka::validate_topic(row.topic);
    } catch (const StateError&) {
      fuzz::violation("the illegal topic '" + row.topic + "' was returned");
    }
  }
  std::vector<CsvOffset> again;
  fuzz::require(
      parse(format_offsets_csv(rows, with_group), again, "parse_offsets_csv(format_offsets_csv(rows))"),
      "the formatted rows did not parse");
  fuzz::require(same_rows(rows, again), "the formatted rows parsed to other rows");
  return 0;
}
