#include "analysis/cpp_names.h"

#include <gtest/gtest.h>

#include <string>

namespace strata::analysis {
namespace {

const std::string kString =
    "std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >";

TEST(CppNames, TheStandardLibrarysDefaultsAreLeftOut) {
  EXPECT_EQ(short_cpp_name(kString), "std::string");
  EXPECT_EQ(short_cpp_name("std::basic_string_view<char, std::char_traits<char> >"),
            "std::string_view");
  EXPECT_EQ(short_cpp_name("std::basic_ostream<wchar_t, std::char_traits<wchar_t> >"),
            "std::wostream");
  EXPECT_EQ(short_cpp_name("std::vector<" + kString + ", std::allocator<" + kString + " > >"),
            "std::vector<std::string>");
  EXPECT_EQ(short_cpp_name("std::map<int, double, std::less<int>, "
                           "std::allocator<std::pair<int const, double> > >"),
            "std::map<int, double>");
  EXPECT_EQ(short_cpp_name("std::unordered_map<" + kString + ", int, std::hash<" + kString +
                           ">, std::equal_to<" + kString + ">, std::allocator<std::pair<" +
                           kString + " const, int> > >"),
            "std::unordered_map<std::string, int>");
  EXPECT_EQ(short_cpp_name("std::unique_ptr<Foo, std::default_delete<Foo> >"),
            "std::unique_ptr<Foo>");
}

// The tutorial's own function, as the DWARF of examples/cpu_hotspot_lib.cc names it.
TEST(CppNames, CpuHotspotsFunctionsReadAsWritten) {
  EXPECT_EQ(short_cpp_name("cpu_hotspot::count_words_slow(std::vector<" + kString +
                           ", std::allocator<" + kString + " > > const&)"),
            "cpu_hotspot::count_words_slow(std::vector<std::string> const&)");
  EXPECT_EQ(short_cpp_name("cpu_hotspot::make_lines[abi:cxx11](long, unsigned long)"),
            "cpu_hotspot::make_lines(long, unsigned long)");
}

TEST(CppNames, ArgumentsThatAreNotDefaultsStay) {
  EXPECT_EQ(short_cpp_name("std::vector<int, MyAlloc<int> >"), "std::vector<int, MyAlloc<int>>");
  EXPECT_EQ(short_cpp_name("std::map<int, int, std::greater<int>, "
                           "std::allocator<std::pair<int const, int> > >"),
            "std::map<int, int, std::greater<int>>");  // the allocator after it is still a default
  EXPECT_EQ(short_cpp_name("std::basic_string<char, MyTraits, std::allocator<char> >"),
            "std::basic_string<char, MyTraits, std::allocator<char>>");
}

TEST(CppNames, OperatorsAreNotBrackets) {
  EXPECT_EQ(short_cpp_name("std::basic_ostream<char, std::char_traits<char> >& std::operator<< "
                           "<std::char_traits<char> >(std::basic_ostream<char, "
                           "std::char_traits<char> >&, char const*)"),
            "std::ostream& std::operator<< <std::char_traits<char>>(std::ostream&, char const*)");
  EXPECT_EQ(short_cpp_name("std::vector<int, std::allocator<int> >::operator[](unsigned long)"),
            "std::vector<int>::operator[](unsigned long)");
  EXPECT_EQ(short_cpp_name("bool std::operator< <int>(std::vector<int, std::allocator<int> > "
                           "const&, std::vector<int, std::allocator<int> > const&)"),
            "bool std::operator< <int>(std::vector<int> const&, std::vector<int> const&)");
  EXPECT_EQ(short_cpp_name("std::unique_ptr<A, std::default_delete<A> >::operator->() const"),
            "std::unique_ptr<A>::operator->() const");
}

TEST(CppNames, WhatItDoesNotFollowComesBackUnchanged) {
  EXPECT_EQ(short_cpp_name("main"), "main");
  EXPECT_EQ(short_cpp_name("<module>"), "<module>");  // no std::, not touched
  EXPECT_EQ(short_cpp_name("std::vector<int"), "std::vector<int");
  EXPECT_EQ(short_cpp_name("std::foo>"), "std::foo>");
  std::string deep = "std::vector<";
  for (int i = 0; i < 100; ++i) deep += "std::vector<";
  deep += "int";
  for (int i = 0; i < 101; ++i) deep += ">";
  EXPECT_EQ(short_cpp_name(deep), deep);  // deeper than kMaxTemplateDepth
  std::string longest(kMaxShortenedName + 1, 'x');
  longest.replace(0, 5, "std::");
  EXPECT_EQ(short_cpp_name(longest), longest);
}

}  // namespace
}  // namespace strata::analysis
