#include "state/state_table.hpp"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <utility>

namespace processor::offsetctl {

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }

void TextTable::print(std::ostream& out) const {
  std::vector<std::size_t> widths;
  for (const auto& column : columns_) widths.push_back(std::max(column.min_width, column.header.size()));
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size() && i < widths.size(); ++i)
      widths[i] = std::max(widths[i], row[i].size());
  }
  const auto print_row = [&](const auto& cell_of) {
    for (std::size_t i = 0; i < columns_.size(); ++i) {
      const std::string& cell = cell_of(i);
      out << cell;
      if (i + 1 < columns_.size()) out << std::string(widths[i] - cell.size() + 1, ' ');
    }
    out << '\n';
  };
  print_row([&](std::size_t i) -> const std::string& { return columns_[i].header; });
  for (const auto& row : rows_) print_row([&](std::size_t i) -> const std::string& { return row[i]; });
}

std::string format_utc(std::chrono::system_clock::time_point at) {
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(at.time_since_epoch()).count();
  auto seconds = micros / 1'000'000;
  auto fraction = micros % 1'000'000;
  if (fraction < 0) {
    fraction += 1'000'000;
    --seconds;
  }
  const std::time_t time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  ::gmtime_r(&time, &utc);
  char text[64];
  const std::size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof text - length, ".%06lldZ", static_cast<long long>(fraction));
  return text;
}

}  // namespace processor::offsetctl
