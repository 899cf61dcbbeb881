#pragma once
// processor::monitor — see every offset and lag, and export them: the lag monitor (lag in offsets
// and seconds, Burrow's status per partition and group), Prometheus metrics in kafka-lag-exporter's
// names, the embeddable HTTP exporter with its chart, and the application's own metrics.
// Link processor::monitor (it serves HTTP and HTTPS with libmicrohttpd and GnuTLS).

#include "processor/kafka/group_admin.hpp"
#include "processor/monitor/app_metrics.hpp"
#include "processor/monitor/group_admin_lag_source.hpp"
#include "processor/monitor/lag_chart.hpp"
#include "processor/monitor/lag_metrics.hpp"
#include "processor/monitor/lag_monitor.hpp"
#include "processor/monitor/lag_snapshot.hpp"
#include "processor/monitor/lag_source.hpp"
#include "processor/monitor/metrics.hpp"
#include "processor/monitor/metrics_server.hpp"
#include "processor/monitor/metrics_writer.hpp"
