#pragma once
// Internal to the MetricsServer: the HTML page at `/`.

#include <string>

namespace processor::monitor::page {

// A standalone HTML page showing `svg` inline, which a small script replaces with a fresh
// /lag.svg every `refresh_seconds` (so that the page keeps its scroll position, unlike a meta
// refresh), with links to /metrics and /lag.svg. `svg` is inserted as is (it is our own output);
// an empty `svg` shows `note` instead.
std::string render_page(const std::string& svg, const std::string& note, int refresh_seconds);

}  // namespace processor::monitor::page
