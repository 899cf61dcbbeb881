// Writes the fuzz targets' seed corpora (corpus/<target>/) and the inputs of defects fixed
// before the targets existed (regressions/<target>/), with the library's own encoders wherever
// the input is valid, framed as each target reads its input (see the target's opening comment).
//
// Usage: fuzz_make_seed_corpus <tests/fuzz directory>
// Deterministic: the same library writes the same files, so that a regeneration shows in git
// only what changed.

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "encoding/base64.hpp"
#include "encoding/epoch_micros.hpp"
#include "encoding/fixed.hpp"
#include "encoding/varint.hpp"
#include "fuzz_contract.hpp"
#include "kafka/acks/ack_metadata.hpp"
#include "kafka/acks/ack_reference.hpp"
#include "kafka/checkpoint/checkpoint_record.hpp"
#include "kafka/store/stored_offset_format.hpp"
#include "streams/changelog_format.hpp"
#include "streams/state_keys.hpp"

namespace {

using namespace processor;
using namespace processor::kafka;
namespace fs = std::filesystem;

constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMicros = 1'764'000'000'123'456;  // a fixed time: the files are reproducible
const auto kTime = *encoding::from_epoch_micros(kMicros);

fs::path g_root;
std::size_t g_written = 0;

void write(const std::string& folder, const std::string& target, const std::string& name,
           const std::string& bytes) {
  const fs::path dir = g_root / folder / target;
  fs::create_directories(dir);
  std::ofstream(dir / name, std::ios::binary | std::ios::trunc) << bytes;
  ++g_written;
}

std::string without_crc(const std::string& sealed) { return sealed.substr(0, sealed.size() - 4); }

// ---- fuzz_stored_offset: u8 flags, u8 key length, key suffix, value ----

std::string stored_offset_input(std::uint8_t flags, const std::string& key, const std::string& value) {
  std::string out;
  out.push_back(static_cast<char>(flags));
  out.push_back(static_cast<char>(key.size()));
  return out + key + value;
}

// A stored offset, both raw (with its CRC) and sealed by the harness (without it).
void stored_offset_seed(const std::string& name, const std::string& key, const OffsetInfo& info) {
  const std::string value = internal::encode_offset(info);
  write("corpus", "fuzz_stored_offset", name, stored_offset_input(0, key, value));
  write("corpus", "fuzz_stored_offset", name + "-sealed",
        stored_offset_input(fuzz::kSeal, key, without_crc(value)));
}

// A value as the format lays it out, whatever its fields hold (sealed by the harness).
std::string offset_body(std::uint8_t flags, std::int64_t offset, std::int64_t micros,
                        std::int64_t high_watermark) {
  std::string out;
  out.push_back(static_cast<char>(internal::kOffsetCodecVersion));
  out.push_back(static_cast<char>(flags));
  encoding::put_le<std::int64_t>(out, offset);
  encoding::put_le<std::int64_t>(out, micros);
  if (flags & 1) encoding::put_le<std::int64_t>(out, high_watermark);
  return out;
}

OffsetInfo offset_info(std::int64_t offset, std::optional<std::int64_t> high_watermark = std::nullopt,
                       std::optional<std::string> metadata = std::nullopt,
                       std::optional<std::int32_t> leader_epoch = std::nullopt) {
  OffsetInfo info;
  info.offset = offset;
  info.high_watermark = high_watermark;
  info.metadata = std::move(metadata);
  info.leader_epoch = leader_epoch;
  info.last_updated = kTime;
  return info;
}

// ---- acknowledgement metadata, from PartitionAcks and by hand ----

// A tracker at `base` that tracked [base, end) and acknowledged the offsets `acked` says.
template <class Acked>
std::string tracker_metadata(std::int64_t base, std::int64_t end, Acked&& acked) {
  PartitionAcksOptions options;
  options.max_outstanding = 1'000'000;
  PartitionAcks acks(base, options);
  std::int64_t tracked_end = base;
  while (tracked_end < end && acks.try_track(tracked_end)) ++tracked_end;
  for (std::int64_t offset = base; offset < tracked_end; ++offset) {
    if (acked(offset)) acks.ack(offset);
  }
  return acks.encode_metadata();
}

std::string run_lengths_binary(std::int64_t committable,
                               const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs) {
  std::string out;
  internal::put_ack_metadata_header(out, committable, internal::kAckRunLengths);
  for (const auto& [unacked, acked] : runs) {
    encoding::put_varint(out, unacked);
    encoding::put_varint(out, acked);
  }
  return out;
}

std::string bitset_binary(std::int64_t committable,
                          const std::string& bits) {  // bits[i] == '1': acknowledged
  std::string out;
  internal::put_ack_metadata_header(out, committable, internal::kAckBitset);
  encoding::put_varint(out, bits.size());
  std::string bytes((bits.size() + 7) / 8, '\0');
  for (std::size_t i = 0; i < bits.size(); ++i) {
    if (bits[i] == '1') bytes[i / 8] = static_cast<char>(bytes[i / 8] | (1 << (i % 8)));
  }
  return out + bytes;
}

// ---- fuzz_checkpoint_record: u8 flags, record ----

constexpr std::uint8_t kOlder = 1 << 1;
constexpr std::uint8_t kIdFromRecord = 1 << 2;
constexpr std::uint8_t kTrustStore = 1 << 3;
constexpr std::uint8_t kFail = 2 << 3;
constexpr std::uint8_t kOnCheckpoint = 1 << 5;

struct RawEntry {
  std::string topic;
  std::int32_t partition;
  std::int64_t offset;
};

// A record as the format lays it out, whatever its fields hold, without its CRC.
std::string checkpoint_body(std::uint64_t id, std::int64_t micros, const std::vector<RawEntry>& entries) {
  std::string out;
  out.push_back(static_cast<char>(internal::kCheckpointVersion));
  encoding::put_le<std::uint64_t>(out, id);
  encoding::put_le<std::int64_t>(out, micros);
  encoding::put_le<std::uint32_t>(out, static_cast<std::uint32_t>(entries.size()));
  for (const auto& [topic, partition, offset] : entries) {
    encoding::put_le<std::uint16_t>(out, static_cast<std::uint16_t>(topic.size()));
    out += topic;
    encoding::put_le<std::int32_t>(out, partition);
    encoding::put_le<std::int64_t>(out, offset);
  }
  return out;
}

// Version 2 as the format lays it out: each entry with its acknowledgement metadata (binary,
// before base64; empty for none), without the CRC.
std::string checkpoint_body_with_acks(std::uint64_t id,
                                      const std::vector<std::pair<RawEntry, std::string>>& entries) {
  std::string out;
  out.push_back(static_cast<char>(internal::kCheckpointVersionWithAcks));
  encoding::put_le<std::uint64_t>(out, id);
  encoding::put_le<std::int64_t>(out, kMicros);
  encoding::put_le<std::uint32_t>(out, static_cast<std::uint32_t>(entries.size()));
  for (const auto& [entry, acked] : entries) {
    encoding::put_le<std::uint16_t>(out, static_cast<std::uint16_t>(entry.topic.size()));
    out += entry.topic;
    encoding::put_le<std::int32_t>(out, entry.partition);
    encoding::put_le<std::int64_t>(out, entry.offset);
    encoding::put_le<std::uint32_t>(out, static_cast<std::uint32_t>(acked.size()));
    out += acked;
  }
  return out;
}

std::string with_flags(std::uint8_t flags, const std::string& record) {
  return std::string(1, static_cast<char>(flags)) + record;
}

// A checkpoint encoded by the library, raw and sealed by the harness.
void checkpoint_seed(const std::string& name, std::uint8_t flags, const CheckpointInfo& checkpoint) {
  const std::string record = internal::encode_checkpoint(checkpoint);
  write("corpus", "fuzz_checkpoint_record", name, with_flags(flags, record));
  write("corpus", "fuzz_checkpoint_record", name + "-sealed",
        with_flags(flags | fuzz::kSeal, without_crc(record)));
}

CheckpointInfo checkpoint_of(std::uint64_t id, std::vector<RawEntry> entries) {
  CheckpointInfo checkpoint;
  checkpoint.id = id;
  checkpoint.created_at = kTime;
  for (auto& [topic, partition, offset] : entries)
    checkpoint.offsets.emplace(TopicPartition(topic, partition), offset);
  return checkpoint;
}

void stored_offset_corpus() {
  const std::string ack_metadata = tracker_metadata(42, 60, [](std::int64_t offset) { return offset > 50; });
  stored_offset_seed("offset-only", "orders:3", offset_info(42));
  stored_offset_seed("high-watermark", "orders:3", offset_info(42, 1000));
  stored_offset_seed("high-watermark-below-offset", "orders:3", offset_info(42, 7));
  stored_offset_seed("ack-metadata", "orders:3", offset_info(42, 1000, ack_metadata));
  stored_offset_seed("ack-metadata-of-another-offset", "orders:3", offset_info(41, 1000, ack_metadata));
  stored_offset_seed("text-metadata", "orders:3", offset_info(42, std::nullopt, "not acknowledgements"));
  stored_offset_seed("empty-metadata", "orders:3", offset_info(42, std::nullopt, ""));
  stored_offset_seed("leader-epoch", "orders:3", offset_info(42, std::nullopt, std::nullopt, 17));
  stored_offset_seed("every-field", "orders:3", offset_info(42, 1000, ack_metadata, 17));
  stored_offset_seed("zeros", "t:0", offset_info(0, 0, std::string(), 0));
  stored_offset_seed(
      "largest", "a.b-c_D:2147483647",
      offset_info(kInt64Max, kInt64Max, std::string(4096, 'm'), std::numeric_limits<std::int32_t>::max()));
  stored_offset_seed("longest-topic", std::string(kMaxTopicLength, 'x') + ":1", offset_info(1, 2));
  stored_offset_seed("same-partition-as-the-manager", "base:0", offset_info(3, 9));
  stored_offset_seed("other-group", "x:orders:1", offset_info(42));
  stored_offset_seed("partition-with-leading-zero", "orders:03", offset_info(42));
  OffsetInfo earliest = offset_info(1);
  earliest.last_updated = std::chrono::system_clock::time_point::min();
  stored_offset_seed("earliest-time", "orders:3", earliest);
  OffsetInfo latest = offset_info(1);
  latest.last_updated = std::chrono::system_clock::time_point::max();
  stored_offset_seed("latest-time", "orders:3", latest);
  write("corpus", "fuzz_stored_offset", "too-short", stored_offset_input(0, "orders:3", "abc"));

  // Defects fixed before the fuzz targets: each was read as a value (or UB) instead of Corruption.
  const auto regression = [](const std::string& name, const std::string& key, const std::string& body) {
    write("regressions", "fuzz_stored_offset", name, stored_offset_input(fuzz::kSeal, key, body));
  };
  regression("time-overflow", "orders:3", offset_body(0, 1, kInt64Max, 0));
  regression("time-underflow", "orders:3", offset_body(0, 1, std::numeric_limits<std::int64_t>::min(), 0));
  regression("negative-high-watermark", "orders:3", offset_body(1, 1, kMicros, -5));
  regression("negative-offset", "orders:3", offset_body(0, -1, kMicros, 0));
  regression("illegal-topic", "bad topic:0", offset_body(0, 1, kMicros, 0));
  regression("dot-dot-topic", "..:0", offset_body(0, 1, kMicros, 0));
  regression("negative-partition", "orders:-1", offset_body(0, 1, kMicros, 0));
  // total_lag() summed high watermarks past INT64_MAX: two partitions, each lagging ~INT64_MAX.
  regression("lag-near-int64-max", "orders:3", offset_body(1, 0, kMicros, kInt64Max));
}

void checkpoint_corpus() {
  const std::uint8_t latest = kIdFromRecord;
  checkpoint_seed("empty", latest, checkpoint_of(2, {}));
  checkpoint_seed("store-equal", latest, checkpoint_of(2, {{"orders", 0, 10}}));
  checkpoint_seed("store-behind", latest, checkpoint_of(2, {{"orders", 0, 12}, {"orders", 1, 5}}));
  checkpoint_seed("store-ahead", latest | kOnCheckpoint, checkpoint_of(2, {{"orders", 0, 5}}));
  checkpoint_seed("moved-trust-store", latest | kTrustStore | kOnCheckpoint,
                  checkpoint_of(2, {{"orders", 0, 5}}));
  checkpoint_seed("moved-fail", latest | kFail | kOnCheckpoint, checkpoint_of(2, {{"orders", 0, 5}}));
  checkpoint_seed(
      "several-topics", latest,
      checkpoint_of(9, {{"orders", 0, 10}, {"payments", 3, 0}, {"a.b-c_D", 2147483647, kInt64Max}}));
  checkpoint_seed("longest-topic", latest, checkpoint_of(3, {{std::string(kMaxTopicLength, 'x'), 1, 2}}));
  checkpoint_seed("largest-id", latest,
                  checkpoint_of(std::numeric_limits<std::uint64_t>::max(), {{"orders", 0, 10}}));
  checkpoint_seed("id-not-the-keys", 0, checkpoint_of(7, {{"orders", 0, 10}}));
  std::vector<RawEntry> many;
  for (std::int32_t partition = 0; partition < 1000; ++partition)
    many.push_back({"t" + std::to_string(partition % 7), partition, partition * 3});
  checkpoint_seed("1000-partitions", latest, checkpoint_of(4, many));
  CheckpointInfo earliest = checkpoint_of(2, {{"orders", 0, 10}});
  earliest.created_at = std::chrono::system_clock::time_point::min();
  checkpoint_seed("earliest-time", latest, earliest);
  // Older retained checkpoints behind a valid latest one (orders:0 at 20, the store at 10).
  checkpoint_seed("older-explains-the-store", kOlder | kIdFromRecord, checkpoint_of(3, {{"orders", 0, 10}}));
  checkpoint_seed("older-does-not-explain", kOlder | kIdFromRecord, checkpoint_of(3, {{"orders", 0, 11}}));
  checkpoint_seed("older-lists-two-partitions", kOlder | kIdFromRecord,
                  checkpoint_of(2, {{"orders", 0, 10}, {"orders", 1, 11}}));
  checkpoint_seed("older-on-checkpoint", kOlder | kOnCheckpoint,
                  checkpoint_of(1, {{"orders", 0, 10}, {"other", 0, 1}}));
  write("corpus", "fuzz_checkpoint_record", "too-short", with_flags(latest, "abc"));
  // Version 2: acknowledged sets above the positions (runs, a bitset, a partition without).
  CheckpointInfo with_acks = checkpoint_of(6, {{"orders", 0, 10}, {"orders", 1, 5}, {"payments", 0, 100}});
  with_acks.acked.emplace(TopicPartition("orders", 0), AckedSet{10, {{12, 14}, {5000, 5000}}});
  with_acks.acked.emplace(TopicPartition("payments", 0), AckedSet{100, {{101, 101}, {103, 103}, {105, 110}}});
  checkpoint_seed("acknowledged-sets", latest, with_acks);
  CheckpointInfo older_with_acks = checkpoint_of(3, {{"orders", 0, 10}});
  older_with_acks.acked.emplace(TopicPartition("orders", 0), AckedSet{10, {{11, 11}}});
  checkpoint_seed("older-with-acknowledged-sets", kOlder | kIdFromRecord, older_with_acks);

  const auto regression = [](const std::string& name, std::uint8_t flags, const std::string& body) {
    write("regressions", "fuzz_checkpoint_record", name, with_flags(flags | fuzz::kSeal, body));
  };
  regression("time-overflow", latest, checkpoint_body(2, kInt64Max, {{"orders", 0, 10}}));
  regression("duplicate-partition", latest,
             checkpoint_body(2, kMicros, {{"orders", 0, 10}, {"orders", 0, 11}}));
  regression("illegal-topic", latest, checkpoint_body(2, kMicros, {{"bad topic", 0, 10}}));
  regression("negative-offset", latest, checkpoint_body(2, kMicros, {{"orders", 0, -1}}));
  regression("count-beyond-the-record", latest,
             checkpoint_body(2, kMicros, {}).replace(17, 4, "\xff\xff\xff\x7f"));
  regression("older-time-overflow", kOlder | kIdFromRecord,
             checkpoint_body(3, kInt64Max, {{"orders", 0, 10}}));
  regression("older-duplicate-partition", kOlder | kIdFromRecord,
             checkpoint_body(3, kMicros, {{"orders", 0, 10}, {"orders", 0, 10}}));
  // Version 2's acknowledgements must be of the partition's position, and not empty.
  regression("acknowledgements-of-another-position", latest,
             checkpoint_body_with_acks(
                 2, {{{"orders", 0, 10}, internal::encode_ack_metadata_binary(AckedSet{9, {{11, 11}}})}}));
  regression("empty-acknowledged-set", latest,
             checkpoint_body_with_acks(
                 2, {{{"orders", 0, 10}, internal::encode_ack_metadata_binary(AckedSet{10, {}})}}));
  regression("acknowledgements-not-metadata", latest,
             checkpoint_body_with_acks(2, {{{"orders", 0, 10}, "\x07junk"}}));
  regression("acknowledgements-length-beyond-the-record", latest,
             checkpoint_body_with_acks(2, {{{"orders", 0, 10}, ""}})
                 .replace(1 + 8 + 8 + 4 + 2 + 6 + 4 + 8, 4, "\xff\xff\xff\x7f"));
}

// ---- fuzz_ack_reference: u8 flags, u16 metadata length, metadata, spilled value ----

void ack_reference_corpus() {
  constexpr std::uint8_t kReferToRecord = 1 << 0, kNoRecord = 1 << 1, kNoBackend = 1 << 2,
                         kOtherOffset = 1 << 3;
  const auto seed = [](const std::string& name, std::uint8_t flags, const std::string& metadata,
                       const std::string& spilled) {
    std::string input(1, static_cast<char>(flags));
    encoding::put_le<std::uint16_t>(input, static_cast<std::uint16_t>(metadata.size()));
    write("corpus", "fuzz_ack_reference", name, input + metadata + spilled);
  };
  // Long metadata, as a commit spills it: one slow record below alternate acknowledgements.
  AckedSet long_set{1000, {}};
  for (std::int64_t offset = 1001; offset < 9000; offset += 2) long_set.acked.push_back({offset, offset});
  const std::string spilled = internal::encode_ack_metadata(long_set);
  const std::string reference = internal::format_ack_reference(spilled);
  const std::string short_metadata = internal::encode_ack_metadata(AckedSet{7, {{9, 12}}});
  seed("reference", 0, reference, spilled);
  seed("refers-to-the-record", kReferToRecord, "", spilled);
  seed("other-offset", kReferToRecord | kOtherOffset, "", spilled);
  seed("record-missing", kNoRecord, reference, "");
  seed("no-backend", kNoBackend, reference, spilled);
  seed("another-record", 0, reference, short_metadata);
  seed("record-not-metadata", kReferToRecord, "", "consumer-1 was here");
  seed("inline", 0, short_metadata, spilled);
  seed("inline-other-offset", kOtherOffset, short_metadata, "");
  seed("garbage", 0, "consumer-1 was here", "");
  seed("empty", 0, "", "");
  seed("leading-zero-length", 0, "@acks/v1:012:00000000", "");
  seed("uppercase-checksum", 0, "@acks/v1:12:0000000A", "");
  seed("unknown-version", 0, "@acks/v2:12:00000000", "");
  // Boundaries of the reference's parser (refused, never read as another reference).
  const auto regression = [](const std::string& name, const std::string& metadata, const std::string& value) {
    std::string input(1, '\0');
    encoding::put_le<std::uint16_t>(input, static_cast<std::uint16_t>(metadata.size()));
    write("regressions", "fuzz_ack_reference", name, input + metadata + value);
  };
  regression("length-beyond-64-bits", "@acks/v1:18446744073709551616:00000000", "");
  regression("reference-with-trailing-text", reference + " ", spilled);
  regression("length-zero", "@acks/v1:0:00000000", "");
}

void ack_metadata_corpus() {
  constexpr std::uint8_t kBinary = 1 << 0, kOtherOffset = 1 << 1, kAdopt = 1 << 2;
  const auto seed = [&](const std::string& name, const std::string& text) {
    write("corpus", "fuzz_ack_metadata", name, with_flags(0, text));
    write("corpus", "fuzz_ack_metadata", name + "-binary",
          with_flags(kBinary, encoding::base64_decode(text, "seed")));
  };
  seed("nothing-acknowledged", tracker_metadata(100, 110, [](std::int64_t) { return false; }));
  seed("run-lengths", tracker_metadata(100, 10'000, [](std::int64_t o) {
         return o == 5000 || o == 9000 || (o > 700 && o < 900);
       }));
  seed("bitset", tracker_metadata(100, 300, [](std::int64_t o) { return o % 2 == 1; }));
  seed("committable-zero", tracker_metadata(0, 5, [](std::int64_t o) { return o > 1; }));
  seed("near-the-largest-offset",
       tracker_metadata(kInt64Max - 100, kInt64Max, [](std::int64_t o) { return o % 3 == 0; }));
  seed("wide-window", tracker_metadata(0, 200'000, [](std::int64_t o) { return o == 199'999; }));
  // The encodings the writer would not pick for these sets: readers accept them.
  seed("run-lengths-where-a-bitset-is-smaller",
       encoding::base64_encode(run_lengths_binary(10, {{1, 1}, {1, 1}, {1, 1}, {1, 1}})));
  seed("bitset-where-run-lengths-are-smaller",
       encoding::base64_encode(bitset_binary(10, "0" + std::string(40, '0') + "1")));
  seed("run-to-the-largest-offset",
       encoding::base64_encode(run_lengths_binary(0, {{1, static_cast<std::uint64_t>(kInt64Max - 1)}})));
  const std::string some = tracker_metadata(100, 120, [](std::int64_t o) { return o > 105; });
  write("corpus", "fuzz_ack_metadata", "other-offset", with_flags(kOtherOffset, some));
  write("corpus", "fuzz_ack_metadata", "adopted", with_flags(kAdopt, some));
  write("corpus", "fuzz_ack_metadata", "adopted-other-offset", with_flags(kAdopt | kOtherOffset, some));
  write("corpus", "fuzz_ack_metadata", "empty", with_flags(0, ""));
  write("corpus", "fuzz_ack_metadata", "not-base64", with_flags(0, "acks:1-3"));

  // Boundaries of the offset arithmetic (Corruption, never a wrapped offset).
  write("regressions", "fuzz_ack_metadata", "run-past-the-largest-offset",
        with_flags(kBinary, run_lengths_binary(kInt64Max - 1, {{1, 1}})));
  write("regressions", "fuzz_ack_metadata", "bitset-past-the-largest-offset",
        with_flags(kBinary, bitset_binary(kInt64Max - 1, "01")));
  write("regressions", "fuzz_ack_metadata", "committable-past-the-largest-offset",
        with_flags(kBinary, run_lengths_binary(kInt64Max, {})));
}

void encoding_corpus() {
  write("corpus", "fuzz_encoding", "base64", encoding::base64_encode("processor"));
  write("corpus", "fuzz_encoding", "base64-padded", encoding::base64_encode("ab"));
  std::string varints;
  for (const std::uint64_t value : {0ull, 127ull, 128ull, 300ull, 1ull << 35, ~0ull})
    encoding::put_varint(varints, value);
  write("corpus", "fuzz_encoding", "varints", varints);
  write("corpus", "fuzz_encoding", "ack-metadata",
        tracker_metadata(100, 300, [](std::int64_t o) { return o % 2 == 1; }));
  // Boundaries of the strict readers (refused, never read as another value).
  write("regressions", "fuzz_encoding", "varint-over-64-bits", std::string(9, '\xff') + '\x02');
  write("regressions", "fuzz_encoding", "varint-over-long", std::string("\x80\x00", 2));
  write("regressions", "fuzz_encoding", "base64-unused-bits-set", "QR==");
}

// ---- fuzz_changelog_record: u8 flags, u8 length of where, where, bytes ----

void changelog_record_corpus() {
  constexpr std::uint8_t kPosition = 1 << 1;
  const auto input = [](std::uint8_t flags, const std::string& where, const std::string& bytes) {
    std::string out;
    out.push_back(static_cast<char>(flags));
    out.push_back(static_cast<char>(where.size()));
    return out + where + bytes;
  };
  const auto value_seed = [&](const std::string& name, const std::string& value) {
    std::string bytes;
    streams::internal::append_changelog_value(bytes, value);
    write("corpus", "fuzz_changelog_record", name, input(0, "counts-changelog:3@1234", bytes));
  };
  value_seed("value", "42");
  value_seed("empty-value", "");
  value_seed("binary-value", std::string("\0\x01\xff\0", 4));
  value_seed("large-value", std::string(4096, 'v'));
  write("corpus", "fuzz_changelog_record", "empty", input(0, "counts-changelog:3@1234", ""));
  write("corpus", "fuzz_changelog_record", "unknown-version",
        input(0, "counts-changelog:3@1234",
              "\x02"
              "42"));

  const std::string key = streams::internal::position_key("counts", 3);
  const auto position_seed = [&](const std::string& name, std::int64_t position) {
    const std::string bytes = streams::internal::encode_position(position);
    write("corpus", "fuzz_changelog_record", name, input(kPosition, key, bytes));
    write("corpus", "fuzz_changelog_record", name + "-sealed",
          input(kPosition | fuzz::kSeal, key, without_crc(bytes)));
  };
  position_seed("position-zero", 0);
  position_seed("position", 1234);
  position_seed("largest-position", kInt64Max);
  // Bodies the checksum seals but the decoder must refuse.
  const auto position_body = [](std::uint8_t version, std::int64_t position) {
    std::string out(1, static_cast<char>(version));
    encoding::put_le<std::int64_t>(out, position);
    return out;
  };
  write("corpus", "fuzz_changelog_record", "negative-position-sealed",
        input(kPosition | fuzz::kSeal, key, position_body(streams::internal::kPositionVersion, -1)));
  write("corpus", "fuzz_changelog_record", "unknown-position-version-sealed",
        input(kPosition | fuzz::kSeal, key, position_body(2, 1234)));
  write("corpus", "fuzz_changelog_record", "position-too-short", input(kPosition, key, "abc"));

  // A 0x00 in the key (every position key has some) or `where` ended the error message at
  // what(), before the partition and the reason.
  write("regressions", "fuzz_changelog_record", "position-key-with-0x00-cut-the-message",
        input(kPosition | fuzz::kSeal, key, position_body(streams::internal::kPositionVersion, -1)));
  write("regressions", "fuzz_changelog_record", "where-with-0x00-cut-the-message",
        input(0, std::string("odd\0topic:0@7", 13),
              "\x02"
              "42"));
}

// ---- fuzz_offsets_csv: the file's bytes ----

void offsets_csv_corpus() {
  write("corpus", "fuzz_offsets_csv", "export-one-group", "orders,0,5\norders,1,7\n\n");
  write("corpus", "fuzz_offsets_csv", "export-several-groups",
        "g1,orders,0,5\ng2,orders,3,9223372036854775807\n\n");
  write("corpus", "fuzz_offsets_csv", "crlf-and-blank-lines", "orders,0,5\r\n\r\n  \norders.v2_x-y,12,0\r\n");
  write("corpus", "fuzz_offsets_csv", "negative-offset", "orders,0,-5\n");
  write("corpus", "fuzz_offsets_csv", "mixed-columns", "orders,0,5\ng,orders,0,5\n");
  write("corpus", "fuzz_offsets_csv", "bad-topic", "bad topic!,0,1\n");
  // A group may hold a carriage return: only the line's last one is its line end.
  write("regressions", "fuzz_offsets_csv", "group-with-carriage-return", "g\r,orders,0,1\r\n");
}

// ---- fuzz_offsetctl_args: argv[1..], separated by '\0' ----

std::string args(std::initializer_list<std::string_view> arguments) {
  std::string out;
  for (const std::string_view argument : arguments) {
    if (!out.empty()) out.push_back('\0');
    out += argument;
  }
  return out;
}

void offsetctl_args_corpus() {
  write("corpus", "fuzz_offsetctl_args", "reset-dry-run",
        args({"groups", "reset", "--bootstrap-server", "127.0.0.1:9092", "--group", "g", "--topic",
              "orders:0,1", "--to-offset", "7", "--dry-run"}));
  write("corpus", "fuzz_offsetctl_args", "reset-execute-datetime",
        args({"groups", "reset", "--bootstrap-server", "b:1", "--all-groups", "--all-topics", "--to-datetime",
              "2024-01-01T00:00:00.000+01:00", "--execute", "--timeout", "3000"}));
  write("corpus", "fuzz_offsetctl_args", "reset-export-from-file",
        args({"groups", "reset", "--bootstrap-server", "b:1", "--group", "g", "--from-file", "plan.csv",
              "--export"}));
  write("corpus", "fuzz_offsetctl_args", "reset-shift-by-duration",
        args({"groups", "reset", "--bootstrap-server", "b:1", "--group", "g", "--topic", "t", "--shift-by",
              "-3", "--by-duration", "PT1H"}));
  write("corpus", "fuzz_offsetctl_args", "delete-offsets",
        args({"groups", "delete-offsets", "--bootstrap-server", "b:1", "--group", "g", "--topic", "t",
              "--topic", "u:0"}));
  write("corpus", "fuzz_offsetctl_args", "help", args({"groups", "reset", "--help"}));
  write("corpus", "fuzz_offsetctl_args", "unknown", args({"nonsense", "--timeout"}));
  // --timeout takes a positive number, which may be one that is not a whole number of ms.
  write("regressions", "fuzz_offsetctl_args", "fractional-timeout",
        args({"groups", "reset", "--bootstrap-server", "b:1", "--group", "g", "--topic", "t", "--to-earliest",
              "--timeout", "1.5"}));
}

// ---- fuzz_java_client_config: a Java client properties file's bytes ----

void java_client_config_corpus() {
  write("corpus", "fuzz_java_client_config", "scram-sha-256",
        "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\n"
        "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required \\\n"
        "    username=\"alice\" password=\"Alice1Secret\";\n"
        "ssl.truststore.type=PEM\nssl.truststore.location=/etc/kafka/ca.pem\n");
  write("corpus", "fuzz_java_client_config", "plain-colon-separators",
        "# an operator's file\r\nsecurity.protocol: SASL_SSL\r\nsasl.mechanism: PLAIN\r\n"
        "sasl.jaas.config: org.apache.kafka.common.security.plain.PlainLoginModule required username=bob "
        "password='B0bPassword' /* c */;\r\nssl.endpoint.identification.algorithm=\r\n");
  write("corpus", "fuzz_java_client_config", "oauthbearer-unsecured",
        "security.protocol=SASL_SSL\nsasl.mechanism=OAUTHBEARER\n"
        "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        "unsecuredLoginStringClaim_sub=\"alice\" unsecuredLoginListClaim_scope=\",read,write\" "
        "unsecuredLoginExtension_trace=\"x1\";\n");
  write("corpus", "fuzz_java_client_config", "oauthbearer-oidc",
        "sasl.mechanism=OAUTHBEARER\n"
        "sasl.login.callback.handler.class=org.apache.kafka.common.security.oauthbearer."
        "OAuthBearerLoginCallbackHandler\n"
        "sasl.oauthbearer.token.endpoint.url=https://idp/token\n"
        "sasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
        "clientId=\"tools\" clientSecret=\"S3cretValue\" scope=\"kafka\";\n");
  write("corpus", "fuzz_java_client_config", "kerberos",
        "security.protocol=SASL_PLAINTEXT\nsasl.kerberos.service.name=kafka\n"
        "sasl.jaas.config=com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true "
        "keyTab=\"/etc/k.keytab\" principal=\"tools@EXAMPLE.COM\";\n");
  write("corpus", "fuzz_java_client_config", "stores",
        "security.protocol=SSL\nssl.keystore.type=PKCS12\nssl.keystore.location=/c.p12\n"
        "ssl.keystore.password=Store1Pass\nssl.truststore.type=PEM\n"
        "ssl.truststore.certificates=-----BEGIN CERTIFICATE-----\\nAA\\n-----END CERTIFICATE-----\n"
        "ssl.enabled.protocols=TLSv1.2,TLSv1.3\n");
  write("corpus", "fuzz_java_client_config", "escapes",
        "key\\ with\\=sep = v\\u00e9\\t\\\n  continued\nsasl.password=caf\xe9\n");
  write("corpus", "fuzz_java_client_config", "refused-jks", "ssl.truststore.location=/ts.jks\n");
  // A malformed \u escape in the line of a password: the refusal names the line, not the text.
  write("regressions", "fuzz_java_client_config", "malformed-escape-after-secret",
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" "
        "password=\"Hunter2Pass\" \\u12;\n");
  // A file that ends in a backslash: Java drops it.
  write("regressions", "fuzz_java_client_config", "trailing-backslash", "sasl.password=Hunter2Pass\\");
}

// ---- fuzz_web_config: an exporter web configuration file's bytes (YAML) ----

void web_config_corpus() {
  const std::string hash = "$2b$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy";
  write("corpus", "fuzz_web_config", "tls-and-users",
        "tls_server_config:\n  cert_file: server.crt\n  key_file: /etc/exporter/server.key\n"
        "  min_version: TLS13\n  client_auth_type: RequireAndVerifyClientCert\n  client_ca_file: ca.pem\n"
        "basic_auth_users:\n  prometheus: " +
            hash + "\n  'quoted user': \"" + hash + "\"\n");
  write("corpus", "fuzz_web_config", "users-only", "basic_auth_users:\n  alice: " + hash + "\n");
  write("corpus", "fuzz_web_config", "empty", "");
  write("corpus", "fuzz_web_config", "flow-style", "{tls_server_config: {cert_file: a, key_file: b}}\n");
  write("corpus", "fuzz_web_config", "unsupported-key", "http_server_config:\n  http2: true\n");
  write("corpus", "fuzz_web_config", "not-bcrypt", "basic_auth_users:\n  bob: $6$salt$abcdef\n");
  write("corpus", "fuzz_web_config", "anchors", "a: &x {cert_file: c}\ntls_server_config: *x\n");
  write("regressions", "fuzz_web_config", "duplicate-key",
        "basic_auth_users:\n  alice: " + hash + "\n  alice: " + hash + "\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <tests/fuzz directory>\n", argv[0]);
    return 2;
  }
  g_root = argv[1];
  // corpus/ is all generated: rewritten whole. regressions/ also holds crashers found by the
  // fuzzers, so only the files named here are rewritten.
  fs::remove_all(g_root / "corpus");
  stored_offset_corpus();
  checkpoint_corpus();
  ack_metadata_corpus();
  ack_reference_corpus();
  encoding_corpus();
  changelog_record_corpus();
  offsets_csv_corpus();
  offsetctl_args_corpus();
  java_client_config_corpus();
  web_config_corpus();
  std::printf("wrote %zu files under %s\n", g_written, g_root.c_str());
  return 0;
}
