// quote_text: how a user's text (an environment variable, a CLI value)
// appears in a message: printable ASCII as is, other bytes as \xNN, and a
// long text cut with its length. count_of: a count and its noun.

#include "meshsim/mesh/internal/format.h"

#include <gtest/gtest.h>

#include <string>

namespace meshsim::format_test {
namespace {

TEST(QuoteText, KeepsPrintableAsciiBetweenQuotes) {
  EXPECT_EQ(quote_text("cores"), "'cores'");
  EXPECT_EQ(quote_text(""), "''");
  EXPECT_EQ(quote_text(" a b "), "' a b '");
}

TEST(QuoteText, EscapesEveryOtherByte) {
  EXPECT_EQ(quote_text("none\n"), "'none\\x0a'");
  EXPECT_EQ(quote_text("\xff\x01"), "'\\xff\\x01'");
  EXPECT_EQ(quote_text("a\\b"), "'a\\x5cb'");  // a backslash cannot pass for an escape
  EXPECT_EQ(quote_text("it's"), "'it\\x27s'");  // nor a quote for the end
  EXPECT_EQ(quote_text(std::string("a\0b", 3)), "'a\\x00b'");
}

TEST(QuoteText, CutsALongTextAndSaysHowLongItWas) {
  EXPECT_EQ(quote_text(std::string(64, 'x')), "'" + std::string(64, 'x') + "'");
  EXPECT_EQ(quote_text(std::string(100'000, 'x')),
            "'" + std::string(64, 'x') + "'... (100000 bytes)");
  EXPECT_EQ(quote_text("abcdef", 3), "'abc'... (6 bytes)");
}

// The bound is on what the message shows: an escaped byte counts its four.
TEST(QuoteText, CountsAnEscapeAsTheCharactersItTakes) {
  EXPECT_EQ(quote_text(std::string(300, '\xe2'), 8), "'\\xe2\\xe2'... (300 bytes)");
  EXPECT_EQ(quote_text("ab\x01", 5), "'ab'... (3 bytes)");  // the escape would pass 5
  EXPECT_EQ(quote_text("ab\x01", 6), "'ab\\x01'");
  EXPECT_LE(quote_text(std::string(100'000, '\x01')).size(), 64u + 20);
}

// count_of: the noun agrees with the count.
TEST(CountOf, SingularForOneOnly) {
  EXPECT_EQ(count_of(1, "entry", "entries"), "1 entry");
  EXPECT_EQ(count_of(0, "entry", "entries"), "0 entries");
  EXPECT_EQ(count_of(2, "device"), "2 devices");
  EXPECT_EQ(count_of(1, "worker thread"), "1 worker thread");
}

}  // namespace
}  // namespace meshsim::format_test
