#include "tools/sim/csv.h"

#include <random>

#include <gtest/gtest.h>

namespace dljob::scheduler::sim {
namespace {

std::vector<std::vector<std::string>> Texts(const std::vector<CsvRow>& rows) {
  std::vector<std::vector<std::string>> out;
  for (const CsvRow& r : rows) {
    out.emplace_back();
    for (const CsvField& f : r.fields) out.back().push_back(f.text);
  }
  return out;
}

TEST(ParseCsv, FieldsQuotesLineEndsAndBlankLines) {
  auto rows = ParseCsv("f.csv", "a,b,c\r\n\n1,\"x, \"\"y\"\"\",\n  \n\"multi\nline\",2,3");
  ASSERT_TRUE(rows.ok()) << rows.status().message();
  EXPECT_EQ(Texts(*rows), (std::vector<std::vector<std::string>>{
                              {"a", "b", "c"}, {"1", "x, \"y\"", ""}, {"multi\nline", "2", "3"}}));
  EXPECT_EQ((*rows)[1].line, 3);
  EXPECT_EQ((*rows)[1].fields[1].column, 3);
  EXPECT_EQ((*rows)[2].fields[1].line, 6);
  EXPECT_EQ((*rows)[2].fields[1].column, 7);
}

TEST(ParseCsv, ErrorsSayWhere) {
  struct Case {
    std::string text, error;
  };
  const Case cases[] = {
      {"a,b\n1,\"open", "f.csv:2:3: a quoted field has no closing quote"},
      {"a,b\n1,x\"y", "f.csv:2:4: a quote inside an unquoted field (quote the whole field)"},
      {"a,b\n\"q\"x,1",
       "f.csv:2:4: unexpected \"x\" after a quoted field (expected a comma or a line end)"},
  };
  for (const Case& c : cases) {
    auto rows = ParseCsv("f.csv", c.text);
    ASSERT_FALSE(rows.ok()) << c.text;
    EXPECT_EQ(rows.status().message(), c.error);
  }
}

TEST(CsvTable, ColumnsByHeaderNameAndTypedFields) {
  auto t =
      CsvTable::Parse("t.csv", " Name ,COUNT,extra\nx, 12 ,z\ny,,\nz,1e3,\n", {"name", "count"});
  ASSERT_TRUE(t.ok()) << t.status().message();
  ASSERT_EQ(t->rows().size(), 3u);
  EXPECT_EQ(t->Text(t->rows()[0], "name"), "x");
  EXPECT_EQ(*t->Int(t->rows()[0], "count", 0, 100), 12);
  EXPECT_EQ(*t->Int(t->rows()[1], "count", 0, 100, 7), 7);
  EXPECT_EQ(t->Int(t->rows()[1], "count", 0, 100).status().message(),
            "t.csv:3:3: count: missing; expected a whole number");
  EXPECT_EQ(t->Int(t->rows()[2], "count", 0, 100).status().message(),
            "t.csv:4:3: count: expected a whole number, got \"1e3\"");
  EXPECT_EQ(t->Int(t->rows()[0], "count", 0, 10).status().message(),
            "t.csv:2:3: count: must be between 0 and 10, got 12");
  EXPECT_EQ(t->Text(t->rows()[0], "absent"), "");
}

TEST(CsvTable, HeaderProblems) {
  EXPECT_EQ(CsvTable::Parse("t.csv", "", {"name"}).status().message(),
            "t.csv:1:1: empty file; expected a header row naming the columns (name, ...)");
  EXPECT_EQ(CsvTable::Parse("t.csv", "\n\nid,x\n", {"name", "x"}).status().message(),
            "t.csv:3:1: the header has no \"name\" column (expected name,x, ...)");
  EXPECT_EQ(CsvTable::Parse("t.csv", "name,x,NAME\n", {"name"}).status().message(),
            "t.csv:1:8: column \"name\" appears twice");
}

// Random bytes, and random mixes of the bytes CSV cares about, never crash the parser: they give
// rows or an error naming the file.
TEST(ParseCsv, RandomBytesNeverCrash) {
  std::mt19937 rng(7);
  const char alphabet[] = {',', '"', '\n', '\r', ' ', 'a', '1', '\0', '\xff', '='};
  for (int i = 0; i < 20000; ++i) {
    std::string text(rng() % 64, '\0');
    for (char& c : text) {
      c = i % 2 ? static_cast<char>(rng()) : alphabet[rng() % sizeof alphabet];
    }
    auto rows = ParseCsv("r.csv", text);
    if (!rows.ok()) {
      EXPECT_EQ(rows.status().message().rfind("r.csv:", 0), 0u) << rows.status().message();
    }
    auto table = CsvTable::Parse("r.csv", text, {"a"});
    if (table.ok()) {
      for (const CsvRow& r : table->rows()) (void)table->Int(r, "a", 0, 10, 0);
    }
  }
}

TEST(Quote, ShowsAnyBytesPrintablyAndShort) {
  EXPECT_EQ(Quote("ok"), "\"ok\"");
  EXPECT_EQ(Quote(std::string("a\0\"\xff", 4)), "\"a\\x00\\\"\\xff\"");
  EXPECT_EQ(Quote(std::string(50, 'x')), "\"" + std::string(40, 'x') + "...\"");
}

}  // namespace
}  // namespace dljob::scheduler::sim
