#include "processor/monitor/lag_chart.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "monitor/http/lag_chart_series.hpp"
#include "processor/error.hpp"

namespace processor::monitor {

namespace {

constexpr std::array<const char*, 10> kColours = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                                  "#8c564b", "#e377c2", "#17becf", "#bcbd22", "#7f7f7f"};
constexpr std::size_t kLegendChars = 38;  // what fits in kLegendWidth at 12 px
constexpr double kLeft = 80, kTop = 48, kBottom = 44, kGap = 36, kLegendWidth = 300;

std::string xml_escaped(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // Control characters other than tab and line feed are not allowed in XML 1.0.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\t' && c != '\n') {
          out += '?';
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string fixed(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.1f", value);
  return buffer;
}

// 1, 2 or 5 times a power of ten, at least `raw`.
double nice_step(double raw) {
  if (!(raw > 0)) return 1;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0, 10.0}) {
    if (factor * power >= raw) return factor * power;
  }
  return 10 * power;
}

// The unit of a seconds axis, chosen once from its top so that every tick reads in one unit.
struct SecondsUnit {
  double size;  // in seconds
  const char* suffix;
};
SecondsUnit seconds_unit(double top) {
  if (top <= 600) return {1, "s"};
  if (top <= 36000) return {60, "m"};
  return {3600, "h"};
}

// A tick label: 950, 1.5k, 12M; a seconds tick in its axis' unit: 45s, 150s, 25m, 12h.
std::string tick_label(double value, const SecondsUnit* seconds) {
  char buffer[32];
  if (seconds != nullptr) {
    std::snprintf(buffer, sizeof buffer, "%g%s", value / seconds->size, seconds->suffix);
    return buffer;
  }
  const double magnitude = std::fabs(value);
  if (magnitude >= 1e9) {
    std::snprintf(buffer, sizeof buffer, "%.3gG", value / 1e9);
  } else if (magnitude >= 1e6) {
    std::snprintf(buffer, sizeof buffer, "%.3gM", value / 1e6);
  } else if (magnitude >= 1e3) {
    std::snprintf(buffer, sizeof buffer, "%.3gk", value / 1e3);
  } else {
    std::snprintf(buffer, sizeof buffer, "%g", value);
  }
  return buffer;
}

std::string time_label(double epoch_seconds, bool with_seconds) {
  const auto t = static_cast<std::time_t>(std::floor(epoch_seconds));
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buffer[16];
  std::strftime(buffer, sizeof buffer, with_seconds ? "%H:%M:%S" : "%H:%M", &tm);
  return buffer;
}

struct Frame {
  double x0, x1, y0, y1;  // pixel box of a panel: x0 left, y0 top
  double t0, t1;          // time range (epoch seconds)
  double max;             // value at the top of the panel
  double x(double t) const { return x0 + (t - t0) / (t1 - t0) * (x1 - x0); }
  double y(double v) const { return y1 - v / max * (y1 - y0); }
};

void draw_time_axis(std::string& svg, const Frame& frame, bool labels) {
  constexpr std::array<double, 16> kSteps = {1,   2,   5,   10,   15,   30,   60,    120,
                                             300, 600, 900, 1800, 3600, 7200, 21600, 86400};
  const double span = frame.t1 - frame.t0;
  double step = kSteps.back();
  for (const double candidate : kSteps) {
    if (span / candidate <= 7) {
      step = candidate;
      break;
    }
  }
  for (double t = std::ceil(frame.t0 / step) * step; t <= frame.t1 + 1e-9; t += step) {
    const std::string x = fixed(frame.x(t));
    svg += "<line x1=\"" + x + "\" y1=\"" + fixed(frame.y0) + "\" x2=\"" + x + "\" y2=\"" + fixed(frame.y1) +
           "\" class=\"grid\"/>\n";
    if (labels) {
      svg += "<text x=\"" + x + "\" y=\"" + fixed(frame.y1 + 16) + "\" text-anchor=\"middle\">" +
             time_label(t, step < 60) + "</text>\n";
    }
  }
}

void draw_value_axis(std::string& svg, Frame& frame, double data_max, bool seconds,
                     const std::string& title) {
  // 10% headroom, so that a flat line at the maximum does not hide under the frame.
  const double top = data_max > 0 ? data_max * 1.1 : 1;
  // Seconds ticks are round in the axis' unit (every 2 m, not every 100 s).
  const SecondsUnit unit = seconds_unit(top);
  const double step = seconds ? nice_step(top / unit.size / 4) * unit.size : nice_step(top / 4);
  frame.max = std::ceil(top / step) * step;
  for (double v = 0; v <= frame.max + step / 2; v += step) {
    const std::string y = fixed(frame.y(v));
    svg += "<line x1=\"" + fixed(frame.x0) + "\" y1=\"" + y + "\" x2=\"" + fixed(frame.x1) + "\" y2=\"" + y +
           "\" class=\"grid\"/>\n";
    svg += "<text x=\"" + fixed(frame.x0 - 6) + "\" y=\"" + fixed(frame.y(v) + 4) +
           "\" text-anchor=\"end\">" + tick_label(v, seconds ? &unit : nullptr) + "</text>\n";
  }
  svg += "<rect x=\"" + fixed(frame.x0) + "\" y=\"" + fixed(frame.y0) + "\" width=\"" +
         fixed(frame.x1 - frame.x0) + "\" height=\"" + fixed(frame.y1 - frame.y0) + "\" class=\"frame\"/>\n";
  svg += "<text x=\"" + fixed(frame.x0 + 6) + "\" y=\"" + fixed(frame.y0 - 6) + "\" class=\"panel\">" +
         xml_escaped(title) + "</text>\n";
}

// One polyline per run of known values; a lone known value is a dot.
void draw_line(std::string& svg, const Frame& frame, const std::vector<double>& times,
               const std::vector<std::optional<double>>& values, const char* colour, bool group) {
  std::string path;
  std::size_t run = 0;
  for (std::size_t i = 0; i <= values.size(); ++i) {
    const bool known = i < values.size() && values[i];
    if (known) {
      path += (run == 0 ? "M" : " L") + fixed(frame.x(times[i])) + " " + fixed(frame.y(*values[i]));
      ++run;
      continue;
    }
    if (run == 1) {
      svg += "<circle cx=\"" + fixed(frame.x(times[i - 1])) + "\" cy=\"" + fixed(frame.y(*values[i - 1])) +
             "\" r=\"3\" fill=\"" + colour + "\"/>\n";
    } else if (run > 1) {
      svg += "<path d=\"" + path + "\" stroke=\"" + colour + "\" class=\"" + (group ? "group" : "partition") +
             "\"/>\n";
    }
    path.clear();
    run = 0;
  }
}

double max_of(const std::vector<chart::Series>& series, bool seconds) {
  double max = 0;
  for (const auto& s : series) {
    for (const auto& v : seconds ? s.seconds : s.offsets) {
      if (v) max = std::max(max, *v);
    }
  }
  return max;
}

}  // namespace

std::string render_lag_svg(const LagHistory& history, const LagChartOptions& options) {
  if (options.width < 200 || options.height < 200) {
    throw StateError(ErrorKind::InvalidArgument, "lag chart size " + std::to_string(options.width) + "x" +
                                                     std::to_string(options.height) +
                                                     ": both must be at least 200");
  }
  const chart::ChartData data = chart::chart_data(history, options);
  const auto width = static_cast<double>(options.width);
  const auto height = static_cast<double>(options.height);

  std::string svg;
  svg.reserve(16384);
  svg += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(options.width) +
         "\" height=\"" + std::to_string(options.height) + "\" viewBox=\"0 0 " +
         std::to_string(options.width) + " " + std::to_string(options.height) +
         "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  svg +=
      "<style>.grid{stroke:#e4e4e4;stroke-width:1}.frame{fill:none;stroke:#888}"
      ".group{fill:none;stroke-width:2.5}.partition{fill:none;stroke-width:1.3;stroke-dasharray:5 3}"
      ".panel{font-weight:bold}.title{font-size:16px;font-weight:bold}</style>\n";
  svg += "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
  svg +=
      "<text x=\"" + fixed(kLeft) + "\" y=\"22\" class=\"title\">" + xml_escaped(options.title) + "</text>\n";
  if (data.times.empty()) {
    svg += "<text x=\"" + fixed(width / 2) + "\" y=\"" + fixed(height / 2) +
           "\" text-anchor=\"middle\" font-size=\"16\">no lag samples yet</text>\n</svg>\n";
    return svg;
  }

  double t0 = data.times.front();
  double t1 = data.times.back();
  if (t1 - t0 < 1) {  // one snapshot (or several in the same second): a minute around it
    t0 -= 30;
    t1 += 30;
  }
  const double plot_right = std::max(kLeft + 100, width - kLegendWidth);
  const double panel_height = (height - kTop - kBottom - kGap) / 2;
  Frame offsets{kLeft, plot_right, kTop, kTop + panel_height, t0, t1, 1};
  Frame seconds{kLeft, plot_right, kTop + panel_height + kGap, height - kBottom, t0, t1, 1};
  const char* aggregate = options.group_aggregate == LagChartOptions::GroupAggregate::Sum ? "sum" : "max";
  draw_value_axis(svg, offsets, max_of(data.series, false), false,
                  std::string("lag (offsets); groups: ") + aggregate + " over partitions");
  draw_value_axis(svg, seconds, max_of(data.series, true), true,
                  "lag (seconds); groups: max over partitions");
  draw_time_axis(svg, offsets, false);
  draw_time_axis(svg, seconds, true);
  svg += "<text x=\"" + fixed((kLeft + plot_right) / 2) + "\" y=\"" + fixed(height - 8) +
         "\" text-anchor=\"middle\">time (UTC)</text>\n";

  double legend_y = kTop + 4;
  const double legend_x = plot_right + 20;
  for (std::size_t i = 0; i < data.series.size(); ++i) {
    const chart::Series& series = data.series[i];
    const char* colour = kColours[i % kColours.size()];
    draw_line(svg, offsets, data.times, series.offsets, colour, series.group);
    draw_line(svg, seconds, data.times, series.seconds, colour, series.group);
    const std::string y = fixed(legend_y);
    svg += "<line x1=\"" + fixed(legend_x) + "\" y1=\"" + y + "\" x2=\"" + fixed(legend_x + 24) + "\" y2=\"" +
           y + "\" stroke=\"" + colour + "\" class=\"" + (series.group ? "group" : "partition") + "\"/>\n";
    std::string text = series.label;
    if (!series.status.empty()) text += " (" + series.status + ")";
    // Long names are cut in the middle to fit the legend (group names tend to share a prefix, and
    // a partition's line ends with its topic and number); the whole name shows as the tooltip.
    constexpr std::size_t kHead = (kLegendChars - 3) / 2;
    const std::string shown =
        text.size() > kLegendChars
            ? text.substr(0, kHead) + "..." + text.substr(text.size() - (kLegendChars - 3 - kHead))
            : text;
    svg += "<text x=\"" + fixed(legend_x + 30) + "\" y=\"" + fixed(legend_y + 4) + "\"><title>" +
           xml_escaped(text) + "</title>" + xml_escaped(shown) + "</text>\n";
    legend_y += 18;
  }
  if (data.groups_left_out > 0) {
    svg += "<text x=\"" + fixed(legend_x) + "\" y=\"" + fixed(legend_y + 4) + "\">+" +
           std::to_string(data.groups_left_out) + " groups with less lag not drawn</text>\n";
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace processor::monitor
