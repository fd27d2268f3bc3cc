// Bandwidth and latency with units: every unit's multiplier, exact round
// trips through format_*, and errors naming the field and the text.

#include "meshsim/mesh/topology/internal/units.h"

#include <gtest/gtest.h>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::topology_units {
namespace {

TEST(TopologyUnits, ReadsBandwidthInDecimalAndBinaryUnits) {
  EXPECT_EQ(parse_bandwidth("7B/s", "bw"), 7);
  EXPECT_EQ(parse_bandwidth("2KB/s", "bw"), 2e3);
  EXPECT_EQ(parse_bandwidth("2MB/s", "bw"), 2e6);
  EXPECT_EQ(parse_bandwidth("50GB/s", "bw"), 50e9);
  EXPECT_EQ(parse_bandwidth("1.5TB/s", "bw"), 1.5e12);
  EXPECT_EQ(parse_bandwidth("1KiB/s", "bw"), 1024);
  EXPECT_EQ(parse_bandwidth("1MiB/s", "bw"), 1048576);
  EXPECT_EQ(parse_bandwidth("2GiB/s", "bw"), 2147483648.0);
  EXPECT_EQ(parse_bandwidth("1TiB/s", "bw"), 1099511627776.0);
  EXPECT_EQ(parse_bandwidth("1e9B/s", "bw"), 1e9);
}

TEST(TopologyUnits, ReadsLatencyAsTheSameDoubleAsTheSecondsLiteral) {
  EXPECT_EQ(parse_latency("2s", "lat"), 2);
  EXPECT_EQ(parse_latency("3ms", "lat"), 3e-3);
  EXPECT_EQ(parse_latency("1.5us", "lat"), 1.5e-6);
  EXPECT_EQ(parse_latency("500ns", "lat"), 5e-7);
  EXPECT_EQ(parse_latency("0ns", "lat"), 0);
}

TEST(TopologyUnits, FormatsInTheShortestExactUnit) {
  EXPECT_EQ(format_bandwidth(50e9), "50GB/s");
  EXPECT_EQ(format_bandwidth(1073741824.0), "1GiB/s");
  EXPECT_EQ(format_bandwidth(1.25), "1.25B/s");
  EXPECT_EQ(format_bandwidth(0.5), "0.5B/s");
  EXPECT_EQ(format_latency(5e-7), "500ns");
  EXPECT_EQ(format_latency(1.5e-6), "1.5us");
  EXPECT_EQ(format_latency(0), "0s");
  EXPECT_EQ(format_latency(2), "2s");
}

TEST(TopologyUnits, FormatRoundTripsExactly) {
  for (double bw : {1.0, 3e8, 123456789.0, 0.1, 1e15, 2.5 * 1073741824.0, 1.0 / 3.0}) {
    EXPECT_EQ(parse_bandwidth(format_bandwidth(bw), "bw"), bw) << format_bandwidth(bw);
  }
  for (double lat : {0.0, 1e-9, 1.0 / 3.0, 2.5e-7, 7e-3, 123.0, 0.0009765625}) {
    EXPECT_EQ(parse_latency(format_latency(lat), "lat"), lat) << format_latency(lat);
  }
}

TEST(TopologyUnits, RejectsMalformedOrOutOfRangeValues) {
  EXPECT_ERROR(parse_bandwidth("50Gb/s", "ring: bw"), TopologyError,
               "ring: bw: unknown unit 'Gb/s' in '50Gb/s' (expected TB/s, TiB/s, GB/s");
  EXPECT_ERROR(parse_bandwidth("50", "bw"), TopologyError, "bw: missing unit in '50'");
  EXPECT_ERROR(parse_bandwidth("GB/s", "bw"), TopologyError,
               "bw: expected a number followed by a unit");
  EXPECT_ERROR(parse_bandwidth("", "bw"), TopologyError, "got ''");
  EXPECT_ERROR(parse_bandwidth("0GB/s", "bw"), TopologyError,
               "bw: bandwidth must be a finite number > 0, got '0GB/s'");
  EXPECT_ERROR(parse_bandwidth("-1GB/s", "bw"), TopologyError, "got '-1GB/s'");
  EXPECT_ERROR(parse_bandwidth("nanGB/s", "bw"), TopologyError, "finite");
  EXPECT_ERROR(parse_bandwidth("infGB/s", "bw"), TopologyError, "finite");
  EXPECT_ERROR(parse_bandwidth("1e400GB/s", "bw"), TopologyError, "out of range");
  EXPECT_ERROR(parse_bandwidth("1e300TB/s", "bw"), TopologyError, "finite");
  EXPECT_ERROR(parse_latency("-1ns", "lat"), TopologyError,
               "lat: latency must be a finite number >= 0, got '-1ns'");
  EXPECT_ERROR(parse_latency("5 ns", "lat"), TopologyError, "unknown unit ' ns'");
  EXPECT_ERROR(parse_latency("5ps", "lat"), TopologyError, "(expected s, ms, us or ns)");
  EXPECT_ERROR(parse_latency("0x10ns", "lat"), TopologyError, "unknown unit 'x10ns'");
}

}  // namespace
}  // namespace meshsim::topology_units
