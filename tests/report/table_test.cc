#include "report/table.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace strata::report {
namespace {

Table sample() {
  Table t;
  t.columns = {{"Name", Align::kLeft}, {"Total Time (ns)", Align::kRight}};
  t.rows = {{text_cell("cudaLaunchKernel"), number_cell(29570635, 0)},
            {text_cell("a,\"b\""), number_cell(1.5, 1)}};
  return t;
}

TEST(Table, TextAlignsColumns) {
  std::string out = render(sample(), Format::kTable);
  EXPECT_EQ(out,
            "Name              Total Time (ns)\n"
            "----------------  ---------------\n"
            "cudaLaunchKernel         29570635\n"
            "a,\"b\"                         1.5\n");
}

TEST(Table, CsvQuotesWhatNeedsIt) {
  EXPECT_EQ(render(sample(), Format::kCsv),
            "Name,Total Time (ns)\ncudaLaunchKernel,29570635\n\"a,\"\"b\"\"\",1.5\n");
}

TEST(Table, JsonKeepsNumbersAsNumbers) {
  auto doc = nlohmann::json::parse(render(sample(), Format::kJson));
  ASSERT_EQ(doc.size(), 2u);
  EXPECT_EQ(doc[0]["Name"], "cudaLaunchKernel");
  EXPECT_EQ(doc[0]["Total Time (ns)"], 29570635);
  EXPECT_EQ(doc[1]["Total Time (ns)"], 1.5);
}

TEST(Table, ControlBytesInCellsArePrintedEscaped) {
  Table t;
  t.columns = {{"Name", Align::kLeft}};
  t.rows = {{text_cell("evil\x1b]0;title\x07name")}};
  std::string out = render(t, Format::kTable);
  EXPECT_EQ(out.find('\x1b'), std::string::npos);
  EXPECT_NE(out.find("evil\\x1b]0;title\\x07name"), std::string::npos);
}

// A droppable column (compare's means) leaves the text only when the table
// does not fit with it; CSV and JSON always keep it.
TEST(Table, DroppableColumnsLeaveTheTextOnlyWhenItDoesNotFit) {
  Table t;
  t.columns = {{"Quantity", Align::kLeft}, {"Median"}, {"Mean", Align::kRight, nullptr, true}};
  t.rows = {{text_cell("wall"), number_cell(669.85, 2), number_cell(670.25, 2)}};
  // "Quantity  Median    Mean": 24 columns.
  set_text_width(24);
  EXPECT_EQ(fitted_for_text(t).columns.size(), 3u);
  EXPECT_NE(render(t, Format::kTable).find("670.25"), std::string::npos);
  set_text_width(23);
  const Table fitted = fitted_for_text(t);
  ASSERT_EQ(fitted.columns.size(), 2u);
  EXPECT_EQ(fitted.columns[1].name, "Median");
  ASSERT_EQ(fitted.rows.size(), 1u);
  EXPECT_EQ(fitted.rows[0][1].text, "669.85");
  const std::string text = render(t, Format::kTable);
  EXPECT_EQ(text.find("Mean"), std::string::npos) << text;
  EXPECT_NE(render(t, Format::kCsv).find("670.25"), std::string::npos);
  set_text_width(0);
  EXPECT_NE(render(t, Format::kTable).find("670.25"), std::string::npos) << "no limit";
}

TEST(NumberCell, GroupsThousands) {
  EXPECT_EQ(number_cell(15368, 2, true).text, "15,368.00");
  EXPECT_EQ(number_cell(-1234567.891, 1, true).text, "-1,234,567.9");
  EXPECT_EQ(number_cell(999, 0, true).text, "999");
}

TEST(ParseFormat, NamesTheBadValue) {
  EXPECT_EQ(*parse_format("csv"), Format::kCsv);
  auto bad = parse_format("xml");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.error().message.find("'xml'"), std::string::npos);
}

}  // namespace
}  // namespace strata::report
