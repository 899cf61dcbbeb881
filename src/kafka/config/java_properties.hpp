#pragma once
// The syntax of a java.util.Properties file (Properties.load(InputStream)), decoded as Java
// decodes it. Internal: java_client_config() is the public entry.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace processor::kafka::internal {

struct JavaProperty {
  std::string key;    // UTF-8
  std::string value;  // UTF-8
  int line = 0;       // the 1-based line the entry starts on
};

// Every entry of `bytes`, in file order (a key may repeat: Java keeps the last). Bytes are read as
// ISO-8859-1 and \uXXXX escapes as UTF-16 code units; keys and values come back as UTF-8, so a
// password is the bytes a Java client would send.
// Throws StateError(InvalidArgument) "line N: malformed \uxxxx escape" for a \u not followed by
// four hexadecimal digits (Java's IllegalArgumentException), naming no value.
std::vector<JavaProperty> parse_java_properties(std::string_view bytes);

}  // namespace processor::kafka::internal
