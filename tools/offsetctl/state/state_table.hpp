#pragma once
// The text output of offsetctl's `state` verbs: kafka-consumer-groups' left-aligned tables, and
// times as UTC ISO-8601.

#include <chrono>
#include <cstddef>
#include <ostream>
#include <string>
#include <vector>

namespace processor::offsetctl {

// A table as kafka-consumer-groups prints one: a header row, then one row per entry, each
// column left-aligned to at least its minimum width (and to its longest cell), columns separated
// by one space, the last column not padded.
//
// Not safe for concurrent mutation.
class TextTable {
 public:
  struct Column {
    std::string header;
    std::size_t min_width = 0;
  };
  explicit TextTable(std::vector<Column> columns);

  // REQUIRES: one cell per column.
  void add_row(std::vector<std::string> cells);
  void print(std::ostream& out) const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

// e.g. "2026-12-01T17:06:56.123456Z": microseconds, as the stored records keep them.
std::string format_utc(std::chrono::system_clock::time_point at);

}  // namespace processor::offsetctl
