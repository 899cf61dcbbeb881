// processor's log sink into spdlog, one JSON object per line: the library's own warnings and
// librdkafka's log lines alike. Needs no broker: librdkafka's built-in mock cluster
// (test.mock.num.brokers) stands in for Kafka.
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <chrono>
#include <processor/kafka.hpp>
#include <string>
#include <string_view>

namespace {

spdlog::level::level_enum to_spdlog(processor::LogLevel level) {
  switch (level) {
    case processor::LogLevel::Debug:
      return spdlog::level::debug;
    case processor::LogLevel::Info:
      return spdlog::level::info;
    case processor::LogLevel::Warning:
      return spdlog::level::warn;
    case processor::LogLevel::Error:
      return spdlog::level::err;
  }
  return spdlog::level::err;
}

// The text as the body of a JSON string.
std::string json_escaped(std::string_view text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", c);
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

int main() {
  // _mt: the sink is called from librdkafka's threads too, so the logger must be thread-safe.
  auto logger = spdlog::stdout_logger_mt("processor");
  logger->set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%e","level":"%l","thread":%t,%v})");
  logger->set_level(spdlog::level::debug);  // processor::set_log_level() does the filtering

  // spdlog reports its own failures to its error handler, so this sink never throws.
  processor::set_log_sink(
      [logger](processor::LogLevel level, std::string_view component, std::string_view message) {
        logger->log(to_spdlog(level), R"("component":"{}","message":"{}")", component, json_escaped(message));
      });
  // The default. Debug adds the lines of librdkafka's `debug` property.
  processor::set_log_level(processor::LogLevel::Info);

  {
    // librdkafka announces its mock cluster at Info ("MOCK") and warns that a consumer ignores
    // the producer property queue.buffering.max.ms ("CONFWARN"); both arrive through the sink.
    auto client = processor::kafka::KafkaClient::create({{"bootstrap.servers", "unused:9092"},
                                                         {"group.id", "spdlog-example"},
                                                         {"test.mock.num.brokers", "1"},
                                                         {"queue.buffering.max.ms", "5"}});
    client->poll(std::chrono::milliseconds(100));
  }
  processor::set_log_sink({});  // back to stderr
}
