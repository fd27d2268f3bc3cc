// Topologies from JSON: the same kinds, sizes and units as the one-line spec,
// numbers in base units, files, and errors naming the entry and the field.

#include "meshsim/mesh/topology/topology_json.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <random>
#include <string>

#include "meshsim/mesh/error.h"
#include "meshsim/mesh/topology/topology_spec.h"
#include "support/expect_error.h"

namespace meshsim::topology_json_test {
namespace {

TEST(TopologyJson, ReadsTheSameTopologyAsTheSpec) {
  Topology t = parse_topology_json(R"({"dimensions": [
      {"kind": "ring", "size": 8, "bandwidth": "400GB/s", "latency": "100ns"},
      {"kind": "torus2d", "size": [4, 2], "bandwidth": 5e10, "latency": 1e-6},
      {"kind": "switch", "size": 2, "bandwidth": 1073741824, "latency": 0}]})");
  EXPECT_EQ(t, parse_topology_spec("ring:8:bw=400GB/s,lat=100ns;torus2d:4x2:bw=50GB/s,lat=1us;"
                                   "switch:2:bw=1GiB/s,lat=0s"));
}

TEST(TopologyJson, DerivesAnOmittedSize) {
  Topology t = parse_topology_json(
      R"({"dimensions": [{"kind": "fully_connected", "bandwidth": "1GB/s", "latency": "1us"}]})",
      6);
  EXPECT_EQ(t.dimensions()[0].size, 6);
}

TEST(TopologyJson, ReadsAFile) {
  std::string path = ::testing::TempDir() + "topology_json_test.json";
  {
    std::ofstream file(path);
    file << R"({"dimensions": [{"kind": "bidirectional_ring", "size": 4,
                                "bandwidth": "1GB/s", "latency": "1us"}]})";
  }
  EXPECT_EQ(read_topology_file(path), parse_topology_spec("bidirectional_ring:4:bw=1GB/s,lat=1us"));
  {
    std::ofstream file(path);
    file << R"({"dimensions": [{"kind": "ring", "size": 4, "bandwidth": "1GB/s"}]})";
  }
  EXPECT_ERROR(read_topology_file(path), TopologyError,
               "topology file '" + path + "': dimension group 0 (ring): \"latency\" is missing");
  std::remove(path.c_str());
  EXPECT_ERROR(read_topology_file(path), TopologyError,
               "topology file '" + path + "': cannot be opened");
  EXPECT_ERROR(read_topology_file(::testing::TempDir()), TopologyError, "': is a directory");
  // Read in bounded pieces: an endless file is refused, not read to the end.
  EXPECT_ERROR(read_topology_file("/dev/zero"), TopologyError,
               "topology file '/dev/zero': longer than 64 MiB");
  // A named pipe is refused before opening it, which waits for a writer.
  const std::string fifo = ::testing::TempDir() + "/topology_fifo";
  std::remove(fifo.c_str());
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_ERROR(read_topology_file(fifo), TopologyError,
               "topology file '" + fifo + "': is a named pipe or a socket, not a file");
  std::remove(fifo.c_str());
}

// What a message shows of a wrong value stays short, however deep or long
// the value: a million nested arrays overflowed the stack when dumped.
TEST(TopologyJson, MessagesShowWrongValuesBriefly) {
  const std::string deep = std::string(1'000'000, '[') + std::string(1'000'000, ']');
  EXPECT_ERROR(parse_topology_json(deep), TopologyError,
               "expected an object {\"dimensions\": [...]}, got an array of 1 element");
  EXPECT_ERROR(parse_topology_json(R"({"dimensions": [[[[1]]]]})"), TopologyError,
               "dimension group 0: expected an object, got an array of 1 element");
  // Built piece by piece: g++ 12 warns falsely about `'"' + std::string`.
  std::string long_text = "\"";
  long_text.append(100'000, 'x');
  long_text += '"';
  EXPECT_ERROR(parse_topology_json(long_text), TopologyError,
               "got \"" + std::string(63, 'x') + "... (100002 characters)");
  // The parser's own message quotes the text it stopped at: cut too.
  const std::string long_number = R"({"dimensions": [{"kind": )" + std::string(100'000, '7') + "}]}";
  EXPECT_ERROR(parse_topology_json(long_number), TopologyError, "... (1000");
  try {
    parse_topology_json(long_number);
  } catch (const TopologyError& e) {
    EXPECT_LT(std::string(e.what()).size(), 400u);
  }
}

TEST(TopologyJson, RejectsMalformedDocuments) {
  EXPECT_ERROR(parse_topology_json(R"({"dimensions": [)"), TopologyError,
               "topology JSON: malformed JSON: [json.exception.parse_error");
  EXPECT_ERROR(parse_topology_json(""), TopologyError, "malformed JSON");
  EXPECT_ERROR(parse_topology_json(R"({"dimensions": [{"kind": "ring", "bandwidth": 5e999}]})"),
               TopologyError, "malformed JSON: [json.exception.out_of_range.406] number overflow");
  EXPECT_ERROR(parse_topology_json("[1, 2]"), TopologyError,
               "expected an object {\"dimensions\": [...]}, got [1,2]");
  EXPECT_ERROR(parse_topology_json("{}"), TopologyError, "\"dimensions\" is missing");
  EXPECT_ERROR(parse_topology_json(R"({"dimensions": []})"), TopologyError,
               "\"dimensions\": expected a non-empty array, got []");
  EXPECT_ERROR(parse_topology_json(R"({"dimensions": [], "npus": 4})"), TopologyError,
               "unknown field \"npus\"");
  EXPECT_ERROR(parse_topology_json(R"({"dimensions": [3]})"), TopologyError,
               "dimension group 0: expected an object, got 3");
  // A key given twice would otherwise silently mean its last value.
  EXPECT_ERROR(parse_topology_json(R"({"dimensions": [{"kind": "ring", "size": 4, "size": 8,
                                     "bandwidth": 1, "latency": 1}]})"),
               TopologyError, "the key \"size\" is given twice in one object");
  EXPECT_ERROR(parse_topology_json(R"({"dimensions": [], "dimensions": []})"), TopologyError,
               "the key \"dimensions\" is given twice");
  // The same key in two objects is fine.
  EXPECT_NO_THROW(parse_topology_json(R"({"dimensions": [
      {"kind": "ring", "size": 2, "bandwidth": 1, "latency": 1},
      {"kind": "ring", "size": 2, "bandwidth": 1, "latency": 1}]})"));
}

TEST(TopologyJson, RejectsBadFields) {
  auto one = [](const std::string& fields) {
    return parse_topology_json(R"({"dimensions": [{)" + fields + "}]}");
  };
  EXPECT_ERROR(one(R"("size": 4, "bandwidth": 1, "latency": 0)"), TopologyError,
               "dimension group 0: \"kind\" is missing");
  EXPECT_ERROR(one(R"("kind": 7, "size": 4, "bandwidth": 1, "latency": 0)"), TopologyError,
               "\"kind\": expected a string, got 7");
  EXPECT_ERROR(one(R"("kind": "tree", "size": 4, "bandwidth": 1, "latency": 0)"), TopologyError,
               "dimension group 0: \"kind\": unknown kind 'tree'");
  EXPECT_ERROR(one(R"("kind": "ring", "size": 4, "bandwith": 1, "latency": 0)"), TopologyError,
               "dimension group 0: unknown field \"bandwith\"");
  EXPECT_ERROR(one(R"("kind": "ring", "size": 4, "latency": 0)"), TopologyError,
               "dimension group 0 (ring): \"bandwidth\" is missing");
  EXPECT_ERROR(one(R"("kind": "ring", "size": 4.0, "bandwidth": 1, "latency": 0)"), TopologyError,
               "dimension group 0 (ring): \"size\": expected an integer, got 4.0");
  EXPECT_ERROR(one(R"("kind": "ring", "size": 0, "bandwidth": 1, "latency": 0)"), TopologyError,
               "\"size\": size must be in [1, 2147483647], got 0");
  EXPECT_ERROR(one(R"("kind": "torus3d", "size": [4, 4], "bandwidth": 1, "latency": 0)"),
               TopologyError, "(torus3d): \"size\": expected an array of 3 integers, got [4,4]");
  EXPECT_ERROR(one(R"("kind": "ring", "size": 4, "bandwidth": true, "latency": 0)"), TopologyError,
               "\"bandwidth\": expected a number or a string with a unit, got true");
  EXPECT_ERROR(one(R"("kind": "ring", "size": 4, "bandwidth": "5 GB/s", "latency": 0)"),
               TopologyError, "(ring): \"bandwidth\": unknown unit ' GB/s' in '5 GB/s'");
  EXPECT_ERROR(one(R"("kind": "ring", "size": 4, "bandwidth": 0, "latency": 0)"), TopologyError,
               "topology dimension 0 (ring): bandwidth must be a finite number > 0 bytes/s, got 0");
  EXPECT_ERROR(one(R"("kind": "ring", "size": 4, "bandwidth": 1, "latency": -2)"), TopologyError,
               "latency must be a finite number >= 0 seconds, got -2");
  EXPECT_ERROR(
      parse_topology_json(
          R"({"dimensions": [{"kind": "ring", "size": 4, "bandwidth": 1, "latency": 0}]})", 8),
      TopologyError, "the topology has 4 nodes but there are 8 devices");
}

// Truncations and random edits of a valid document either parse or throw
// TopologyError; no other exception (nlohmann's type errors included) escapes.
TEST(TopologyJson, GarbageThrowsTopologyErrorOnly) {
  const std::string valid =
      R"({"dimensions": [{"kind": "ring", "size": 8, "bandwidth": "400GB/s", "latency": 1e-7},)"
      R"( {"kind": "torus2d", "size": [2, 4], "bandwidth": 5e10, "latency": "1us"}]})";
  const std::string alphabet = "{}[]\":,. -+e0123456789truefalsnl\\\x01\xff\xc3";
  std::mt19937 rng(13);
  int parsed = 0;
  int rejected = 0;
  auto attempt = [&](const std::string& text) {
    try {
      parse_topology_json(text);
      ++parsed;
    } catch (const TopologyError&) {
      ++rejected;
    } catch (const std::exception& e) {
      ADD_FAILURE() << text << " threw a non-TopologyError: " << e.what();
    }
  };
  for (size_t n = 0; n <= valid.size(); ++n) attempt(valid.substr(0, n));
  for (int round = 0; round < 3000; ++round) {
    std::string text = valid;
    for (int e = 1 + static_cast<int>(rng() % 3); e > 0; --e) {
      size_t at = rng() % text.size();
      char c = alphabet[rng() % alphabet.size()];
      if (rng() % 2) {
        text[at] = c;
      } else {
        text.insert(at, 1, c);
      }
    }
    attempt(text);
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(rejected, 2000);
}

}  // namespace
}  // namespace meshsim::topology_json_test
