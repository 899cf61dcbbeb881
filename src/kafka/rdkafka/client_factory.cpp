#include "kafka/rdkafka/client_factory.hpp"

#include <iostream>
#include <string>

#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

void error_callback(rd_kafka_t*, int error, const char* reason, void*) {
  // Transport errors are retried by librdkafka; only fatal ones need the user's attention,
  // and those surface through the calls that hit them.
  if (error == RD_KAFKA_RESP_ERR__FATAL) std::cerr << "processor: librdkafka fatal error: " << reason << "\n";
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
  rd_kafka_conf_set_error_cb(conf.get(), error_callback);

  RdPtr<rd_kafka_t> client(rd_kafka_new(type, conf.get(), error, sizeof error));
  if (!client) throw StateError(ErrorKind::Kafka, std::string("cannot create ") + what + ": " + error);
  conf.release();  // rd_kafka_new() took it
  return client;
}

}  // namespace processor::kafka::internal
