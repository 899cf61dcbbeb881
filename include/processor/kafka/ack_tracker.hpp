#pragma once
// Deprecated: include processor/kafka/partition_acks.hpp. This forwarding header stays for one
// release.
#include "processor/kafka/partition_acks.hpp"
