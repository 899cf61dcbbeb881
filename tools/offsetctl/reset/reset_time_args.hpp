#pragma once
// The two time arguments of `offsetctl groups reset`, parsed as kafka-consumer-groups parses them
// (Kafka's Utils.getDateTime and java.time.Duration.parse), so that a value Kafka accepts means
// the same instant here and a value it rejects is rejected with its message.

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace processor::offsetctl {

// --to-datetime: 'YYYY-MM-DDThh:mm:ss.sss' with an optional zone ('Z', '+hh:mm', '+hh', '-hh...');
// without a zone the time is UTC. As Kafka's parser (SimpleDateFormat, strict): fields hold any
// number of digits, spaces before a field are skipped, the milliseconds are the number written
// (".5" is 5 ms), text after the zone is ignored, and out-of-range fields (month 13, Feb 30,
// hour 24) are rejected. Returns milliseconds since the epoch.
// Throws StateError(InvalidArgument) with Kafka's message: "Error parsing timestamp. It does not
// contain a 'T' according to ISO8601 format" or "Unparseable date: \"<text>\"".
std::int64_t parse_reset_datetime(std::string_view text);

// --by-duration: an ISO-8601 duration 'PnDTnHnMnS' (java.time.Duration.parse: case-insensitive,
// signs allowed on the whole and on each number, fractional seconds up to 9 digits). Returns it
// in milliseconds, rounded toward negative infinity as Instant.toEpochMilli() would see it.
// Throws StateError(InvalidArgument) "Text cannot be parsed to a Duration" for anything else,
// including a duration beyond the range of int64 milliseconds.
std::int64_t parse_reset_duration_ms(std::string_view text);

}  // namespace processor::offsetctl
