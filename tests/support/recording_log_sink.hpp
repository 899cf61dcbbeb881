#pragma once
// A log sink for tests: keeps every record it receives. Thread-safe, since librdkafka calls the
// sink from its own threads; the records are shared with the installed sink, so a sink still
// installed after the test cannot dangle.

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "processor/log.hpp"

namespace processor::testing {

struct LogRecord {
  LogLevel level;
  std::string component;
  std::string message;
};

class RecordingSink {
 public:
  LogSink sink() const {
    return [state = state_](LogLevel level, std::string_view component, std::string_view message) {
      std::lock_guard lock(state->mutex);
      state->records.push_back({level, std::string(component), std::string(message)});
    };
  }
  std::vector<LogRecord> records() const {
    std::lock_guard lock(state_->mutex);
    return state_->records;
  }
  // The records of the librdkafka client named `client_id` (its lines start with its name,
  // "<client.id>#consumer-<n>" or "<client.id>#producer-<n>").
  std::vector<LogRecord> rdkafka_records_of(const std::string& client_id) const {
    std::vector<LogRecord> out;
    for (auto& record : records()) {
      if (record.component == "rdkafka" && record.message.starts_with(client_id + "#")) out.push_back(record);
    }
    return out;
  }

 private:
  struct State {
    std::mutex mutex;
    std::vector<LogRecord> records;
  };
  std::shared_ptr<State> state_ = std::make_shared<State>();
};

}  // namespace processor::testing
