// The one-line topology spec: every kind, torus shorthands, sizes derived
// from the device count, canonical round trips, errors naming the group, the
// field and the value, and random garbage that must throw TopologyError.

#include "meshsim/mesh/topology/topology_spec.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"

namespace meshsim::topology_spec_test {
namespace {

TEST(TopologySpec, ReadsOneDimension) {
  Topology t = parse_topology_spec("ring:8:bw=50GB/s,lat=500ns");
  EXPECT_EQ(t, Topology({{DimensionKind::ring, 8, 50e9, 5e-7}}));
}

TEST(TopologySpec, ReadsEveryKind) {
  EXPECT_EQ(parse_topology_spec("fully_connected:4:bw=1B/s,lat=1s").dimensions()[0].kind,
            DimensionKind::fully_connected);
  EXPECT_EQ(parse_topology_spec("switch:4:bw=1B/s,lat=1s").dimensions()[0].kind,
            DimensionKind::switch_);
  EXPECT_EQ(parse_topology_spec("bidirectional_ring:4:bw=1B/s,lat=1s").dimensions()[0].kind,
            DimensionKind::bidirectional_ring);
}

TEST(TopologySpec, ExpandsToriIntoBidirectionalRings) {
  EXPECT_EQ(parse_topology_spec("torus2d:4x8:bw=100GB/s,lat=1us"),
            Topology({{DimensionKind::bidirectional_ring, 4, 100e9, 1e-6},
                      {DimensionKind::bidirectional_ring, 8, 100e9, 1e-6}}));
  EXPECT_EQ(parse_topology_spec("torus3d:2x3x4:bw=1GB/s,lat=1us").num_nodes(), 24);
}

TEST(TopologySpec, ReadsSeveralGroupsDimensionZeroFirst) {
  Topology t = parse_topology_spec("ring:8:bw=400GB/s,lat=100ns;switch:4:bw=50GB/s,lat=2us");
  EXPECT_EQ(t, Topology({{DimensionKind::ring, 8, 400e9, 1e-7},
                         {DimensionKind::switch_, 4, 50e9, 2e-6}}));
}

TEST(TopologySpec, AcceptsParametersInAnyOrderAndSpaces) {
  EXPECT_EQ(parse_topology_spec(" ring : 8 : lat=500ns , bw=50GB/s ; switch:2:bw=1GB/s,lat=0s "),
            parse_topology_spec("ring:8:bw=50GB/s,lat=500ns;switch:2:bw=1GB/s,lat=0s"));
}

TEST(TopologySpec, DerivesAnOmittedSizeFromTheDeviceCount) {
  EXPECT_EQ(parse_topology_spec("ring:bw=50GB/s,lat=500ns", 8).dimensions()[0].size, 8);
  Topology t = parse_topology_spec("ring:bw=1GB/s,lat=1us;switch:4:bw=1GB/s,lat=1us", 32);
  EXPECT_EQ(t.dimensions()[0].size, 8);
  EXPECT_EQ(t.dimensions()[1].size, 4);
}

TEST(TopologySpec, RoundTripsThroughToString) {
  for (const char* spec :
       {"ring:8:bw=50GB/s,lat=500ns",
        "bidirectional_ring:3:bw=3KiB/s,lat=0s;fully_connected:2:bw=3B/s,lat=7ms",
        "switch:16:bw=12.5GB/s,lat=1.25us;ring:1:bw=1TB/s,lat=1s"}) {
    Topology t = parse_topology_spec(spec);
    EXPECT_EQ(t.to_string(), spec);
    EXPECT_EQ(parse_topology_spec(t.to_string()), t);
  }
  Topology odd({{DimensionKind::ring, 3, 1.0 / 3.0, 1.0 / 7.0}});
  EXPECT_EQ(parse_topology_spec(odd.to_string()), odd);
}

TEST(TopologySpec, RejectsBadKindsAndShapes) {
  EXPECT_ERROR(parse_topology_spec("mesh:4:bw=1GB/s,lat=1us"), TopologyError,
               "topology spec 'mesh:4:bw=1GB/s,lat=1us': dimension group 0: kind: unknown kind "
               "'mesh' (expected one of fully_connected, switch, ring, bidirectional_ring, "
               "torus2d, torus3d)");
  EXPECT_ERROR(parse_topology_spec(""), TopologyError, "unknown kind ''");
  EXPECT_ERROR(parse_topology_spec("ring"), TopologyError,
               "dimension group 0 (ring): expected kind[:sizes]:bw=...,lat=..., got 'ring'");
  EXPECT_ERROR(parse_topology_spec("ring:4:2:bw=1GB/s,lat=1us"), TopologyError,
               "expected kind[:sizes]");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw=1GB/s,lat=1us;"), TopologyError,
               "dimension group 1: kind: unknown kind ''");
  EXPECT_ERROR(parse_topology_spec("torus2d:4:bw=1GB/s,lat=1us"), TopologyError,
               "dimension group 0 (torus2d): sizes: expected 2 sizes joined by 'x', got '4'");
  EXPECT_ERROR(parse_topology_spec("ring:4x4:bw=1GB/s,lat=1us"), TopologyError,
               "expected 1 size, got '4x4'");
  EXPECT_ERROR(parse_topology_spec("ring:four:bw=1GB/s,lat=1us"), TopologyError,
               "size: expected an integer, got 'four'");
  EXPECT_ERROR(parse_topology_spec("ring:4.5:bw=1GB/s,lat=1us"), TopologyError,
               "size: expected an integer, got '4.5'");
  EXPECT_ERROR(parse_topology_spec("ring:0:bw=1GB/s,lat=1us"), TopologyError,
               "dimension group 0 (ring): size must be >= 1, got 0");
  EXPECT_ERROR(parse_topology_spec("ring:99999999999:bw=1GB/s,lat=1us"), TopologyError,
               "size: expected an integer");
  EXPECT_ERROR(parse_topology_spec("torus2d:65536x65536:bw=1GB/s,lat=1us"), TopologyError,
               "too large");
}

TEST(TopologySpec, RejectsBadParameters) {
  EXPECT_ERROR(parse_topology_spec("ring:4:lat=1us"), TopologyError,
               "dimension group 0 (ring): bw is missing");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw=1GB/s"), TopologyError, "lat is missing");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw=1GB/s,bw=2GB/s,lat=1us"), TopologyError,
               "bw is given twice");
  EXPECT_ERROR(parse_topology_spec("ring:4:bandwidth=1GB/s,lat=1us"), TopologyError,
               "expected bw=<bandwidth> or lat=<latency>, got 'bandwidth=1GB/s'");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw,lat=1us"), TopologyError, "got 'bw'");
  EXPECT_ERROR(
      parse_topology_spec("switch:4:bw=0GB/s,lat=1us"), TopologyError,
      "dimension group 0 (switch): bw: bandwidth must be a finite number > 0, got '0GB/s'");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw=-3GB/s,lat=1us"), TopologyError, "'-3GB/s'");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw=nanGB/s,lat=1us"), TopologyError, "'nanGB/s'");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw=1GB/s,lat=-1us"), TopologyError,
               "dimension group 0 (ring): lat: latency must be a finite number >= 0, got '-1us'");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw=1Gbps,lat=1us"), TopologyError,
               "bw: unknown unit 'Gbps' in '1Gbps'");
  EXPECT_ERROR(parse_topology_spec("ring:4:bw=1GB/s,lat=1.2.3us"), TopologyError,
               "lat: unknown unit '.3us'");
}

TEST(TopologySpec, RejectsSizesThatCannotBeDerivedOrDoNotMatch) {
  EXPECT_ERROR(parse_topology_spec("ring:bw=1GB/s,lat=1us"), TopologyError,
               "dimension group 0 (ring): size omitted, and there is no device count");
  EXPECT_ERROR(parse_topology_spec("torus2d:bw=1GB/s,lat=1us", 16), TopologyError,
               "sizes omitted; a torus needs them (e.g. torus2d:4x4:...)");
  EXPECT_ERROR(parse_topology_spec("ring:bw=1GB/s,lat=1us;switch:bw=1GB/s,lat=1us", 16),
               TopologyError,
               "dimension group 1 (switch): size omitted, but dimension group 0 (ring) omits its "
               "size too");
  EXPECT_ERROR(parse_topology_spec("ring:bw=1GB/s,lat=1us;switch:3:bw=1GB/s,lat=1us", 16),
               TopologyError, "the other dimensions' 3 nodes do not divide the 16 devices");
  EXPECT_ERROR(parse_topology_spec("ring:bw=1GB/s,lat=1us;switch:32:bw=1GB/s,lat=1us", 16),
               TopologyError, "32 nodes do not divide the 16 devices");
  EXPECT_ERROR(parse_topology_spec("ring:8:bw=1GB/s,lat=1us", 16), TopologyError,
               "the topology has 8 nodes but there are 16 devices");
}

// Truncations and random byte edits of valid specs either parse or throw
// TopologyError; nothing else escapes, nothing crashes or hangs.
TEST(TopologySpec, GarbageThrowsTopologyErrorOnly) {
  const std::string valid[] = {"ring:8:bw=50GB/s,lat=500ns",
                               "torus2d:4x4:bw=100GB/s,lat=1us;switch:2:bw=1.5TiB/s,lat=0s",
                               "fully_connected:bw=1e3KB/s,lat=2ms"};
  const std::string alphabet = "ringtoswchx:;,=.-+e0123456789GBKMiTs/un \t\x01\xff";
  std::mt19937 rng(13);
  int parsed = 0;
  int rejected = 0;
  auto attempt = [&](const std::string& text) {
    try {
      Topology t = parse_topology_spec(text, 64);
      EXPECT_GE(t.num_nodes(), 1);
      ++parsed;
    } catch (const TopologyError&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "'" << text << "' threw a non-TopologyError: " << e.what();
    }
  };
  for (const std::string& spec : valid) {
    for (size_t n = 0; n <= spec.size(); ++n) attempt(spec.substr(0, n));
    for (int round = 0; round < 2000; ++round) {
      std::string text = spec;
      int edits = 1 + static_cast<int>(rng() % 4);
      for (int e = 0; e < edits; ++e) {
        size_t at = rng() % (text.size() + 1);
        char c = alphabet[rng() % alphabet.size()];
        switch (rng() % 3) {
          case 0:
            text.insert(at, 1, c);
            break;
          case 1:
            if (at < text.size()) text.erase(at, 1);
            break;
          default:
            if (at < text.size()) text[at] = c;
            break;
        }
      }
      attempt(text);
    }
  }
  // Both outcomes happen, so the loop exercised the parser's error paths and
  // its accepting path.
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 1000);
}

}  // namespace
}  // namespace meshsim::topology_spec_test
