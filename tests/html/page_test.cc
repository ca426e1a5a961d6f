#include "html/page.h"

#include <gtest/gtest.h>

#include "html/page_assets.h"

namespace strata::html {
namespace {

TEST(Page, CspHashIsBase64OfTheDigest) {
  // SHA-256 of the empty string.
  EXPECT_EQ(csp_hash_source("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            "sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=");
}

TEST(Page, PolicyForbidsNetworkAndNamesBothBlocks) {
  const std::string page = render_page(PageInput{});
  const size_t csp = page.find("Content-Security-Policy");
  ASSERT_NE(csp, std::string::npos);
  EXPECT_LT(csp, page.find("<style>"));
  EXPECT_NE(page.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(page.find(csp_hash_source(kPageScriptSha256Hex)), std::string::npos);
  EXPECT_NE(page.find(csp_hash_source(kPageStyleSha256Hex)), std::string::npos);
  EXPECT_EQ(page.find("unsafe-inline"), std::string::npos);
  EXPECT_EQ(kPageScriptSha256Hex.size(), 64u);
}

TEST(Page, HostileNamesStayInsideTheDataBlock) {
  PageInput in;
  in.title = "</script><script>alert(1)</script>";
  report::GpuReport r;
  r.table.columns = {{"Time (%)"}, {"Name", report::Align::kLeft}};
  r.table.rows = {{report::number_cell(12.5, 1), report::text_cell("]]><b>\"q\"</b>")},
                  {report::number_cell(1, 1), report::text_cell(std::string(100000, 'x'))}};
  in.tables.push_back({"cuda_gpu_kern_sum", "Kernels", r});
  const std::string page = render_page(in);
  // Two blocks end in </script>: the data and the page's script.
  size_t closes = 0;
  for (size_t at = page.find("</script>"); at != std::string::npos;
       at = page.find("</script>", at + 1)) {
    ++closes;
  }
  EXPECT_EQ(closes, 2u);
  EXPECT_EQ(page.find("<b>"), std::string::npos);
  // The data block parses back to the names, unchanged.
  const std::string open = "<script type=\"application/json\" id=\"strata-data\">";
  const size_t from = page.find(open) + open.size();
  auto data = nlohmann::json::parse(page.substr(from, page.find("</script>", from) - from));
  EXPECT_EQ(data["title"], in.title);
  EXPECT_EQ(data["tables"][0]["rows"][0][1], "]]><b>\"q\"</b>");
  EXPECT_EQ(data["tables"][0]["rows"][0][0], nlohmann::json({"12.5", 12.5}));
  EXPECT_EQ(data["tables"][0]["rows"][1][1].get<std::string>().size(), 100000u);
  EXPECT_EQ(data["tables"][0]["columns"][1]["right"], false);
}

}  // namespace
}  // namespace strata::html
