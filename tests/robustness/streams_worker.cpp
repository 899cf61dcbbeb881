// One member of the exactly-once scale-out test (streams_scaleout_test.cpp): a StreamProcessor
// that counts records per key in a store and produces, for every input record, one output record
// "<input partition>:<input offset>:<new count>" under the same key.
//
//   streams_worker --bootstrap B --application A --input T --output O --state-dir DIR
//                  [--assignment range|cooperative-sticky|consumer] [--guarantee exactly_once|at_least_once]
//                  [--commit-interval-ms N] [--instance-id ID] [--standby-replicas N]
//                  [--dead-letter-topic DLQ [--kill-marker FILE]]
//
// With --dead-letter-topic, a record whose value starts with "bad" makes the function throw; the
// failure policy dead-letters it to DLQ after three tries. With --kill-marker too, the worker
// SIGKILLs itself in the record after the first such record it dead-letters (the dead letter is
// then in the open transaction, not committed) unless FILE exists, which it creates first.
//
// SIGTERM stops the loop; the worker then commits, leaves the group and exits 0 (a clean
// scale-down). Errors go to stderr, exit 1. It prints "started" on stdout once the processor is
// open, then every 200 ms "records R commits C aborts A active N restoring M standby S promoted P
// restored X fenced F" (the test kills a worker while its records count grows).

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <string>

#include "counting_function.hpp"
#include "processor/log.hpp"
#include "processor/streams.hpp"

namespace {

volatile std::sig_atomic_t g_stop = 0;
extern "C" void on_sigterm(int) { g_stop = 1; }

std::map<std::string, std::string> parse(int argc, char** argv) {
  std::map<std::string, std::string> args;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string name = argv[i];
    if (name.rfind("--", 0) != 0) throw std::invalid_argument("unexpected argument " + name);
    args[name.substr(2)] = argv[i + 1];
  }
  for (const char* required : {"bootstrap", "application", "input", "output", "state-dir"}) {
    if (args.count(required) == 0) throw std::invalid_argument(std::string("missing --") + required);
  }
  return args;
}

// Throws for records whose value starts with "bad"; see the header for `kill_marker`.
processor::streams::RecordFunction dead_lettering(processor::streams::RecordFunction count, int max_attempts,
                                                  std::string kill_marker) {
  auto tries = std::make_shared<std::map<std::pair<std::int32_t, std::int64_t>, int>>();
  return [=](const processor::kafka::ConsumedRecord& record, processor::streams::RecordContext& context) {
    if (record.value.rfind("bad", 0) == 0) {
      ++(*tries)[{record.partition, record.offset}];
      throw std::runtime_error("bad record " + std::string(record.value));
    }
    const auto before = tries->find({record.partition, record.offset - 1});
    if (!kill_marker.empty() && before != tries->end() && before->second >= max_attempts &&
        !std::filesystem::exists(kill_marker)) {
      std::ofstream(kill_marker) << "killed after dead-lettering offset " << record.offset - 1 << "\n";
      std::cout << "killing myself after the dead letter of " << record.partition << "@" << record.offset - 1
                << std::endl;
      std::raise(SIGKILL);
    }
    count(record, context);
  };
}

}  // namespace

int main(int argc, char** argv) {
  using namespace processor::streams;
  try {
    const auto args = parse(argc, argv);
    std::signal(SIGTERM, on_sigterm);
    auto value = [&](const char* name, const char* fallback) {
      const auto it = args.find(name);
      return it == args.end() ? std::string(fallback) : it->second;
    };
    // Info: assignments, restorations and start offsets per partition, to read a failed run by.
    processor::set_log_level(std::getenv("STREAMS_WORKER_DEBUG") != nullptr ? processor::LogLevel::Debug
                                                                            : processor::LogLevel::Info);

    StreamProcessorOptions options;
    options.application_id = args.at("application");
    options.input_topic = args.at("input");
    options.stores = {"counts"};
    options.state_dir = args.at("state-dir");
    options.instance_id = value("instance-id", "");
    options.num_standby_replicas = std::stoi(value("standby-replicas", "0"));
    options.guarantee = value("guarantee", "exactly_once") == "at_least_once"
                            ? ProcessingGuarantee::AtLeastOnce
                            : ProcessingGuarantee::ExactlyOnce;
    options.commit_interval = std::chrono::milliseconds(std::stoll(value("commit-interval-ms", "100")));
    options.poll_timeout = std::chrono::milliseconds(50);
    options.transaction_timeout = std::chrono::seconds(10);
    const std::string assignment = value("assignment", "range");
    if (assignment == "consumer") {
      // Kafka 4's consumer group protocol: sessions and assignors are the broker's.
      options.properties = {
          {"bootstrap.servers", args.at("bootstrap")}, {"group.protocol", "consumer"}, {"log_level", "3"}};
    } else {
      options.properties = {{"bootstrap.servers", args.at("bootstrap")},
                            {"partition.assignment.strategy", assignment},
                            {"session.timeout.ms", "3000"},
                            {"heartbeat.interval.ms", "500"},
                            {"log_level", "3"}};
    }
    RecordFunction function = processor::testing::count_per_key(args.at("output"));
    if (args.count("dead-letter-topic") != 0) {
      options.failure.action = processor::kafka::FailureAction::DeadLetter;
      options.failure.dead_letter_topic = args.at("dead-letter-topic");
      options.failure.retry = {3, std::chrono::milliseconds(10), std::chrono::milliseconds(50)};
      function =
          dead_lettering(std::move(function), options.failure.retry.max_attempts, value("kill-marker", ""));
    }
    StreamProcessor processor(options, function);
    std::cout << "started " << processor.transactional_id() << std::endl;
    auto last_report = std::chrono::steady_clock::now();
    while (g_stop == 0) {
      processor.poll();
      if (std::chrono::steady_clock::now() - last_report > std::chrono::milliseconds(200)) {
        last_report = std::chrono::steady_clock::now();
        const auto stats = processor.stats();
        std::cout << "records " << stats.records << " commits " << stats.commits << " aborts " << stats.aborts
                  << " active " << processor.active_partitions().size() << " restoring "
                  << processor.restoring_partitions().size() << " standby " << stats.standby_partitions
                  << " promoted " << stats.standbys_promoted << " restored " << stats.restored_records
                  << " fenced " << stats.departed_fenced << " replaced " << stats.producers_replaced
                  << std::endl;
      }
    }
    processor.close();
    std::cout << "stopped" << std::endl;
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "streams_worker: " << error.what() << std::endl;
    return 1;
  }
}
