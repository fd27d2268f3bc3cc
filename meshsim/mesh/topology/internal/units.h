#pragma once
// Quantities with units, as the one-line spec and the JSON reader write them:
//   bandwidth  <number><unit>, unit one of B/s KB/s MB/s GB/s TB/s (powers of
//              1000) or KiB/s MiB/s GiB/s TiB/s (powers of 1024); bytes, not bits
//   latency    <number><unit>, unit one of s ms us ns
// <number> is a decimal as std::from_chars reads it ("50", "12.5", "1e-6"; a
// leading '-' is read so that a negative value is reported as such); no
// spaces, no hex.

#include <string>
#include <string_view>

namespace meshsim::topology_units {

// Bytes per second. TopologyError naming `field` and the text on a malformed
// number, a missing or unknown unit, or a value that is not finite and > 0.
double parse_bandwidth(std::string_view text, std::string_view field);
// Seconds. TopologyError naming `field` and the text on a malformed number, a
// missing or unknown unit, or a value that is not finite and >= 0.
double parse_latency(std::string_view text, std::string_view field);

// The shortest spelling that parses back to exactly `bytes_per_second`
// ("50GB/s", "1GiB/s", "1.25B/s").
std::string format_bandwidth(double bytes_per_second);
// The same for seconds ("500ns", "1.5us", "0s").
std::string format_latency(double seconds);

}  // namespace meshsim::topology_units
