// SPDX-License-Identifier: Apache-2.0
// Tests of the strict JSON reader on its own (wire_test covers it through the run upload): any
// JSON document comes back as its DOM, each limit is the caller's, and a violation names the
// path of the value at fault, through arrays as well as objects.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wire/json_check.h"

namespace perfwarden::wire {
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

// The elements of a streamed array reach the sink one by one, as each is complete (before the
// rest of the text is read), and the document keeps the array empty.
TEST(WireJsonCheck, StreamedElementsGoToTheSinkAsTheyComplete) {
  std::vector<std::string> seen;
  const StreamedArray streamed[] = {
      {{"series", "*", "blocks"},
       8,
       [&](json element, const std::string& path, const std::vector<size_t>& indices) {
         seen.push_back(path + "=" + element.dump() + " " + std::to_string(indices.at(0)) + "," +
                        std::to_string(indices.at(1)));
         return Result<void>();
       }},
      {{"series"}, 8, [&](json element, const std::string& path, const std::vector<size_t>&) {
         seen.push_back(path + "=" + element.dump());
         return Result<void>();
       }}};
  Result<json> root = ParseCheckedJson(
      R"({"a": 1, "series": [{"k": "x", "blocks": [[1], 2]}, 3], "z": {"series": [4]}})", {},
      streamed);
  ASSERT_TRUE(root.has_value()) << root.error().ToString();
  EXPECT_EQ(*root, json::parse(R"({"a": 1, "series": [], "z": {"series": [4]}})"));
  EXPECT_EQ(seen,
            (std::vector<std::string>{"series[0].blocks[0]=[1] 0,0", "series[0].blocks[1]=2 0,1",
                                      R"(series[0]={"blocks":[],"k":"x"})", "series[1]=3"}));
}

TEST(WireJsonCheck, ASinkErrorStopsTheParseBeforeTheRestIsRead) {
  int calls = 0;
  const StreamedArray streamed[] = {
      {{"results"}, 100, [&](json, const std::string& path, const std::vector<size_t>&) {
         ++calls;
         return Result<void>(InvalidArgument("bad element", path));
       }}};
  // The text after the first element is not even JSON: the sink's error is the answer.
  Result<json> root = ParseCheckedJson(R"({"results": [{}, {}, not json at all)", {}, streamed);
  ASSERT_FALSE(root.has_value());
  EXPECT_EQ(root.error().field, "results[0]");
  EXPECT_EQ(root.error().message, "bad element");
  EXPECT_EQ(calls, 1);
}

TEST(WireJsonCheck, EachStreamedElementAndTheRestHaveTheirOwnBound) {
  const StreamedArray streamed[] = {
      {{"results"}, 3, [](json, const std::string&, const std::vector<size_t>&) {
         return Result<void>();
       }}};
  JsonLimits limits;
  limits.max_elements = 3;  // the root, "results" and "other"
  // Any number of elements of up to 3 values each.
  EXPECT_TRUE(
      ParseCheckedJson(R"({"results": [[1, 2], [3, 4], [5, 6]], "other": 1})", limits, streamed)
          .has_value());
  Result<json> big = ParseCheckedJson(R"({"results": [[1, 2], [3, 4, 5]]})", limits, streamed);
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().field, "results[1][2]");
  EXPECT_EQ(big.error().message, "an element of results holds more than 3 JSON values");
  Result<json> rest = ParseCheckedJson(R"({"results": [], "other": [1]})", limits, streamed);
  ASSERT_FALSE(rest.has_value());
  EXPECT_EQ(rest.error().field, "other[0]");
  EXPECT_EQ(rest.error().message, "JSON body has more than 3 elements (values)");
}

TEST(WireJsonCheck, AnObjectRootIsRequiredAtTheFirstByte) {
  JsonLimits limits;
  limits.object_root = true;
  limits.max_elements = 1;
  // Refused before its first element is read, whatever follows.
  Result<json> array = ParseCheckedJson("[{}, {}, not json", limits);
  ASSERT_FALSE(array.has_value());
  EXPECT_EQ(array.error().field, "");
  EXPECT_EQ(array.error().message, "the body must be a JSON object, got an array");
  EXPECT_EQ(ParseCheckedJson("12", limits).error().message,
            "the body must be a JSON object, got a number");
  EXPECT_TRUE(ParseCheckedJson("{}", limits).has_value());
}

TEST(WireJsonCheck, Paths) {
  EXPECT_EQ(FieldPath("", "id"), "id");
  EXPECT_EQ(FieldPath("commit", "sha"), "commit.sha");
  EXPECT_EQ(ElementPath("results", 3), "results[3]");
  EXPECT_EQ(FieldPath(ElementPath("results", 3), "values"), "results[3].values");
}

}  // namespace
}  // namespace perfwarden::wire
