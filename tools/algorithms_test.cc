// meshsim algorithms: the options (collective names, formats), the table of a
// registry with a user algorithm next to the built-ins (every column, UTF-8
// cost formulas aligned), the --collective filter, and the JSON form parsed
// back.

#include "tools/algorithms_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "meshsim/runtime/exec/runtime.h"
#include "support/expect_error.h"

namespace meshsim::cli {
namespace {

using ::testing::HasSubstr;

AlgorithmsOptions parse(std::vector<std::string> args) {
  CLI::App app;
  CLI::App* sub = app.add_subcommand("algorithms");
  AlgorithmsCommand command(*sub);
  args.insert(args.begin(), "algorithms");
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse
  app.parse(args);
  return command.options();
}

// An all_reduce the registry should show as given: a UTF-8 cost formula,
// two preconditions, two tunables.
Algorithm<AllReduceArgs> listed_algorithm() {
  Algorithm<AllReduceArgs> a;
  a.name = "listed_test";
  a.description = "a user algorithm for the listing test";
  a.cost_formula = "(n-1)α + 2·Sβ";
  a.cost = [](const CallShape&) { return CostTerms{}; };
  a.preconditions = kPowerOfTwoGroup | kDivisibleCount;
  a.tunables = {{"segment_bytes", 4096, "bytes per segment"}, {"radix", 3, "children per node"}};
  a.run = [](Communicator&, const AllReduceArgs&) {};
  return a;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

size_t count_algorithms(const AlgorithmRegistry& registry) {
  size_t total = 0;
  for (Collective c : kAllCollectives) total += registry.list(c).size();
  return total;
}

TEST(AlgorithmsOptionsTest, NamesAndFormats) {
  EXPECT_FALSE(parse({}).collective.has_value());
  EXPECT_EQ(parse({}).format, ListFormat::kTable);
  EXPECT_EQ(parse({"--collective", "all_gather"}).collective, Collective::kAllGather);
  EXPECT_EQ(parse({"--collective", "psum"}).collective, Collective::kAllReduce);
  EXPECT_EQ(parse({"--collective", "pbroadcast"}).collective, Collective::kBroadcast);
  EXPECT_EQ(parse({"--format", "json"}).format, ListFormat::kJson);
  EXPECT_ERROR(parse({"--collective", "allreduce"}), InvalidArgumentError,
               "--collective 'allreduce': unknown; choose one of all_reduce, all_gather");
  EXPECT_ERROR(parse({"--format", "csv"}), InvalidArgumentError,
               "--format 'csv': choose table or json");
  // Given but empty is a name like any other, not "every collective".
  EXPECT_ERROR(parse({"--collective", ""}), InvalidArgumentError, "--collective '': unknown");
  EXPECT_ERROR(parse({"--collective", "ppermute"}), InvalidArgumentError,
               "ppermute and psend/precv have one schedule each, so no algorithms");
  EXPECT_EQ(parse({"--collective", "ragged_all_to_all"}).collective,
            Collective::kRaggedAllToAll);
}

TEST(AlgorithmsTableTest, ListsEveryAlgorithmWithItsColumns) {
  Runtime runtime;
  AlgorithmRegistry& registry = algorithm_registry(runtime);
  registry.add(listed_algorithm());
  std::ostringstream out;
  write_algorithms(registry, {}, out);
  const std::vector<std::string> lines = lines_of(out.str());
  ASSERT_EQ(lines.size(), 1 + count_algorithms(registry)) << out.str();
  EXPECT_THAT(lines[0], HasSubstr("collective"));
  EXPECT_THAT(lines[0], HasSubstr("preconditions"));
  for (Collective c : kAllCollectives) {
    EXPECT_THAT(out.str(), HasSubstr(std::string(collective_name(c)) + "  ")) << out.str();
  }
  const auto user = std::find_if(lines.begin(), lines.end(), [](const std::string& line) {
    return line.find("listed_test") != std::string::npos;
  });
  ASSERT_NE(user, lines.end()) << out.str();
  EXPECT_TRUE(user->starts_with("all_reduce ")) << *user;
  EXPECT_THAT(*user, HasSubstr(describe_preconditions(kPowerOfTwoGroup | kDivisibleCount)));
  EXPECT_THAT(*user, HasSubstr("(n-1)α + 2·Sβ"));
  EXPECT_THAT(*user, HasSubstr("segment_bytes=4096, radix=3"));
  EXPECT_TRUE(user->ends_with("a user algorithm for the listing test")) << *user;
}

// Cost formulas hold multi-byte characters; columns are padded by what the
// terminal shows, so every description starts in the same screen column.
TEST(AlgorithmsTableTest, ColumnsAlignOnScreen) {
  Runtime runtime;
  AlgorithmRegistry& registry = algorithm_registry(runtime);
  registry.add(listed_algorithm());
  std::ostringstream out;
  write_algorithms(registry, {.collective = Collective::kAllReduce}, out);
  const std::vector<std::string> lines = lines_of(out.str());
  const std::vector<const AlgorithmInfo*> listed = registry.list(Collective::kAllReduce);
  ASSERT_EQ(lines.size(), 1 + listed.size()) << out.str();
  const auto screen_column = [](const std::string& line, const std::string& text) {
    const std::string before = line.substr(0, line.rfind(text));
    return std::count_if(before.begin(), before.end(),
                         [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; });
  };
  const auto column = screen_column(lines[0], "description");
  for (size_t i = 0; i < listed.size(); ++i) {
    EXPECT_TRUE(lines[i + 1].starts_with("all_reduce ")) << lines[i + 1];
    EXPECT_THAT(lines[i + 1], HasSubstr(listed[i]->name));  // registration order
    if (listed[i]->description.empty()) continue;
    EXPECT_EQ(screen_column(lines[i + 1], listed[i]->description), column) << lines[i + 1];
  }
}

TEST(AlgorithmsJsonTest, ParsesBackWithEveryField) {
  Runtime runtime;
  AlgorithmRegistry& registry = algorithm_registry(runtime);
  registry.add(listed_algorithm());
  std::ostringstream out;
  write_algorithms(registry, {.format = ListFormat::kJson}, out);
  const nlohmann::json list = nlohmann::json::parse(out.str());
  ASSERT_TRUE(list.is_array());
  EXPECT_EQ(list.size(), count_algorithms(registry));
  const auto user = std::find_if(list.begin(), list.end(), [](const nlohmann::json& entry) {
    return entry.at("name") == "listed_test";
  });
  ASSERT_NE(user, list.end());
  EXPECT_EQ(user->at("collective"), "all_reduce");
  EXPECT_EQ(user->at("preconditions"), describe_preconditions(kPowerOfTwoGroup | kDivisibleCount));
  EXPECT_EQ(user->at("cost_formula"), "(n-1)α + 2·Sβ");
  EXPECT_EQ(user->at("description"), "a user algorithm for the listing test");
  EXPECT_EQ(user->at("tunables"),
            nlohmann::json::parse(R"([{"name": "segment_bytes", "default": 4096,
                                        "description": "bytes per segment"},
                                       {"name": "radix", "default": 3,
                                        "description": "children per node"}])"));

  std::ostringstream gathers;
  write_algorithms(registry, {.collective = Collective::kAllGather, .format = ListFormat::kJson},
                   gathers);
  const nlohmann::json only = nlohmann::json::parse(gathers.str());
  EXPECT_EQ(only.size(), registry.list(Collective::kAllGather).size());
  for (const nlohmann::json& entry : only) EXPECT_EQ(entry.at("collective"), "all_gather");
}

// The command reads a fresh runtime's registry: direct first for every
// collective.
TEST(RunAlgorithmsTest, FreshRegistryHasDirectEverywhere) {
  std::ostringstream out;
  run_algorithms({}, out);
  for (Collective c : kAllCollectives) {
    EXPECT_THAT(out.str(), HasSubstr("\n" + std::string(collective_name(c)) + " "));
  }
  std::ostringstream json;
  run_algorithms({.format = ListFormat::kJson}, json);
  const nlohmann::json list = nlohmann::json::parse(json.str());
  for (Collective c : kAllCollectives) {
    const auto first = std::find_if(list.begin(), list.end(), [&](const nlohmann::json& e) {
      return e.at("collective") == collective_name(c);
    });
    ASSERT_NE(first, list.end()) << collective_name(c);
    EXPECT_EQ(first->at("name"), "direct") << collective_name(c);
  }
}

}  // namespace
}  // namespace meshsim::cli
