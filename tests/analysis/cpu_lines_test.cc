#include "analysis/cpu_lines.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "analysis/cpu_pstats.h"

namespace strata::analysis {
namespace {

class CpuLinesTest : public ::testing::Test {
 protected:
  FrameId frame(const std::string& function, int decl_line, int sample_line) {
    Frame f{function, "/src/app.cc", decl_line, "/bin/app", 0, false};
    f.sample_line = sample_line;
    return profile_.frames.intern(f);
  }
  void sample(std::vector<FrameId> leaf_first) {
    Sample s;
    s.pid = s.tid = 1;
    s.weight_ns = 1'000'000;
    s.stack = std::move(leaf_first);
    profile_.samples.push_back(std::move(s));
  }
  Profile profile_;
};

TEST_F(CpuLinesTest, ByLineGivesOneRowPerSampledLine) {
  sample({frame("work", 10, 12), frame("main", 1, 5)});
  sample({frame("work", 10, 12), frame("main", 1, 5)});
  sample({frame("work", 10, 14), frame("main", 1, 5)});
  Profile lines = by_sample_line(profile_);
  auto index = index_functions(lines.frames);
  std::vector<std::string> labels;
  for (const auto& f : index.functions) labels.push_back(f.label);
  EXPECT_EQ(labels, (std::vector<std::string>{"/src/app.cc:12(work)", "/src/app.cc:5(main)",
                                              "/src/app.cc:14(work)"}));
}

TEST_F(CpuLinesTest, AnnotateCountsSelfAtTheLeafAndTotalAtTheInnermostFrame) {
  sample({frame("work", 10, 12), frame("main", 1, 5)});
  sample({frame("work", 10, 12), frame("main", 1, 5)});
  sample({frame("helper", 30, 31), frame("work", 10, 14), frame("main", 1, 5)});
  sample({frame("other", 40, 41)});
  auto a = annotate(profile_, "work");
  ASSERT_TRUE(a.ok()) << a.error().message;
  EXPECT_EQ(a->function, "work");
  EXPECT_EQ(a->decl_line, 10);
  EXPECT_EQ(a->self_ns, 2'000'000);
  EXPECT_EQ(a->total_ns, 3'000'000);
  EXPECT_EQ(a->profile_ns, 4'000'000);
  ASSERT_EQ(a->lines.size(), 2u);
  EXPECT_EQ(a->lines[0].line, 12);
  EXPECT_EQ(a->lines[0].self_ns, 2'000'000);
  EXPECT_EQ(a->lines[1].line, 14);
  EXPECT_EQ(a->lines[1].self_ns, 0);
  EXPECT_EQ(a->lines[1].total_ns, 1'000'000);
}

TEST_F(CpuLinesTest, AnnotatePicksTheBusiestMatchAndNamesTheOthers) {
  sample({frame("work_a", 10, 11)});
  sample({frame("work_b", 20, 21)});
  sample({frame("work_b", 20, 22)});
  auto a = annotate(profile_, "work");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->function, "work_b");
  EXPECT_EQ(a->also_matched, (std::vector<std::string>{"/src/app.cc:10(work_a)"}));
}

TEST_F(CpuLinesTest, AnnotateErrors) {
  sample({frame("work", 10, 0)});
  EXPECT_FALSE(annotate(profile_, "missing").ok());
  auto no_lines = annotate(profile_, "work");
  ASSERT_FALSE(no_lines.ok());
  EXPECT_NE(no_lines.error().message.find("no line information"), std::string::npos);
}

}  // namespace
}  // namespace strata::analysis
