// Fuzz target: a reference to spilled acknowledgement metadata (kafka/acks/ack_reference.hpp),
// followed by OffsetManager::acked_after_restart() into the state backend.
//
// Input: u8 flags, u16 (little-endian) length of the metadata, the metadata (commit metadata
// text), then the rest: the value under the partition's spill key in the state backend.
//   flags bit 0 (kReferToRecord): the metadata is replaced by the reference to the value, so
//     that the fuzzer gets past the checksum into the spilled metadata.
//   flags bit 1 (kNoRecord): nothing is stored under the spill key.
//   flags bit 2 (kNoBackend): the manager has no state backend (the store keeps its own).
//   flags bit 3 (kOtherOffset): the committed offset is not the spilled metadata's.
// Contract: parse_ack_reference() accepts exactly the text format_ack_reference() writes (its
// result formats back to the input). acked_after_restart() never throws for what the metadata
// or the spilled value hold; it returns a set exactly when the metadata is inline metadata of
// the committed offset, or a reference whose value is present, matches (length and CRC32C) and
// decodes to metadata of the committed offset; that set is what decode_metadata() gives; every
// nullopt for non-empty metadata counts once in OffsetStats::ack_metadata_ignored.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "fuzz_contract.hpp"
#include "kafka/acks/ack_reference.hpp"
#include "processor/kafka/offset_manager.hpp"
#include "processor/kafka/partition_acks.hpp"
#include "processor/kafka/state_backend_offset_store.hpp"
#include "processor/state/memory_state_backend.hpp"

namespace {

using namespace processor;
using namespace processor::kafka;
using fuzz::require;

constexpr std::uint8_t kReferToRecord = 1 << 0;
constexpr std::uint8_t kNoRecord = 1 << 1;
constexpr std::uint8_t kNoBackend = 1 << 2;
constexpr std::uint8_t kOtherOffset = 1 << 3;

std::optional<AckedSet> decoded(std::string_view metadata) {
  try {
    return PartitionAcks::decode_metadata(metadata);
  } catch (const StateError& error) {
    require(error.kind() == ErrorKind::Corruption, "decode_metadata() threw another kind than Corruption");
    return std::nullopt;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::silence_library_log();
  fuzz::InputReader input(data, size);
  const std::uint8_t flags = input.byte();
  const std::uint16_t length = static_cast<std::uint16_t>(input.byte() | (input.byte() << 8));
  std::string metadata(input.take(length));
  const std::string spilled(input.rest());
  if (flags & kReferToRecord) metadata = internal::format_ack_reference(spilled);

  const auto reference = internal::parse_ack_reference(metadata);
  if (reference) {
    require(reference->length > 0, "parsed a reference of length 0");
    require(internal::format_ack_reference(*reference) == metadata,
            "parsed a reference that formats to other text");
    require(internal::is_ack_reference(metadata), "parsed a reference that is_ack_reference() denies");
  }
  require(!internal::is_ack_reference(metadata) || !decoded(metadata),
          "text that claims to be a reference decodes as inline metadata");

  // What a correct reader finds: the inline metadata, or the value the reference names.
  const bool has_backend = !(flags & kNoBackend);
  const bool has_record = has_backend && !(flags & kNoRecord);
  std::optional<AckedSet> expected;
  if (!internal::is_ack_reference(metadata)) {
    if (!metadata.empty()) expected = decoded(metadata);
  } else if (reference && has_record && internal::matches_ack_reference(*reference, spilled)) {
    expected = decoded(spilled);
  }
  OffsetInfo stored(expected ? expected->committable : 0);
  if (expected && (flags & kOtherOffset))
    stored.offset = expected->committable == 0 ? 1 : expected->committable - 1;
  if (expected && stored.offset != expected->committable) expected.reset();
  stored.metadata = metadata;

  auto store_backend = std::make_shared<state::MemoryStateBackend>();
  std::shared_ptr<state::StateBackend> backend = has_backend ? store_backend : nullptr;
  auto store = std::make_shared<StateBackendOffsetStore>(store_backend);
  if (has_record)
    store_backend->put(internal::ack_spill_key("acks:", "g", TopicPartition("orders", 0)), spilled);
  store->store_offset("g", TopicPartition("orders", 0), stored);
  OffsetManager manager("g", backend, store, OffsetCommitStrategy::manual());
  manager.restore();

  std::optional<AckedSet> acked;
  try {
    acked = manager.acked_after_restart("orders", 0);
  } catch (const std::exception& error) {
    fuzz::violation(std::string("acked_after_restart() threw for what the metadata holds: ") + error.what());
  }
  require(acked.has_value() == expected.has_value(),
          acked ? "acked_after_restart() trusted metadata it should have ignored"
                : "acked_after_restart() ignored metadata it should have trusted");
  if (acked)
    require(*acked == *expected, "acked_after_restart() returned another set than the metadata holds");
  const std::uint64_t ignored = manager.stats().ack_metadata_ignored;
  require(ignored == (!acked && !metadata.empty() ? 1u : 0u),
          "ack_metadata_ignored does not count this one ignore");
  return 0;
}
