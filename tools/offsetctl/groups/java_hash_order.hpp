#pragma once
// The order in which a java.util.HashMap<String, ?> iterates its keys: kafka-consumer-groups
// --list collects the groups of ListGroups into one and prints them in that order, so offsetctl
// must reproduce it to print the same bytes.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace processor::offsetctl {

// Java's String.hashCode() of the UTF-8 text `text` (taken as UTF-16 code units, as Java stores
// it; invalid UTF-8 bytes count as U+FFFD).
std::int32_t java_string_hash(std::string_view text);

// The indexes of `keys` (distinct, in insertion order) in the order a HashMap with the default
// capacity and load factor, filled in that order, iterates them: by bucket of the spread hash,
// then by insertion order within a bucket. (A bucket that Java turns into a tree, 8 or more keys
// in one bucket of a table of 64 or more, is not modelled.)
std::vector<std::size_t> java_hash_map_order(const std::vector<std::string>& keys);

}  // namespace processor::offsetctl
