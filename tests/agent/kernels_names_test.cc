// Kernels mode: STRATA_KERNEL_NAME matching (src/agent/kernels/name_match.h),
// ncu's base function name, and the skip/count window.
#include <gtest/gtest.h>

#include <string>

#include "agent/kernels/launch_window.h"
#include "agent/kernels/name_match.h"

namespace {

using strata::agent::kernels::base_name;
using strata::agent::kernels::KernelNameFilter;
using strata::agent::kernels::LaunchWindow;

TEST(KernelsBaseName, DropsReturnTypeParametersTemplatesAndScopes) {
  EXPECT_EQ(base_name("foo(float*, int)"), "foo");
  EXPECT_EQ(base_name("void foo(float*, int)"), "foo");
  EXPECT_EQ(base_name("void ns::inner::gemm<float, 128>(float const*, int)"), "gemm");
  EXPECT_EQ(base_name("std::pair<int, int> ns::make(int)"), "make");
  EXPECT_EQ(base_name("my_kernel"), "my_kernel");  // extern "C": not demangled
  EXPECT_EQ(base_name("void scale<(anonymous namespace)::Op>(float*)"), "scale");
}

TEST(KernelsBaseName, AnonymousNamespaceIsAScopeNotAParameterList) {
  EXPECT_EQ(base_name("(anonymous namespace)::scale(float*)"), "scale");
  EXPECT_EQ(base_name("void (anonymous namespace)::detail::fill<int>(int*, int)"), "fill");
}

TEST(KernelsBaseName, LambdasAndOperatorsInTemplateArgumentsAreSkipped) {
  // PyTorch's elementwise kernels: a lambda type (with its own parameter
  // list and braces) inside the template arguments.
  EXPECT_EQ(base_name("void at::native::elementwise_kernel<128, 4, "
                      "at::native::gpu_kernel_impl_nocast<at::native::BinaryFunctor<float, float, "
                      "float, at::native::binary_internal::MulFunctor<float> > >(at::"
                      "TensorIteratorBase&, at::native::BinaryFunctor<float, float, float, "
                      "at::native::binary_internal::MulFunctor<float> > const&)::{lambda(int)#1}>"
                      "(int, at::native::gpu_kernel_impl_nocast<float>(at::TensorIteratorBase&)::"
                      "{lambda(int)#1})"),
            "elementwise_kernel");
  EXPECT_EQ(base_name("void launch<Functor::operator()(int) const::{lambda()#1}>(int)"), "launch");
  EXPECT_EQ(base_name("void apply<&Foo::operator<, 3>(int)"), "apply");
  EXPECT_EQ(base_name("void shift<(3>>1)>(int)"), "shift");
}

TEST(KernelsBaseName, AnOperatorNameKeepsItsSymbol) {
  EXPECT_EQ(base_name("Foo::operator()(int) const"), "operator()");
}

TEST(KernelsNameFilter, UnsetMatchesEverything) {
  KernelNameFilter filter;
  char error[128];
  ASSERT_TRUE(filter.init(nullptr, error, sizeof(error)));
  EXPECT_TRUE(filter.matches("_Z3fooPf"));
  EXPECT_TRUE(filter.matches_everything());
  KernelNameFilter empty;
  ASSERT_TRUE(empty.init("", error, sizeof(error)));
  EXPECT_TRUE(empty.matches("anything"));
}

TEST(KernelsNameFilter, ExactNameIsTheBaseNameOrTheMangledName) {
  KernelNameFilter filter;
  char error[128];
  ASSERT_TRUE(filter.init("matmul_tiled", error, sizeof(error)));
  EXPECT_TRUE(filter.matches("_Z12matmul_tiledPKfS0_Pfi"));  // demangled, then cut
  EXPECT_TRUE(filter.matches("matmul_tiled"));               // extern "C"
  EXPECT_FALSE(filter.matches("_Z12matmul_naivePKfS0_Pfi"));
  EXPECT_FALSE(filter.matches("_Z13matmul_tiled2PKf"));  // a longer name is another kernel
  KernelNameFilter mangled;
  ASSERT_TRUE(mangled.init("_Z3fooPf", error, sizeof(error)));
  EXPECT_TRUE(mangled.matches("_Z3fooPf"));
  EXPECT_FALSE(mangled.matches("_Z3fooPi"));
  // Templates: the base name drops the arguments.
  KernelNameFilter templated;
  ASSERT_TRUE(templated.init("gemm", error, sizeof(error)));
  EXPECT_TRUE(templated.matches(
      "_ZN2ns4gemmIfLi128EEEvPKfi"));  // void ns::gemm<float, 128>(float const*, int)
  EXPECT_TRUE(templated.matches("_ZN2ns4gemmIfLi64EEEvPKfi"));
  // A mangled name is one instantiation (what diagnose asks for), not its siblings.
  KernelNameFilter one;
  ASSERT_TRUE(one.init("_ZN2ns4gemmIfLi128EEEvPKfi", error, sizeof(error)));
  EXPECT_TRUE(one.matches("_ZN2ns4gemmIfLi128EEEvPKfi"));
  EXPECT_FALSE(one.matches("_ZN2ns4gemmIfLi64EEEvPKfi"));
}

TEST(KernelsNameFilter, RegexSearchesTheBaseName) {
  KernelNameFilter filter;
  char error[128];
  ASSERT_TRUE(filter.init("regex:tiled|naive", error, sizeof(error)));
  EXPECT_TRUE(filter.matches("_Z12matmul_tiledPKfS0_Pfi"));
  EXPECT_TRUE(filter.matches("_Z12matmul_naivePKfS0_Pfi"));
  EXPECT_FALSE(filter.matches("_Z6reducePf"));
  // The base name only: "float" is in the parameter list, not the name.
  KernelNameFilter params;
  ASSERT_TRUE(params.init("regex:float", error, sizeof(error)));
  EXPECT_FALSE(params.matches("_Z6reducePf"));
  KernelNameFilter anchored;
  ASSERT_TRUE(anchored.init("regex:^gemm$", error, sizeof(error)));
  EXPECT_TRUE(anchored.matches("_ZN2ns4gemmIfLi128EEEvPKfi"));
  EXPECT_FALSE(anchored.matches("_Z5sgemmPf"));
}

TEST(KernelsNameFilter, ABadRegexMatchesNothingAndSaysWhy) {
  KernelNameFilter filter;
  char error[128] = "unset";
  EXPECT_FALSE(filter.init("regex:(unclosed", error, sizeof(error)));
  EXPECT_STRNE(error, "");
  EXPECT_STRNE(error, "unset");
  EXPECT_FALSE(filter.matches("_Z8unclosedv"));
}

TEST(KernelsLaunchWindow, SkipsThenCounts) {
  LaunchWindow window(2, 3);
  bool taken[8];
  for (bool& t : taken) t = window.take();
  EXPECT_FALSE(taken[0]);
  EXPECT_FALSE(taken[1]);
  EXPECT_TRUE(taken[2]);
  EXPECT_TRUE(taken[3]);
  EXPECT_TRUE(taken[4]);
  EXPECT_FALSE(taken[5]);
  EXPECT_TRUE(window.exhausted());
  EXPECT_EQ(window.matched(), 8u);
  EXPECT_EQ(window.profiled(), 3u);
}

TEST(KernelsLaunchWindow, UnlimitedNeverEndsAndZeroCountProfilesNothing) {
  LaunchWindow all(0, LaunchWindow::kUnlimited);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(all.take());
  EXPECT_FALSE(all.exhausted());
  LaunchWindow none(0, 0);
  EXPECT_TRUE(none.exhausted());
  EXPECT_FALSE(none.take());
  LaunchWindow one(1, 1);
  EXPECT_FALSE(one.exhausted());
  EXPECT_FALSE(one.take());
  EXPECT_TRUE(one.take());
  EXPECT_TRUE(one.exhausted());
}

}  // namespace
