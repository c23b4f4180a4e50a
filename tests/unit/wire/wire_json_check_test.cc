// Tests of the strict JSON reader on its own (wire_test covers it through the run upload): any
// JSON document comes back as its DOM, each limit is the caller's, and a violation names the
// path of the value at fault, through arrays as well as objects.
#include <gtest/gtest.h>

#include <string>

#include "wire/json_check.h"

namespace perfgate::wire {
namespace {

using nlohmann::json;

TEST(WireJsonCheck, AnyDocumentComesBackAsItsDom) {
  Result<json> array = ParseCheckedJson(R"([1, "two", {"three": [3.5, null, true]}])");
  ASSERT_TRUE(array.has_value()) << array.error().ToString();
  EXPECT_EQ(*array, json::parse(R"([1, "two", {"three": [3.5, null, true]}])"));
  Result<json> scalar = ParseCheckedJson("\"text\"");
  ASSERT_TRUE(scalar.has_value());
  EXPECT_EQ(*scalar, json("text"));
}

TEST(WireJsonCheck, LimitsAreTheCallers) {
  const JsonLimits tight{/*max_string=*/3, /*max_depth=*/2};
  EXPECT_TRUE(ParseCheckedJson(R"({"abc": ["xyz"]})", tight).has_value());
  Result<json> deep = ParseCheckedJson(R"({"a": [[1]]})", tight);
  ASSERT_FALSE(deep.has_value());
  EXPECT_EQ(deep.error().field, "a[0]");
  EXPECT_EQ(deep.error().message, "JSON nesting deeper than 2 levels");
  Result<json> long_string = ParseCheckedJson(R"({"a": ["ok", "long"]})", tight);
  ASSERT_FALSE(long_string.has_value());
  EXPECT_EQ(long_string.error().field, "a[1]");
  EXPECT_EQ(long_string.error().message, "string longer than 3 bytes");
  Result<json> long_key = ParseCheckedJson(R"({"a": {"long": 1}})", tight);
  ASSERT_FALSE(long_key.has_value());
  EXPECT_EQ(long_key.error().field, "a");
  EXPECT_EQ(long_key.error().message, "key longer than 3 bytes");
}

TEST(WireJsonCheck, ElementsAreCountedBeforeTheDomGrowsPastTheLimit) {
  JsonLimits limits;
  limits.max_elements = 4;  // the root, "a", and two values in it
  EXPECT_TRUE(ParseCheckedJson(R"({"a": [1, {}]})", limits).has_value());
  Result<json> many = ParseCheckedJson(R"({"a": [1, {}, 3]})", limits);
  ASSERT_FALSE(many.has_value());
  EXPECT_EQ(many.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(many.error().field, "a[2]");
  EXPECT_EQ(many.error().message, "JSON body has more than 4 elements (values)");
  // Values in objects and nested containers count as well as array elements.
  Result<json> members = ParseCheckedJson(R"({"a": 1, "b": {"c": [true]}})", limits);
  ASSERT_FALSE(members.has_value());
  EXPECT_EQ(members.error().field, "b.c[0]");
  // The default bounds nothing but the body size: run uploads keep their own checks.
  std::string wide = "[";
  for (int i = 0; i < 200000; ++i) wide += i == 0 ? "0" : ",0";
  EXPECT_TRUE(ParseCheckedJson(wide + "]").has_value());
}

TEST(WireJsonCheck, ViolationsNameTheirPathThroughArrays) {
  Result<json> duplicate = ParseCheckedJson(R"([{}, {"k": 1, "k": 2}])");
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_EQ(duplicate.error().code, ErrorCode::kInvalidArgument);
  EXPECT_EQ(duplicate.error().field, "[1].k");
  EXPECT_EQ(duplicate.error().message, "duplicate key");
  Result<json> nul = ParseCheckedJson(R"({"a": [["x", "y\u0000"]]})");
  ASSERT_FALSE(nul.has_value());
  EXPECT_EQ(nul.error().field, "a[0][1]");
  EXPECT_EQ(nul.error().message, "string contains a NUL character (U+0000)");
}

TEST(WireJsonCheck, MalformedTextNamesLineAndColumn) {
  Result<json> bad = ParseCheckedJson("{\n  \"a\": NaN\n}");
  ASSERT_FALSE(bad.has_value());
  EXPECT_EQ(bad.error().field, "");
  EXPECT_EQ(bad.error().message.rfind("malformed JSON at line 2, column 8: NaN and Infinity", 0),
            0u)
      << bad.error().message;
  EXPECT_FALSE(ParseCheckedJson("").has_value());
  EXPECT_FALSE(ParseCheckedJson("{} {}").has_value());
}

TEST(WireJsonCheck, Paths) {
  EXPECT_EQ(FieldPath("", "id"), "id");
  EXPECT_EQ(FieldPath("commit", "sha"), "commit.sha");
  EXPECT_EQ(ElementPath("results", 3), "results[3]");
  EXPECT_EQ(FieldPath(ElementPath("results", 3), "values"), "results[3].values");
}

}  // namespace
}  // namespace perfgate::wire
