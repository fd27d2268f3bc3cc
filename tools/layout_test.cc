// meshsim layout: the spec and shape parsers (JAX's spellings) and the
// command's output for the issue's example, parsed through CLI11 as main does.

#include "tools/layout_command.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "meshsim/mesh/error.h"
#include "support/expect_error.h"
#include "tools/cli_parse.h"

namespace meshsim::cli {
namespace {

TEST(ParseSpec, JaxSpellings) {
  EXPECT_EQ(parse_spec("x,None"), (P{"x", nullptr}));
  EXPECT_EQ(parse_spec("'x', None"), (P{"x", nullptr}));
  EXPECT_EQ(parse_spec("P('x', None)"), (P{"x", nullptr}));
  EXPECT_EQ(parse_spec("PartitionSpec(None,\"y\")"), (P{nullptr, "y"}));
  EXPECT_EQ(parse_spec("(x,y),None"), (P{{"x", "y"}, nullptr}));
  EXPECT_EQ(parse_spec("('x', 'y')"), (P{{"x", "y"}}));
  EXPECT_EQ(parse_spec(""), P{});
  EXPECT_EQ(parse_spec("P()"), P{});
}

TEST(ParseSpec, MalformedSpecsNameTheOption) {
  for (const char* bad : {"(x,y", "x)", "((x))", "x,(y", "x(y)"}) {
    EXPECT_ERROR(parse_spec(bad), InvalidArgumentError, std::string("--spec '") + bad + "'");
  }
}

TEST(ParseShape, DimensionsAndErrors) {
  EXPECT_EQ(parse_shape("16,8"), (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(parse_shape(" 4 "), (std::vector<int64_t>{4}));
  EXPECT_EQ(parse_shape(""), std::vector<int64_t>{});
  EXPECT_ERROR(parse_shape("16,-8"), InvalidArgumentError, "--shape '16,-8'");
  EXPECT_ERROR(parse_shape("16,,8"), InvalidArgumentError, "--shape");
  EXPECT_ERROR(parse_shape("99999999999999999999"), InvalidArgumentError, "--shape");
}

std::string run(std::vector<std::string> args) {
  CLI::App app;
  CLI::App* layout = app.add_subcommand("layout");
  LayoutCommand command(*layout);
  args.insert(args.begin(), "layout");
  std::reverse(args.begin(), args.end());  // CLI11 takes them in reverse
  app.parse(args);
  std::ostringstream out;
  run_layout(command.options(), out);
  return out.str();
}

TEST(LayoutCommand, DrawsTheIssueExample) {
  EXPECT_EQ(run({"--mesh", "x=4,y=2", "--spec", "x,None", "--shape", "16,8"}),
            "NamedSharding(mesh=Mesh(x=4, y=2), spec=PartitionSpec('x', None)) of shape "
            "(16, 8): shards of shape (4, 8)\n"
            "┌─────┐\n"
            "│ 0,1 │\n"
            "├─────┤\n"
            "│ 2,3 │\n"
            "├─────┤\n"
            "│ 4,5 │\n"
            "├─────┤\n"
            "│ 6,7 │\n"
            "└─────┘\n");
}

TEST(LayoutCommand, ErrorsNameTheDefect) {
  EXPECT_ERROR(run({"--mesh", "4", "--spec", "y", "--shape", "8"}), Error, "'y'");
  EXPECT_ERROR(run({"--mesh", "4", "--spec", "x", "--shape", "6"}), ShapeError, "6");
  EXPECT_ERROR(run({"--mesh", "4", "--spec", "x", "--shape", "4,4,4"}), ShapeError, "1-D and 2-D");
  EXPECT_THROW(run({"--mesh", "4", "--shape", "8"}), CLI::ParseError);  // --spec is required
}

}  // namespace
}  // namespace meshsim::cli
