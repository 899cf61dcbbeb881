#pragma once
// How `groups reset` and `groups delete-offsets` report errors, as kafka-consumer-groups does:
//  - a usage error (StateError(InvalidArgument): a bad option, topic argument or CSV row):
//    the message on stderr;
//  - a failure of the command (command_failure(), or any other StateError): on stdout,
//    "\nError: Executing consumer group command failed due to <message>".
// Both exit with kExitError (Kafka exits 0 after the second kind; a script needs to see it).

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "processor/error.hpp"
#include "processor/kafka/group_admin.hpp"

namespace processor::offsetctl {

// A failure of the command whose message is Kafka's; kind() says why (e.g. NotFound).
class CommandFailure : public StateError {
 public:
  CommandFailure(ErrorKind kind, const std::string& message) : StateError(kind, message) {}
};

// Returns the exception to throw for a failure Kafka reports with `message`.
inline CommandFailure command_failure(const std::string& message) {
  return CommandFailure(ErrorKind::InvalidArgument, message);
}

// Runs `body` and prints its error as Kafka would; returns body's exit code or kExitError.
int run_kafka_style(std::ostream& out, std::ostream& err, const std::function<int()>& body);

// admin.partitions_of(topics); a topic that does not exist fails with Kafka's message ("This
// server does not host this topic-partition."), and names the topic on `err`.
std::vector<kafka::TopicPartition> partitions_or_kafka_error(kafka::GroupAdmin& admin,
                                                             const std::vector<std::string>& topics,
                                                             std::ostream* err = nullptr);

}  // namespace processor::offsetctl
