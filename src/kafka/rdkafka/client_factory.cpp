#include "kafka/rdkafka/client_factory.hpp"

#include <string>

#include "common/log_internal.hpp"
#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

void error_callback(rd_kafka_t*, int error, const char* reason, void*) {
  // Transport errors are retried by librdkafka; only fatal ones need the user's attention,
  // and those surface through the calls that hit them.
  if (error == RD_KAFKA_RESP_ERR__FATAL) {
    processor::internal::log(LogLevel::Error, "rdkafka", "librdkafka fatal error: ", reason);
  }
}

// librdkafka's levels are syslog's: 0 emergency .. 3 error, 4 warning, 5 notice, 6 info, 7 debug.
LogLevel from_syslog_level(int level) noexcept {
  if (level <= 3) return LogLevel::Error;
  if (level == 4) return LogLevel::Warning;
  if (level <= 6) return LogLevel::Info;
  return LogLevel::Debug;
}

// librdkafka's own log lines go to the library's sink instead of its stderr printer. Called by
// librdkafka from any of its threads (and from the application's, inside rd_kafka_new() and
// polls): must not throw, and processor::internal::log never does.
void log_callback(const rd_kafka_t* rk, int level, const char* facility, const char* line) noexcept {
  // rk is null for lines logged before the client exists.
  processor::internal::log(from_syslog_level(level), "rdkafka", rk != nullptr ? rd_kafka_name(rk) : "rdkafka",
                           " ", facility != nullptr ? facility : "", ": ", line != nullptr ? line : "");
}

}  // namespace

void require_properties(const KafkaProperties& properties, std::initializer_list<const char*> required,
                        const char* who) {
  for (const char* name : required) {
    const auto it = properties.find(name);
    if (it == properties.end() || it->second.empty()) {
      throw StateError(ErrorKind::InvalidArgument, std::string(who) + " needs the property '" + name + "'");
    }
  }
}

RdPtr<rd_kafka_t> create_client(rd_kafka_type_t type, const KafkaProperties& properties,
                                const ClientCallbacks& callbacks, const char* what) {
  RdPtr<rd_kafka_conf_t> conf(rd_kafka_conf_new());
  char error[512];
  for (const auto& [name, value] : properties) {
    if (rd_kafka_conf_set(conf.get(), name.c_str(), value.c_str(), error, sizeof error) != RD_KAFKA_CONF_OK) {
      throw StateError(ErrorKind::InvalidArgument, "invalid Kafka property '" + name + "' = '" + value + "': " + error);
    }
  }
  if (callbacks.opaque != nullptr) rd_kafka_conf_set_opaque(conf.get(), callbacks.opaque);
  if (callbacks.rebalance != nullptr) rd_kafka_conf_set_rebalance_cb(conf.get(), callbacks.rebalance);
  if (callbacks.delivery != nullptr) rd_kafka_conf_set_dr_msg_cb(conf.get(), callbacks.delivery);
  rd_kafka_conf_set_error_cb(conf.get(), error_callback);
  rd_kafka_conf_set_log_cb(conf.get(), log_callback);

  RdPtr<rd_kafka_t> client(rd_kafka_new(type, conf.get(), error, sizeof error));
  if (!client) throw StateError(ErrorKind::Kafka, std::string("cannot create ") + what + ": " + error);
  conf.release();  // rd_kafka_new() took it
  return client;
}

}  // namespace processor::kafka::internal
