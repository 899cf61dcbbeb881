#pragma once
// The per-key counting function of the StreamProcessor fault and scale-out tests: the count in
// store 0, and one output record per input record, under its key, with the value
// "<input partition>:<input offset>:<new count>", to the input's partition number, so that a
// reader can tell each input record's result apart.

#include <string>

#include "processor/streams.hpp"

namespace processor::testing {

inline streams::RecordFunction count_per_key(std::string output) {
  return [output = std::move(output)](const kafka::ConsumedRecord& record, streams::RecordContext& context) {
    streams::PartitionStore& counts = context.store(std::size_t{0});
    const auto current = counts.get(record.key);
    const long long next = (current ? std::stoll(*current) : 0) + 1;
    counts.put(record.key, std::to_string(next));
    context.output().send(
        output, record.key,
        std::to_string(record.partition) + ":" + std::to_string(record.offset) + ":" + std::to_string(next),
        record.partition);
  };
}

}  // namespace processor::testing
