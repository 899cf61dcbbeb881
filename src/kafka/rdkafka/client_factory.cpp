#include "kafka/rdkafka/client_factory.hpp"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <unordered_map>
#include <unordered_set>

#include "common/log_internal.hpp"
#include "kafka/rdkafka/errors.hpp"
#include "processor/detail/mutex.hpp"
#include "processor/error.hpp"

namespace processor::kafka::internal {
namespace {

// connection_refusal()'s memory: the last refusal of each client, and when it came.
struct Refusal {
  int code;
  std::string text;
  std::chrono::steady_clock::time_point when;
};
struct Refusals {
  detail::Mutex mutex;
  std::unordered_map<const rd_kafka_t*, Refusal> by_client PROCESSOR_GUARDED_BY(mutex);
};
// Never destroyed: a client destroyed during exit (by a static destructor) still forgets its own.
Refusals& refusals() {
  static Refusals* const state = new Refusals();
  return *state;
}

// The clients whose close_consumer() ran out of time: destroy_client() destroys them without the
// consumer's close. Never destroyed, as refusals().
struct AbandonedCloses {
  detail::Mutex mutex;
  std::unordered_set<const rd_kafka_t*> clients PROCESSOR_GUARDED_BY(mutex);
};
AbandonedCloses& abandoned_closes() {
  static AbandonedCloses* const state = new AbandonedCloses();
  return *state;
}

// Remembers that close_consumer() gave up on `rk`'s close.
void mark_abandoned_close(const rd_kafka_t* rk) {
  AbandonedCloses& state = abandoned_closes();
  const detail::MutexLock lock(state.mutex);
  state.clients.insert(rk);
}

// Whether close_consumer() gave up on `rk`'s close, forgetting it.
bool take_abandoned_close(const rd_kafka_t* rk) noexcept {
  AbandonedCloses& state = abandoned_closes();
  const detail::MutexLock lock(state.mutex);
  return state.clients.erase(rk) > 0;
}

// Whether an error of the error callback says that the broker refused this client for good, as
// opposed to a connection that broke (a broker restarting mid-handshake also fails a handshake).
// A host-name mismatch can come as a transport error ("... certificate verify failed (after 17ms
// in state SSL_HANDSHAKE)"), then as _SSL: both are the certificate's refusal, kept as _SSL.
std::optional<int> refusal_code(int error, std::string_view reason) {
  const auto says = [&](std::string_view words) { return reason.find(words) != std::string_view::npos; };
  if (error == RD_KAFKA_RESP_ERR__AUTHENTICATION && !says("Disconnected") && !says("timed out")) return error;
  if (error == RD_KAFKA_RESP_ERR__SSL && (says("certificate") || says("verify") || says("alert")))
    return error;
  if (error == RD_KAFKA_RESP_ERR__TRANSPORT && says("certificate verify failed"))
    return RD_KAFKA_RESP_ERR__SSL;
  return std::nullopt;
}

void error_callback(rd_kafka_t* rk, int error, const char* reason, void*) {
  // Transport errors are retried by librdkafka; only fatal ones need the user's attention,
  // and those surface through the calls that hit them. Refusals are kept for the requests that
  // would otherwise time out behind them (connection_refusal).
  if (error == RD_KAFKA_RESP_ERR__FATAL) {
    processor::internal::log(LogLevel::Error, "rdkafka", "librdkafka fatal error: ", reason);
  }
  const std::string_view text = reason != nullptr ? reason : "";
  if (const auto code = refusal_code(error, text)) {
    Refusals& state = refusals();
    const detail::MutexLock lock(state.mutex);
    state.by_client.insert_or_assign(rk, Refusal{*code, std::string(text), std::chrono::steady_clock::now()});
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

// Which clients each librdkafka property applies to: 'C' consumers only, 'P' producers only,
// '*' both. Read once from librdkafka's own table (rd_kafka_conf_properties_show, the source of
// its CONFIGURATION.md), so it follows the librdkafka the library runs with.
const std::map<std::string, char, std::less<>>& property_scopes() {
  static const std::map<std::string, char, std::less<>> scopes = [] {
    std::map<std::string, char, std::less<>> table;
    char* text = nullptr;
    std::size_t size = 0;
    if (FILE* out = open_memstream(&text, &size)) {
      rd_kafka_conf_properties_show(out);
      std::fclose(out);
    }
    if (text == nullptr) return table;
    std::istringstream lines(std::string(text, size));
    std::free(text);
    // "<name padded> |  C  | <range> | ...": the name, then the scope.
    const auto trimmed = [](const std::string& field) {
      const auto first = field.find_first_not_of(' ');
      return first == std::string::npos ? std::string()
                                        : field.substr(first, field.find_last_not_of(' ') - first + 1);
    };
    for (std::string line; std::getline(lines, line);) {
      const auto bar = line.find('|');
      if (bar == std::string::npos || line.size() < bar + 2) continue;
      const auto next = line.find('|', bar + 1);
      if (next == std::string::npos) continue;
      const std::string name = trimmed(line.substr(0, bar));
      const std::string scope = trimmed(line.substr(bar + 1, next - bar - 1));
      if (scope == "C" || scope == "P" || scope == "*") table.emplace(name, scope[0]);
    }
    return table;
  }();
  return scopes;
}

}  // namespace

std::optional<StateError> connection_refusal(const rd_kafka_t* rk) {
  Refusals& state = refusals();
  const detail::MutexLock lock(state.mutex);
  const auto it = state.by_client.find(rk);
  if (it == state.by_client.end() ||
      std::chrono::steady_clock::now() - it->second.when > std::chrono::seconds(10)) {
    return std::nullopt;
  }
  return StateError(ErrorKind::Kafka, it->second.text, it->second.code, false);
}

void throw_if_refused(const rd_kafka_t* rk) {
  if (auto refusal = connection_refusal(rk)) throw std::move(*refusal);
}

rd_kafka_resp_err_t close_consumer(rd_kafka_t* rk, const ClientCallbacks& callbacks,
                                   std::chrono::milliseconds timeout) noexcept {
  const RdPtr<rd_kafka_queue_t> queue(rd_kafka_queue_new(rk));
  // librdkafka forwards the group's queue (its rebalances) to `queue` and starts terminating the
  // group handler; rd_kafka_consumer_closed() says when it has.
  if (rd_kafka_error_t* refused = rd_kafka_consumer_close_queue(rk, queue.get())) {
    const rd_kafka_resp_err_t code =
        rd_kafka_error_is_fatal(refused) ? RD_KAFKA_RESP_ERR__FATAL : rd_kafka_error_code(refused);
    rd_kafka_error_destroy(refused);
    return code;
  }
  // The time the rebalance callback takes (the revoke's commit, with its own retries and
  // deadline) does not count: `timeout` bounds the wait for librdkafka only.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (rd_kafka_consumer_closed(rk) == 0) {
    if (std::chrono::steady_clock::now() >= deadline) {
      mark_abandoned_close(rk);
      processor::internal::log(LogLevel::Error, "rdkafka", "closing the consumer has not finished in ",
                               std::chrono::duration_cast<std::chrono::seconds>(timeout).count(),
                               " s (librdkafka's group handler has not terminated): given up; the group "
                               "drops the member at its session time-out");
      return RD_KAFKA_RESP_ERR__TIMED_OUT;
    }
    // Fetched records and errors that reach the queue now are dropped, as rd_kafka_consumer_close()
    // drops them; librdkafka's own operations are served inside the poll.
    const RdPtr<rd_kafka_event_t> event(rd_kafka_queue_poll(queue.get(), 100));
    if (event && rd_kafka_event_type(event.get()) == RD_KAFKA_EVENT_REBALANCE) {
      rd_kafka_topic_partition_list_t* partitions = rd_kafka_event_topic_partition_list(event.get());
      if (callbacks.rebalance != nullptr) {
        const auto called = std::chrono::steady_clock::now();
        callbacks.rebalance(rk, rd_kafka_event_error(event.get()), partitions, callbacks.opaque);
        deadline += std::chrono::steady_clock::now() - called;
      } else {
        rd_kafka_assign(rk, nullptr);  // what rd_kafka_consumer_close() does without a callback
      }
    }
  }
  return RD_KAFKA_RESP_ERR_NO_ERROR;
}

void destroy_client(rd_kafka_t* rk) noexcept {
  if (!has_fatal_error(rk) && !take_abandoned_close(rk)) {
    rd_kafka_destroy(rk);
    forget_connection_refusal(rk);
    return;
  }
  constexpr auto kPatience = std::chrono::seconds(10);
  try {
    auto destroyed = std::make_shared<std::promise<void>>();
    std::future<void> done = destroyed->get_future();
    std::thread([rk, destroyed] {
      rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
      destroyed->set_value();
    }).detach();
    if (done.wait_for(kPatience) != std::future_status::ready) {
      processor::internal::log(
          LogLevel::Error, "rdkafka",
          "destroying a client after its fatal error or a close given up has not finished in 10 s "
          "(librdkafka's group handler never terminates): left behind until the "
          "process exits");
    }
  } catch (const std::exception&) {  // no thread: destroyed here, however long it takes
    rd_kafka_destroy_flags(rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
  }
  forget_connection_refusal(rk);
}

void forget_connection_refusal(const rd_kafka_t* rk) noexcept {
  Refusals& state = refusals();
  const detail::MutexLock lock(state.mutex);
  state.by_client.erase(rk);
}

bool is_librdkafka_property(std::string_view name) { return property_scopes().count(name) > 0; }

bool is_secret_property(std::string_view name) noexcept {
  for (std::string_view word : {"password", "secret", "passphrase", "key.pem", "ssl_key", "private.key",
                                "jaas", "sasl.oauthbearer.config"}) {
    if (name.find(word) != std::string_view::npos) return true;
  }
  return false;
}

KafkaProperties properties_for(rd_kafka_type_t type, const KafkaProperties& shared,
                               const KafkaProperties& own) {
  const char other = type == RD_KAFKA_PRODUCER ? 'C' : 'P';
  KafkaProperties properties;
  for (const auto& [name, value] : shared) {
    const auto scope = property_scopes().find(name);
    // A name librdkafka does not know goes on, for librdkafka to refuse with its message.
    if (scope == property_scopes().end() || scope->second != other) properties.emplace(name, value);
  }
  for (const auto& [name, value] : own) properties.insert_or_assign(name, value);
  return properties;
}

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
      // librdkafka's reason may quote the value: a secret's is never shown.
      throw StateError(ErrorKind::InvalidArgument,
                       is_secret_property(name)
                           ? "invalid Kafka property '" + name + "' (its value is a secret, not shown)"
                           : "invalid Kafka property '" + name + "' = '" + value + "': " + error);
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
