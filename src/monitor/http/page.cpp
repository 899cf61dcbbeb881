#include "monitor/http/page.hpp"

namespace processor::monitor::page {

std::string render_page(const std::string& svg, const std::string& note, int refresh_seconds) {
  std::string html;
  html.reserve(svg.size() + 2048);
  html +=
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
      "<title>processor lag monitor</title>\n"
      "<style>body{font-family:sans-serif;margin:16px;color:#222;background:#fff}"
      "header{display:flex;gap:24px;align-items:baseline}#updated{color:#777;font-size:13px}</style>\n"
      "</head>\n<body>\n<header><h1>processor lag monitor</h1>"
      "<a href=\"/metrics\">/metrics</a><a href=\"/lag.svg\">/lag.svg</a>"
      "<span id=\"updated\"></span></header>\n<div id=\"chart\">\n";
  if (svg.empty()) {
    html += "<p>" + note + "</p>\n";
  } else {
    html += svg;
  }
  html += "</div>\n";
  if (!svg.empty()) {
    html +=
        "<script>\n(function () {\n  const chart = document.getElementById('chart');\n"
        "  const updated = document.getElementById('updated');\n"
        "  async function refresh() {\n"
        "    try {\n"
        "      const response = await fetch('/lag.svg', {cache: 'no-store'});\n"
        "      if (response.ok) {\n"
        "        chart.innerHTML = await response.text();\n"
        "        updated.textContent = 'updated ' + new Date().toISOString().substring(11, 19) + ' UTC';\n"
        "      } else {\n"
        "        updated.textContent = 'refresh failed: HTTP ' + response.status;\n"
        "      }\n"
        "    } catch (error) {\n"
        "      updated.textContent = 'refresh failed: ' + error;\n"
        "    }\n"
        "  }\n"
        "  setInterval(refresh, " +
        std::to_string(refresh_seconds * 1000) + ");\n})();\n</script>\n";
  }
  html += "</body>\n</html>\n";
  return html;
}

}  // namespace processor::monitor::page
