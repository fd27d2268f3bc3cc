// The CLI's virtual-time and trace options: `meshsim bench --topology` (the
// modeled columns against closed forms), `--trace`, and `meshsim trace`.

#include <CLI/CLI.hpp>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"
#include "tools/bench_options.h"
#include "tools/bench_run.h"
#include "tools/trace_command.h"

namespace meshsim::cli {
namespace {

using ::testing::HasSubstr;

std::filesystem::path temp_file(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("meshsim_tools_" + name);
}

nlohmann::json bench_json(std::vector<std::string> args) {
  args.insert(args.end(), {"--iters", "1", "--warmup", "0", "--format", "json"});
  std::ostringstream out;
  EXPECT_EQ(run_bench(parse_bench_args(args), out, nullptr), 0);
  return nlohmann::json::parse(out.str());
}

TEST(BenchTopology, ModeledTimesAreTheClosedForms) {
  // Fully connected, alpha = 1 us, beta = 1 ns/B: direct all-reduce of n
  // bytes is alpha + n beta; ring is 2 (p - 1) (alpha + n / p beta).
  const std::string net = "fully_connected:bw=1GB/s,lat=1us";
  const auto direct = bench_json({"all_reduce", "--mesh", "4", "-b", "1K", "-e", "4K", "-f",
                                  "4", "--algo", "direct", "--topology", net});
  EXPECT_EQ(direct.at("topology"), net);
  ASSERT_EQ(direct.at("rows").size(), 2u);
  for (const auto& row : direct.at("rows")) {
    const double n = row.at("size").get<double>();
    EXPECT_NEAR(row.at("modeled_us").get<double>(), 1 + n / 1e3, 1e-9) << n;
    EXPECT_GT(row.at("modeled_busbw_gbps").get<double>(), 0);
  }
  const auto ring = bench_json({"all_reduce", "--mesh", "4", "-b", "1K", "-e", "1K", "--algo",
                                "ring", "--topology", net});
  EXPECT_NEAR(ring.at("rows")[0].at("modeled_us").get<double>(), 2 * 3 * (1 + 256 / 1e3), 1e-9);
}

TEST(BenchTopology, CongestionAwareSharesLinks) {
  // A unidirectional ring of 4, alpha = 1 us, beta = 1 ns/B. The ring
  // all-reduce's messages each take their own link: the closed form on
  // either model. Direct sends every peer the whole input, over shared links.
  const std::string net = "ring:bw=1GB/s,lat=1us";
  const auto run = [&](const char* algo, const char* network) {
    return bench_json({"all_reduce", "--mesh", "4", "-b", "1K", "-e", "1K", "--algo", algo,
                       "--topology", net, "--network", network});
  };
  const auto ring = run("ring", "congestion-aware");
  EXPECT_EQ(ring.at("network"), "congestion-aware");
  EXPECT_NEAR(ring.at("rows")[0].at("modeled_us").get<double>(), 2 * 3 * (1 + 256 / 1e3), 1e-9);
  const double shared =
      run("direct", "congestion-aware").at("rows")[0].at("modeled_us").get<double>();
  const double alone =
      run("direct", "congestion-unaware").at("rows")[0].at("modeled_us").get<double>();
  // Unaware: the farthest peer is 3 hops away, 3 alpha + n beta. Aware: the
  // 3 messages leaving each node queue on its one outgoing link.
  EXPECT_NEAR(alone, 3 + 1.024, 1e-9);
  EXPECT_GT(shared, alone + 1.024);
  EXPECT_THROW(parse_bench_args({"all_reduce", "--network", "lossy"}), CLI::ParseError);
}

TEST(BenchTopology, WithoutItRowsHaveNoModeledTime) {
  const auto doc = bench_json({"all_reduce", "--mesh", "2", "-b", "8", "-e", "8"});
  EXPECT_TRUE(doc.at("topology").is_null());
  EXPECT_TRUE(doc.at("rows")[0].at("modeled_us").is_null());
}

TEST(BenchTopology, TableShowsTheModeledColumns) {
  std::ostringstream out;
  EXPECT_EQ(run_bench(parse_bench_args({"all_reduce", "--mesh", "2", "-b", "8", "-e", "8",
                                        "--iters", "1", "--warmup", "0", "--topology",
                                        "switch:bw=400GB/s,lat=1us"}),
                      out, nullptr),
            0);
  EXPECT_THAT(out.str(), HasSubstr("# topology switch:bw=400GB/s,lat=1us"));
  EXPECT_THAT(out.str(), HasSubstr("mbusbw"));
}

TEST(BenchTopology, ReadsAJsonFile) {
  const auto path = temp_file("topology.json");
  std::ofstream(path) << R"({"dimensions": [{"kind": "ring", "bandwidth": "1GB/s", "latency": "1us"}]})";
  const auto doc = bench_json({"all_reduce", "--mesh", "4", "-b", "1K", "-e", "1K", "--algo",
                               "ring", "--topology", path.string()});
  std::filesystem::remove(path);
  // On a unidirectional ring each ring step is one hop: as fully connected.
  EXPECT_NEAR(doc.at("rows")[0].at("modeled_us").get<double>(), 2 * 3 * (1 + 256 / 1e3), 1e-9);
}

TEST(BenchTopology, BadValuesNameTheOption) {
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--topology", "ring:bw=0GB/s,lat=1us"}),
               InvalidArgumentError, "--topology 'ring:bw=0GB/s,lat=1us'");
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--mesh", "8", "--topology", "ring:4:bw=1GB/s,lat=1us"}),
               InvalidArgumentError, "--topology");
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--topology", "no_such_kind:bw=1GB/s,lat=1us"}),
               InvalidArgumentError, "no_such_kind");
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--trace", "/nonexistent-dir/t.json"}),
               InvalidArgumentError, "--trace");
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--trace", "/tmp"}), InvalidArgumentError,
               "is a directory");
  EXPECT_ERROR(parse_bench_args({"all_reduce", "--topology", "/nonexistent-dir/net.json"}),
               InvalidArgumentError, "cannot be opened");
}

TEST(BenchTrace, WritesOneCallOfTheLargestSize) {
  const auto path = temp_file("bench_trace.json");
  bench_json({"all_reduce", "--mesh", "4", "-b", "64", "-e", "1K", "-f", "4", "--algo", "ring",
              "--topology", "ring:bw=1GB/s,lat=1us", "--trace", path.string()});
  std::ifstream in(path);
  const auto doc = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  int psums = 0;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "X" && e.at("cat") == "collective" && e.at("pid") == 1) {
      ++psums;
      EXPECT_EQ(e.at("args").at("bytes"), 1024);
      EXPECT_EQ(e.at("args").at("algorithm"), "ring");
    }
  }
  EXPECT_EQ(psums, 4) << "one call per device, in the virtual-time view";
}

TraceOptions trace_args(std::vector<std::string> args) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("trace");
  TraceCommand command(*sub);
  args.insert(args.begin(), "trace");
  std::reverse(args.begin(), args.end());
  app.parse(args);
  return command.options();
}

TEST(TraceCommandTest, WritesATraceOfTheStep) {
  const auto path = temp_file("step.json");
  const TraceOptions options = trace_args(
      {"--out", path.string(), "--mesh", "4", "--layers", "2", "--shard-bytes", "1K"});
  std::ostringstream out;
  run_trace(options, out);
  EXPECT_THAT(out.str(), HasSubstr("4 devices"));
  EXPECT_THAT(out.str(), HasSubstr("8  collective all_gather"));
  EXPECT_THAT(out.str(), HasSubstr("8  wait ppermute_done"));
  EXPECT_THAT(out.str(), HasSubstr("4  collective psum"));
  std::ifstream in(path);
  const auto doc = nlohmann::json::parse(in);
  std::filesystem::remove(path);
  std::set<std::string> processes;
  for (const auto& e : doc.at("traceEvents")) {
    if (e.at("ph") == "M" && e.at("name") == "process_name") processes.insert(e.at("args").at("name"));
  }
  EXPECT_EQ(processes, (std::set<std::string>{"virtual time", "wall time"}));
}

TEST(TraceCommandTest, BadValuesNameTheOption) {
  EXPECT_ERROR(trace_args({"--out", "t.json", "--layers", "0"}), InvalidArgumentError, "--layers");
  EXPECT_ERROR(trace_args({"--out", "t.json", "--shard-bytes", "2"}), InvalidArgumentError,
               "--shard-bytes");
  EXPECT_ERROR(trace_args({"--out", "t.json", "--shard-bytes", "6"}), InvalidArgumentError,
               "multiple of 4");
  EXPECT_ERROR(trace_args({"--out", "t.json", "--mesh", "64", "--shard-bytes", "256M"}),
               InvalidArgumentError, "4 GiB");
  EXPECT_ERROR(trace_args({"--out", "t.json", "--mesh", "1024", "--shard-bytes", "4",
                           "--layers", "1000"}),
               InvalidArgumentError, "--layers");
  // Past ~430k events the trace's JSON alone would pass 4 GiB (an adversarial
  // pass saw 13 GB and growing for these two).
  EXPECT_ERROR(trace_args({"--out", "t.json", "--mesh", "64", "--shard-bytes", "4",
                           "--layers", "1000"}),
               InvalidArgumentError,
               "with 64 devices the trace would have 8192000 events, ~10 KB of memory each");
  EXPECT_ERROR(trace_args({"--out", "t.json", "--mesh", "a=2,b=2,c=2,d=2,e=2,f=2,g=2,h=2,i=2,j=2",
                           "--shard-bytes", "4"}),
               InvalidArgumentError, "over the 4 GiB this command allows");
  EXPECT_NO_THROW(trace_args({"--out", "t.json", "--mesh", "64", "--shard-bytes", "4",
                              "--layers", "30"}));
  EXPECT_ERROR(trace_args({"--out", "/tmp"}), InvalidArgumentError, "is a directory");
  EXPECT_ERROR(trace_args({"--out", ""}), InvalidArgumentError, "--out '': is empty");
  EXPECT_ERROR(trace_args({"--out", "t.json", "--mesh", "4097"}), InvalidArgumentError,
               "--mesh '4097': this command traces at most 4096 devices");
  // Checked before the work by opening it: procfs makes no new files, even for root.
  EXPECT_ERROR(trace_args({"--out", "/proc/1/nope.json"}), InvalidArgumentError,
               "cannot be created");
  EXPECT_ERROR(trace_args({"--out", "/nonexistent-dir/t.json"}), InvalidArgumentError, "--out");
  EXPECT_ERROR(trace_args({"--out", "t.json", "--topology", "ring:bw=-1GB/s,lat=1us"}),
               InvalidArgumentError, "--topology");
}

}  // namespace
}  // namespace meshsim::cli
