#pragma once
// Deprecated: include processor/kafka/commit_strategy.hpp or processor/kafka/reset_strategy.hpp.
// This forwarding header stays for one release.
#include "processor/kafka/commit_strategy.hpp"
#include "processor/kafka/reset_strategy.hpp"
