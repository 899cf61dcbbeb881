#pragma once
// processor's log sink: the one place where the library's own warnings and errors, and
// librdkafka's log lines, go.

#include <functional>
#include <string_view>

namespace processor {

// How serious a log record is. librdkafka's syslog levels map to it as 0-3 Error, 4 Warning,
// 5-6 Info, 7 Debug.
enum class LogLevel { Debug, Info, Warning, Error };

// Returns the enumerator's name, e.g. "Warning".
std::string_view to_string(LogLevel level) noexcept;

// Receives one log record. `component` says which part of the library wrote it (the whole list;
// names are lower case with underscores):
//   "consumer"       KafkaConsumer and its client: starts, rebalances, automatic and revoke commits
//   "parallel"       ParallelConsumer: its workers, retries, dead letters, drains
//   "streams"        StreamProcessor: changelog topics, restores, transactions, rewinds
//   "offset_manager" OffsetManager: automatic commits sent asynchronously that failed
//   "offset_store"   KafkaOffsetStore: asynchronous commit callbacks
//   "acks"           per-record acknowledgement metadata (spills, OffsetManager::acked_after_restart)
//   "producer"       TransactionalProducer
//   "rocksdb"        RocksDbStateBackend
//   "lag_monitor"    LagMonitor (processor::monitor): describes and offset reads that failed
//   "rdkafka"        librdkafka's own log lines and fatal errors, from every client the library
//                    creates; the message is "<client name> <facility>: <line>", e.g.
//                    "rdkafka#consumer-1 CONFWARN: [thrd:app]: Configuration property ..."
// `message` is one line without a trailing newline. Both views are valid only during the call.
//
// The sink is called from any thread, librdkafka's internal threads included, possibly from
// several at once: it must be thread-safe. It must not throw (an exception is caught and the
// record dropped) and must not call into processor or librdkafka (it may run inside their
// callbacks).
using LogSink = std::function<void(LogLevel level, std::string_view component, std::string_view message)>;

// Sends every later record at or above log_level() to `sink`; an empty `sink` restores the
// default, which writes each record to stderr as one line
// "processor [<component>] <level>: <message>". A record being delivered while the sink is
// replaced may still reach the previous sink, which stays alive until that call returns.
// Safe to call from any thread at any time, but not from inside a sink.
void set_log_sink(LogSink sink);

// Drops records below `minimum` before they are formatted or reach the sink. librdkafka filters
// its own lines first, by its `log_level` property (default 6, Info) and its `debug` property
// (contexts to log at Debug): to receive `debug` lines, also set LogLevel::Debug here.
// Default: LogLevel::Info (the library itself writes Warning and Error only).
// Safe to call from any thread at any time.
void set_log_level(LogLevel minimum) noexcept;
LogLevel log_level() noexcept;

}  // namespace processor
