#include "reset/command_failure.hpp"

#include "command.hpp"
#include "reset/java_errors.hpp"

namespace processor::offsetctl {

int run_kafka_style(std::ostream& out, std::ostream& err, const std::function<int()>& body) {
  try {
    return body();
  } catch (const CommandFailure& e) {
    out << "\nError: Executing consumer group command failed due to " << e.what() << "\n";
  } catch (const StateError& e) {
    if (e.kind() == ErrorKind::InvalidArgument) {
      err << e.what() << "\n";
    } else {
      out << "\nError: Executing consumer group command failed due to " << java_cause(e) << "\n";
    }
  }
  out.flush();
  return kExitError;
}

std::vector<kafka::TopicPartition> partitions_or_kafka_error(kafka::GroupAdmin& admin,
                                                             const std::vector<std::string>& topics,
                                                             std::ostream* err) {
  try {
    return admin.partitions_of(topics);
  } catch (const StateError& e) {
    if (e.kind() != ErrorKind::NotFound && e.kind() != ErrorKind::InvalidArgument) throw;
    if (err != nullptr) *err << "offsetctl: " << e.what() << "\n";
    if (e.kind() == ErrorKind::InvalidArgument) {  // an illegal topic name, e.g. ""
      throw CommandFailure(ErrorKind::InvalidArgument, std::string(e.what()));
    }
    throw CommandFailure(ErrorKind::NotFound, "This server does not host this topic-partition.");
  }
}

}  // namespace processor::offsetctl
