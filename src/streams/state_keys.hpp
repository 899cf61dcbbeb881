#pragma once
// Where the streams state lives in the one RocksDB database of a StreamProcessor. Internal.
//
//   'd' <store> 0x00 <partition: 4 bytes big-endian> <key>   a store partition's data
//   'p' <store> 0x00 <partition: 4 bytes big-endian>         its changelog position
//   'i'                                                      this member's instance id
//   'm'                                                      its last group member id
//
// A store name is a topic-name fragment (no 0x00), so one store's prefix never covers another's,
// and big-endian partitions keep each store partition's data contiguous.

#include <cstdint>
#include <string>
#include <string_view>

namespace processor::streams::internal {

inline std::string store_partition_key(char kind, std::string_view store, std::int32_t partition) {
  std::string key;
  key.reserve(1 + store.size() + 1 + 4);
  key.push_back(kind);
  key.append(store);
  key.push_back('\0');
  const auto bits = static_cast<std::uint32_t>(partition);
  for (int shift = 24; shift >= 0; shift -= 8) key.push_back(static_cast<char>((bits >> shift) & 0xff));
  return key;
}

// The prefix of every data key of a store partition; a data key is this prefix and the user key.
inline std::string data_prefix(std::string_view store, std::int32_t partition) {
  return store_partition_key('d', store, partition);
}
inline std::string position_key(std::string_view store, std::int32_t partition) {
  return store_partition_key('p', store, partition);
}
inline constexpr std::string_view kInstanceIdKey = "i";
inline constexpr std::string_view kMemberIdKey = "m";

}  // namespace processor::streams::internal
