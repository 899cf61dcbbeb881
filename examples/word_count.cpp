// word_count: the classic word count with StreamProcessor, exactly once.
//
//   word_count --bootstrap-servers localhost:9092 --input words --output word-counts
//              --application-id word-count --state-dir /var/lib/word-count
//
// Each input record is one word, as its key (the value is ignored). The input must be keyed by
// word because a word's count lives in the state of one input partition: Kafka's partitioner
// sends every record of a key to the same partition, so one task sees all of a word. Lines of
// text have to be split and re-keyed by word before this (Kafka Streams' groupBy does it with a
// repartition topic).
//
// For every word, the function below adds one to the word's count in the store "counts" and
// sends (word, count) to the output topic. The store is local (RocksDB, under --state-dir) and
// backed by the compacted topic <application-id>-counts-changelog; output, changelog and input
// offsets commit in one Kafka transaction. Run more instances with the same application id to
// share the partitions. Stops on SIGINT or SIGTERM.

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <processor/streams.hpp>
#include <string>

namespace {

std::atomic<bool> stop_requested{false};

void request_stop(int) { stop_requested = true; }

}  // namespace

int main(int argc, char** argv) {
  using namespace processor;
  std::map<std::string, std::string> args;  // --name value
  for (int i = 1; i + 1 < argc; i += 2) args[argv[i]] = argv[i + 1];
  for (const char* required :
       {"--bootstrap-servers", "--input", "--output", "--application-id", "--state-dir"}) {
    if (args.count(required) == 0) {
      std::fprintf(stderr,
                   "usage: word_count --bootstrap-servers HOST:PORT --input TOPIC --output TOPIC "
                   "--application-id ID --state-dir DIR\n");
      return 2;
    }
  }
  const std::string output = args["--output"];

  streams::StreamProcessorOptions options;
  options.application_id = args["--application-id"];
  options.input_topic = args["--input"];
  options.stores = {"counts"};
  options.state_dir = args["--state-dir"];
  options.properties = {{"bootstrap.servers", args["--bootstrap-servers"]}};

  try {
    streams::StreamProcessor processor(
        options, [&](const kafka::ConsumedRecord& record, streams::RecordContext& context) {
          streams::PartitionStore& counts = context.store("counts");
          const auto current = counts.get(record.key);
          const std::string count = std::to_string((current ? std::stoll(*current) : 0) + 1);
          counts.put(record.key, count);
          context.output().send(output, record.key, count);
        });

    std::signal(SIGINT, request_stop);
    std::signal(SIGTERM, request_stop);
    auto last_report = std::chrono::steady_clock::now();
    while (!stop_requested) {
      processor.poll();
      if (std::chrono::steady_clock::now() - last_report >= std::chrono::seconds(1)) {
        const auto stats = processor.stats();
        std::printf("word_count: %llu records, %llu commits, %zu partitions active, %zu restoring\n",
                    static_cast<unsigned long long>(stats.records),
                    static_cast<unsigned long long>(stats.commits), processor.active_partitions().size(),
                    processor.restoring_partitions().size());
        std::fflush(stdout);
        last_report = std::chrono::steady_clock::now();
      }
    }
    processor.close();  // commits the open transaction and leaves the group
    std::printf("word_count: stopped after %llu records\n",
                static_cast<unsigned long long>(processor.stats().records));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "word_count: %s\n", error.what());
    return 1;
  }
}
