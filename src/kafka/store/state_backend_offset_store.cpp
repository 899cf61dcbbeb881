#include "processor/kafka/state_backend_offset_store.hpp"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstring>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kafka/store/stored_offset_format.hpp"
#include "kafka/wrap_errors.hpp"
#include "processor/error.hpp"

namespace processor::kafka {
namespace {

struct PartitionKey {
  std::string_view topic;
  std::int32_t partition;
};

// Parses the part of a key after the group prefix, "topic:partition". Returns nullopt when the
// key belongs to a longer group name ("x:topic:partition"): topics never contain ':'.
std::optional<PartitionKey> parse_partition_key(std::string_view rest, std::string_view key) {
  const auto colon = rest.rfind(':');
  if (colon == std::string_view::npos || rest.find(':') != colon) return std::nullopt;
  const std::string_view topic = rest.substr(0, colon);
  const std::string_view number = rest.substr(colon + 1);
  std::int32_t partition = -1;
  const auto [end, error] = std::from_chars(number.data(), number.data() + number.size(), partition);
  if (error != std::errc() || end != number.data() + number.size() || partition < 0 || topic.empty()) {
    throw StateError(ErrorKind::Corruption,
                     "corrupt offset key '" + std::string(key) + "': expected <topic>:<partition>");
  }
  try {
    validate_topic(topic);
  } catch (const StateError& invalid) {
    throw StateError(ErrorKind::Corruption,
                     "corrupt offset key '" + std::string(key) + "': " + invalid.what());
  }
  return PartitionKey{topic, partition};
}

// Whether `a + ":"` sorts before `b + ":"` bytewise: the order of two keys that differ in topic.
bool topic_key_less(std::string_view a, std::string_view b) noexcept {
  const std::size_t common = std::min(a.size(), b.size());
  if (const int order = std::memcmp(a.data(), b.data(), common); order != 0) return order < 0;
  const auto next = [common](std::string_view topic) {
    return static_cast<unsigned char>(topic.size() > common ? topic[common] : ':');
  };
  return next(a) < next(b);
}

// Orders a partition's decimal digits as bytes compare: digit i counts d+1 at weight 11^(9-i),
// a missing digit 0 (a shorter number sorts first when it is a prefix). Fits in 35 bits.
std::uint64_t partition_key_rank(std::string_view digits) noexcept {
  std::uint64_t rank = 0;
  for (std::size_t i = 0; i < 10; ++i) {
    rank = rank * 11 + (i < digits.size() ? static_cast<std::uint64_t>(digits[i] - '0') + 1 : 0);
  }
  return rank;
}

// One entry of a commit, in the packed buffer: its key, then its encoded value.
struct PackedEntry {
  std::uint32_t start;  // of the key in the buffer
  std::uint32_t key_size;
  std::uint32_t value_size;
};

// An entry's place in key order: topic rank << 35 | partition_key_rank.
struct KeyOrder {
  std::uint64_t order;
  std::uint32_t entry;
};

// Sorts by `order`, stably (entries of one key keep their commit order: the later one wins),
// looking at the low `bits` bits only. A commit of many partitions is sorted by radix, 11 bits
// per pass: 4 passes for 100k partitions of up to 256 topics, against ~17 compares per entry.
void sort_by_key_order(std::vector<KeyOrder>& items, int bits) {
  constexpr std::size_t kRadixMin = 4096;
  if (items.size() < kRadixMin) {
    std::stable_sort(items.begin(), items.end(),
                     [](const KeyOrder& a, const KeyOrder& b) { return a.order < b.order; });
    return;
  }
  constexpr int kDigitBits = 11;
  constexpr std::uint64_t kDigitMask = (1u << kDigitBits) - 1;
  std::vector<KeyOrder> scratch(items.size());
  std::vector<std::uint32_t> counts(std::size_t{1} << kDigitBits);
  for (int shift = 0; shift < bits; shift += kDigitBits) {
    std::fill(counts.begin(), counts.end(), 0);
    for (const KeyOrder& item : items) ++counts[(item.order >> shift) & kDigitMask];
    std::uint32_t next = 0;
    for (std::uint32_t& count : counts) next += std::exchange(count, next);
    for (const KeyOrder& item : items) scratch[counts[(item.order >> shift) & kDigitMask]++] = item;
    items.swap(scratch);
  }
}

}  // namespace

StateBackendOffsetStore::StateBackendOffsetStore(std::shared_ptr<state::StateBackend> backend,
                                                 std::string prefix)
    : backend_(std::move(backend)), prefix_(std::move(prefix)) {
  if (!backend_)
    throw StateError(ErrorKind::InvalidArgument, "StateBackendOffsetStore needs a state backend, got null");
}

std::string StateBackendOffsetStore::group_prefix(std::string_view group) const {
  std::string out;
  out.reserve(prefix_.size() + group.size() + 1);
  out.append(prefix_).append(group).push_back(':');
  return out;
}

std::string StateBackendOffsetStore::key_for(std::string_view group, const TopicPartition& tp) const {
  return group_prefix(group) + tp.to_key();
}

void StateBackendOffsetStore::store_offset(std::string_view group, const TopicPartition& tp,
                                           const OffsetInfo& info) {
  const PartitionOffset entry{tp, info};
  store_offsets(group, std::span<const PartitionOffset>(&entry, 1));
}

// Keys and values go into one buffer (no allocation per key), and reach the backend sorted by
// key: RocksDB inserts a sorted batch into its memtable several times faster than one in
// registration order ("t:1", "t:10", "t:2" is the byte order of partitions 1, 2 and 10).
void StateBackendOffsetStore::store_offsets(std::string_view group,
                                            std::span<const PartitionOffset> offsets) {
  validate_group(group);
  if (offsets.empty()) return;
  const std::string prefix = group_prefix(group);

  // Topic ranks in key order; a commit lists a topic's partitions together, so the map is
  // consulted once per run of one topic. Sizes are exact, so the buffer is allocated once.
  std::vector<std::string_view> topics;
  std::unordered_map<std::string_view, std::uint32_t> topic_index;
  std::vector<std::uint32_t> entry_topic(offsets.size());
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const auto& [tp, info] = offsets[i];
    validate_offset_entry(tp, info);
    if (i > 0 && tp.topic == offsets[i - 1].first.topic) {
      entry_topic[i] = entry_topic[i - 1];
    } else {
      const auto [it, added] = topic_index.try_emplace(tp.topic, static_cast<std::uint32_t>(topics.size()));
      if (added) topics.push_back(tp.topic);
      entry_topic[i] = it->second;
    }
    bytes += prefix.size() + tp.topic.size() + 1 + 10 + internal::encoded_offset_size(info);
  }
  if (bytes > UINT32_MAX) {
    throw StateError(ErrorKind::InvalidArgument,
                     "a commit of " + std::to_string(bytes) + " bytes of offsets is too large for one batch");
  }
  std::vector<std::uint32_t> by_key(topics.size());
  for (std::uint32_t t = 0; t < by_key.size(); ++t) by_key[t] = t;
  std::sort(by_key.begin(), by_key.end(),
            [&](std::uint32_t a, std::uint32_t b) { return topic_key_less(topics[a], topics[b]); });
  std::vector<std::uint64_t> topic_rank(topics.size());
  for (std::uint32_t rank = 0; rank < by_key.size(); ++rank) topic_rank[by_key[rank]] = rank;

  std::string buffer(bytes, '\0');
  char* const base = buffer.data();
  char* out = base;
  std::vector<PackedEntry> entries(offsets.size());
  std::vector<KeyOrder> key_order(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    const auto& [tp, info] = offsets[i];
    PackedEntry& entry = entries[i];
    entry.start = static_cast<std::uint32_t>(out - base);
    std::memcpy(out, prefix.data(), prefix.size());
    out += prefix.size();
    std::memcpy(out, tp.topic.data(), tp.topic.size());
    out += tp.topic.size();
    *out++ = ':';
    char* const digits = out;
    out = std::to_chars(out, out + 10, tp.partition).ptr;
    entry.key_size = static_cast<std::uint32_t>(out - base) - entry.start;
    key_order[i] = {topic_rank[entry_topic[i]] << 35 |
                        partition_key_rank(std::string_view(digits, static_cast<std::size_t>(out - digits))),
                    static_cast<std::uint32_t>(i)};
    char* const value = out;
    out = internal::encode_offset_into(out, info);
    entry.value_size = static_cast<std::uint32_t>(out - value);
  }
  sort_by_key_order(key_order, 35 + std::bit_width(topics.size() - 1));

  std::vector<state::StateBackend::PutView> puts;
  puts.reserve(entries.size());
  const std::string_view packed(buffer);
  for (const KeyOrder& item : key_order) {
    const PackedEntry& entry = entries[item.entry];
    puts.emplace_back(packed.substr(entry.start, entry.key_size),
                      packed.substr(entry.start + entry.key_size, entry.value_size));
  }
  internal::call_backend("storing offsets of group '" + std::string(group) + "'",
                         [&] { backend_->write_puts(puts); });
}

std::optional<OffsetInfo> StateBackendOffsetStore::get_offset(std::string_view group,
                                                              const TopicPartition& tp) {
  validate_group(group);
  validate_topic_partition(tp);
  const std::string key = key_for(group, tp);
  auto value = internal::call_backend("reading offset '" + key + "'", [&] { return backend_->get(key); });
  if (!value) return std::nullopt;
  return internal::decode_offset(*value, key);
}

std::unordered_map<TopicPartition, OffsetInfo> StateBackendOffsetStore::get_all_offsets(
    std::string_view group) {
  std::unordered_map<TopicPartition, OffsetInfo> out;
  for_each_offset(group, [&](std::string_view topic, std::int32_t partition, const OffsetInfo& info) {
    out.insert_or_assign(TopicPartition(std::string(topic), partition), info);
  });
  return out;
}

void StateBackendOffsetStore::for_each_offset(std::string_view group, const OffsetVisitor& visit) {
  validate_group(group);
  const std::string prefix = group_prefix(group);
  // Decoding runs inside the backend's scan: its Corruption, a StateError, passes call_backend
  // unchanged.
  internal::call_backend("reading offsets of group '" + std::string(group) + "'", [&] {
    backend_->for_each(prefix, [&](std::string_view key, std::string_view value) {
      const auto parsed = parse_partition_key(key.substr(prefix.size()), key);
      if (parsed) visit(parsed->topic, parsed->partition, internal::decode_offset(value, key));
    });
  });
}

void StateBackendOffsetStore::delete_offset(std::string_view group, const TopicPartition& tp) {
  validate_group(group);
  validate_topic_partition(tp);
  const std::string key = key_for(group, tp);
  internal::call_backend("deleting offset '" + key + "'", [&] { backend_->remove(key); });
}

void StateBackendOffsetStore::clear_offsets(std::string_view group) {
  validate_group(group);
  const std::string prefix = group_prefix(group);
  const std::string what = "clearing offsets of group '" + std::string(group) + "'";
  auto keys = internal::call_backend(what, [&] { return backend_->list_keys(prefix); });
  state::WriteBatch batch;
  for (const auto& key : keys) {
    if (parse_partition_key(std::string_view(key).substr(prefix.size()), key)) batch.remove(key);
  }
  if (!batch.empty()) internal::call_backend(what, [&] { backend_->write(batch); });
}

}  // namespace processor::kafka
