#include "processor/monitor/metrics_writer.hpp"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>

#include "processor/error.hpp"

namespace processor::monitor {

namespace {

constexpr bool is_name_start(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
constexpr bool is_name_char(char c) noexcept { return is_name_start(c) || (c >= '0' && c <= '9'); }

// Per byte: 1 a name character, 2 a character a label value escapes. Tables, because every
// sample of a scrape checks its label names and values byte by byte.
constexpr std::array<unsigned char, 256> kByteClass = [] {
  std::array<unsigned char, 256> table{};
  for (int c = 0; c < 256; ++c) {
    if (is_name_char(static_cast<char>(c))) table[static_cast<std::size_t>(c)] = 1;
  }
  table[static_cast<unsigned char>('\\')] = 2;
  table[static_cast<unsigned char>('"')] = 2;
  table[static_cast<unsigned char>('\n')] = 2;
  return table;
}();

// Whether any byte of `word` is `byte` (the "has zero byte" bit trick on word ^ byte pattern).
constexpr bool has_byte(std::uint64_t word, unsigned char byte) noexcept {
  constexpr std::uint64_t kOnes = 0x0101010101010101ULL;
  constexpr std::uint64_t kHighs = 0x8080808080808080ULL;
  const std::uint64_t x = word ^ (kOnes * byte);
  return ((x - kOnes) & ~x & kHighs) != 0;
}

// Eight bytes at a time: label values are most of a scrape's bytes.
bool needs_escape(std::string_view value) noexcept {
  std::size_t i = 0;
  for (; i + 8 <= value.size(); i += 8) {
    std::uint64_t word;
    std::memcpy(&word, value.data() + i, 8);
    if (has_byte(word, '\\') || has_byte(word, '"') || has_byte(word, '\n')) return true;
  }
  for (; i < value.size(); ++i) {
    if (kByteClass[static_cast<unsigned char>(value[i])] == 2) return true;
  }
  return false;
}

// Label values: backslash, double quote and line feed are escaped (format 0.0.4). The runs
// between them are appended whole: a scrape is mostly label values (the hot loop of a scrape).
void append_label_value(std::string& out, std::string_view value) {
  std::size_t run = 0;
  for (std::size_t i = 0; i < value.size(); ++i) {
    const char c = value[i];
    if (c != '\\' && c != '"' && c != '\n') continue;
    out.append(value.data() + run, i - run);
    out += c == '\n' ? "\\n" : c == '"' ? "\\\"" : "\\\\";
    run = i + 1;
  }
  out.append(value.data() + run, value.size() - run);
}

// HELP text: backslash and line feed only.
void append_help(std::string& out, std::string_view help) {
  for (const char c : help) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
}

// Inlined into every sample: [a-zA-Z_][a-zA-Z0-9_]*, not starting with "__".
inline bool label_name_ok(std::string_view name) noexcept {
  if (name.empty() || (name[0] >= '0' && name[0] <= '9') ||
      (name.size() > 1 && name[0] == '_' && name[1] == '_')) {
    return false;
  }
  unsigned char all = 1;
  for (const char c : name) all &= kByteClass[static_cast<unsigned char>(c)];
  return all == 1;
}

}  // namespace

std::string_view metric_type_name(MetricType type) {
  switch (type) {
    case MetricType::Counter:
      return "counter";
    case MetricType::Gauge:
      return "gauge";
    case MetricType::Histogram:
      return "histogram";
  }
  return "untyped";
}

bool is_valid_metric_name(std::string_view name) noexcept {
  if (name.empty() || !(is_name_start(name[0]) || name[0] == ':')) return false;
  for (const char c : name) {
    if (!is_name_char(c) && c != ':') return false;
  }
  return true;
}

bool is_valid_label_name(std::string_view name) noexcept { return label_name_ok(name); }

void append_metric_value(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
    return;
  }
  if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
    return;
  }
  char buffer[32];
  // Whole numbers below 2^53 as integers ("1700000000", not the shortest "1.7e+09"): the same
  // double to a parser, easier to read for a person.
  if (std::fabs(value) < 9007199254740992.0 && value == std::trunc(value)) {
    const auto result = std::to_chars(buffer, buffer + sizeof buffer, static_cast<std::int64_t>(value));
    out.append(buffer, result.ptr);
    return;
  }
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out.append(buffer, result.ptr);
}

void MetricWriter::family(std::string_view name, std::string_view help, MetricType type) {
  if (!is_valid_metric_name(name)) {
    throw StateError(ErrorKind::InvalidArgument, "invalid metric name \"" + std::string(name) + "\"");
  }
  if (!written_.emplace(name).second) {
    throw StateError(ErrorKind::InvalidArgument,
                     "metric family \"" + std::string(name) + "\" written twice in one scrape");
  }
  family_.assign(name);
  out_ += "# HELP ";
  out_ += name;
  out_ += ' ';
  append_help(out_, help);
  out_ += "\n# TYPE ";
  out_ += name;
  out_ += ' ';
  out_ += metric_type_name(type);
  out_ += '\n';
}

void MetricWriter::begin_sample(LabelPairs labels, std::string_view suffix) {
  for (const LabelPair& label : labels) {
    if (!label_name_ok(label.name)) {
      throw StateError(ErrorKind::InvalidArgument, "invalid label name \"" + std::string(label.name) +
                                                       "\" in metric \"" + family_ + "\"");
    }
  }
  // The common case, no label value to escape: the line's size is known, one resize and copies.
  std::size_t size = family_.size() + suffix.size() + 1 + (labels.empty() ? 0 : 2);
  bool plain = true;
  for (const LabelPair& label : labels) {
    size += label.name.size() + label.value.size() + 4;  // ="", and the comma (one too many)
    plain = plain && !needs_escape(label.value);
  }
  if (plain) {
    if (!labels.empty()) --size;
    const std::size_t at = out_.size();
    out_.resize(at + size);
    char* p = out_.data() + at;
    const auto put = [&p](std::string_view text) {
      if (text.empty()) return;  // an empty view's data() may be null, which memcpy must not get
      std::memcpy(p, text.data(), text.size());
      p += text.size();
    };
    put(family_);
    put(suffix);
    if (!labels.empty()) {
      *p++ = '{';
      for (std::size_t i = 0; i < labels.size(); ++i) {
        if (i > 0) *p++ = ',';
        put(labels[i].name);
        put("=\"");
        put(labels[i].value);
        *p++ = '"';
      }
      *p++ = '}';
    }
    *p = ' ';
    return;
  }
  out_ += family_;
  out_ += suffix;
  if (!labels.empty()) {
    out_ += '{';
    bool first = true;
    for (const LabelPair& label : labels) {
      if (!first) out_ += ',';
      first = false;
      out_ += label.name;
      out_ += "=\"";
      append_label_value(out_, label.value);
      out_ += '"';
    }
    out_ += '}';
  }
  out_ += ' ';
}

void MetricWriter::sample(LabelPairs labels, double value, std::string_view suffix) {
  if (std::isnan(value)) return;  // unknown: no sample
  begin_sample(labels, suffix);
  append_metric_value(out_, value);
  out_ += '\n';
}

void MetricWriter::sample(LabelPairs labels, std::int64_t value, std::string_view suffix) {
  begin_sample(labels, suffix);
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  out_.append(buffer, result.ptr);
  out_ += '\n';
}

}  // namespace processor::monitor
