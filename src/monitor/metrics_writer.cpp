#include "processor/monitor/metrics_writer.hpp"

#include <charconv>
#include <cmath>

#include "processor/error.hpp"

namespace processor::monitor {

namespace {

bool is_name_start(char c) noexcept { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) noexcept { return is_name_start(c) || (c >= '0' && c <= '9'); }

// Label values: backslash, double quote and line feed are escaped (format 0.0.4).
void append_label_value(std::string& out, std::string_view value) {
  for (const char c : value) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '"': out += "\\\""; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

// HELP text: backslash and line feed only.
void append_help(std::string& out, std::string_view help) {
  for (const char c : help) {
    switch (c) {
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      default: out += c;
    }
  }
}

}  // namespace

std::string_view metric_type_name(MetricType type) {
  switch (type) {
    case MetricType::Counter: return "counter";
    case MetricType::Gauge: return "gauge";
    case MetricType::Histogram: return "histogram";
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

bool is_valid_label_name(std::string_view name) noexcept {
  if (name.empty() || !is_name_start(name[0]) || name.starts_with("__")) return false;
  for (const char c : name) {
    if (!is_name_char(c)) return false;
  }
  return true;
}

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
    throw StateError(ErrorKind::InvalidArgument, "metric family \"" + std::string(name) + "\" written twice in one scrape");
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
    if (!is_valid_label_name(label.name)) {
      throw StateError(ErrorKind::InvalidArgument,
                       "invalid label name \"" + std::string(label.name) + "\" in metric \"" + family_ + "\"");
    }
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
