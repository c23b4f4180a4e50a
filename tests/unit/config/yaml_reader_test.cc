// SPDX-License-Identifier: Apache-2.0
// The YAML reading layer both configuration files share: located messages in each file's
// position style, mapping keys, typed scalars, and the text parsers (integers, numbers, byte
// sizes, booleans) with the wordings the two files print.
#include "config/yaml_reader.h"

#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfwarden::config {
namespace {

constexpr std::array<std::string_view, 4> kKeys = {"name", "count", "ratio", "on"};

struct ReadResult {
  bool ok = true;
  std::string message;
  std::string field;
  std::string name;
  int count = 0;
  std::optional<double> ratio;
  bool on = false;
};

// Reads the mapping of `yaml` with every typed accessor, as perfwarden.yaml's sections do.
ReadResult ReadAll(std::string_view yaml, Position position) {
  YamlReader r("test.yaml", position);
  ReadResult out;
  if (std::optional<YAML::Node> root = r.Load(yaml); root) {
    const Map map = r.ReadMap(*root, YAML::Mark(), "section", kKeys);
    r.Require(map, "name");
    r.Text(map, "name", &out.name, Check::kName);
    r.Integer(map, "count", 1, 10, &out.count);
    r.Positive(map, "ratio", 0, 1, &out.ratio);
    r.Bool(map, "on", &out.on);
  }
  if (!r.ok()) {
    out.ok = false;
    out.message = r.error().message;
    out.field = r.error().field;
    EXPECT_EQ(r.error().code, ErrorCode::kInvalidArgument);
  }
  return out;
}

TEST(YamlReader, ReadsTypedValues) {
  const ReadResult read =
      ReadAll("name: a-b.c\ncount: 7\nratio: 0.5\non: TRUE\n", Position::kLineColumn);
  ASSERT_TRUE(read.ok) << read.message;
  EXPECT_EQ(read.name, "a-b.c");
  EXPECT_EQ(read.count, 7);
  EXPECT_EQ(read.ratio, 0.5);
  EXPECT_TRUE(read.on);
}

TEST(YamlReader, LocatesTheFirstProblem) {
  struct Case {
    std::string yaml;
    Position position;
    std::string message;
    std::string field;
  };
  const std::vector<Case> cases = {
      {"name: x\ncount: many\n", Position::kLineColumn,
       "test.yaml:2:8: section.count: expected an integer, got \"many\"", "section.count"},
      {"name: x\ncount: many\n", Position::kLine,
       "test.yaml:2: section.count: expected an integer, got \"many\"", "section.count"},
      {"name: x\ncount: 011\n", Position::kLineColumn,
       "test.yaml:2:8: section.count: must be in [1, 10], got 011", "section.count"},
      {"name: x\nratio: 0\n", Position::kLineColumn,
       "test.yaml:2:8: section.ratio: must be in (0, 1], got 0", "section.ratio"},
      {"name: x\nratio: inf\n", Position::kLineColumn,
       "test.yaml:2:8: section.ratio: expected a number, got \"inf\"", "section.ratio"},
      {"name: x\non: yes\n", Position::kLineColumn,
       "test.yaml:2:5: section.on: expected true or false, got \"yes\"", "section.on"},
      {"name: x\ncount:\n", Position::kLineColumn, "test.yaml:2:1: section.count: has no value",
       "section.count"},
      {"name: [x]\n", Position::kLineColumn, "test.yaml:1:7: section.name: expected a single value",
       "section.name"},
      {"name: a b\n", Position::kLineColumn,
       "test.yaml:1:7: section.name: must be 1..200 characters from [A-Za-z0-9_.-], got \"a b\"",
       "section.name"},
      {"name: x\nnmae: y\n", Position::kLineColumn,
       "test.yaml:2:1: section.nmae: unknown key (allowed: name, count, ratio, on)",
       "section.nmae"},
      {"name: x\nname: y\n", Position::kLine, "test.yaml:2: section.name: duplicate key",
       "section.name"},
      {"[a]: x\n", Position::kLineColumn, "test.yaml:1:1: section: keys must be plain names",
       "section"},
      {"count: 2\n", Position::kLineColumn, "test.yaml:1:1: section: missing required key name",
       "section"},
      {"- 1\n", Position::kLineColumn,
       "test.yaml:1:1: section: must be a mapping of keys to values", "section"},
      // The first problem wins; the later ones are not reported.
      {"count: 0\nratio: 2\n", Position::kLineColumn,
       "test.yaml:1:1: section: missing required key name", "section"},
  };
  for (const Case& c : cases) {
    const ReadResult read = ReadAll(c.yaml, c.position);
    EXPECT_FALSE(read.ok) << c.yaml;
    EXPECT_EQ(read.message, c.message) << c.yaml;
    EXPECT_EQ(read.field, c.field) << c.yaml;
  }
}

TEST(YamlReader, InvalidYamlIsLocatedInEachStyle) {
  for (Position position : {Position::kLineColumn, Position::kLine}) {
    YamlReader r("test.yaml", position);
    EXPECT_FALSE(r.Load("a: [1\n").has_value());
    ASSERT_FALSE(r.ok());
    const std::string prefix = position == Position::kLineColumn ? "test.yaml:2:1: invalid YAML: "
                                                                 : "test.yaml:2: invalid YAML: ";
    EXPECT_EQ(r.error().message.substr(0, prefix.size()), prefix) << r.error().message;
    EXPECT_EQ(r.error().field, "");
  }
}

TEST(YamlReader, ReadsStringLists) {
  YamlReader r("test.yaml", Position::kLineColumn);
  const std::optional<YAML::Node> root = r.Load("args: [--a, b]\nbad: [x, [y]]\nnone: x\n");
  ASSERT_TRUE(root.has_value());
  const Map map = r.ReadMap(*root, YAML::Mark(), "", {});
  std::vector<std::string> args;
  r.StringList(map, "args", &args);
  EXPECT_EQ(args, (std::vector<std::string>{"--a", "b"}));
  ASSERT_TRUE(r.ok());
  std::vector<std::string> bad;
  r.StringList(map, "bad", &bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "test.yaml:2:10: bad[1]: expected a single value");

  YamlReader scalar("test.yaml", Position::kLineColumn);
  const Map again = scalar.ReadMap(*root, YAML::Mark(), "", {});
  scalar.StringList(again, "none", &bad);
  EXPECT_EQ(scalar.error().message, "test.yaml:3:7: none: expected a list of strings");
}

TEST(YamlReader, FailsWithoutPositionForValuesFromElsewhere) {
  YamlReader r("test.yaml", Position::kLineColumn);
  r.FailWithoutPosition("testbed", "environment variable X: bad");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "environment variable X: bad");
  EXPECT_EQ(r.error().field, "testbed");
}

TEST(YamlReaderParse, Integers) {
  EXPECT_EQ(ParseInteger("42", 1, 100).value(), 42);
  EXPECT_EQ(ParseInteger("x", 1, 100, "an integer (milliseconds)").error().message,
            "expected an integer (milliseconds), got \"x\"");
  EXPECT_EQ(ParseInteger("", 1, 100).error().message, "expected an integer, got \"\"");
  EXPECT_EQ(ParseInteger("0100", 1, 10).error().message, "must be in [1, 10], got 100");
  EXPECT_EQ(ParseInteger("0100", 1, 10, "an integer", Echo::kText).error().message,
            "must be in [1, 10], got 0100");
  EXPECT_FALSE(ParseInteger("99999999999999999999", 1, 10).has_value());
}

TEST(YamlReaderParse, ByteSizes) {
  struct Case {
    std::string text;
    std::optional<std::int64_t> value;
    std::string message;
  };
  const std::vector<Case> cases = {
      {"1024", 1024, ""},
      {"32KiB", 32 << 10, ""},
      {"2MiB", 2 << 20, ""},
      {"1GiB", std::int64_t{1} << 30, ""},
      {"2GiB", std::nullopt, "must be in [1, 1073741824] bytes, got 2GiB"},
      {"0", std::nullopt, "must be in [1, 1073741824] bytes, got 0"},
      {"MiB", std::nullopt,
       "expected a byte count (an integer, optionally with KiB, MiB or GiB), got \"MiB\""},
      {"3 MiB", std::nullopt,
       "expected a byte count (an integer, optionally with KiB, MiB or GiB), got \"3 \""},
      {"-1", std::nullopt, "must be in [1, 1073741824] bytes, got -1"},
  };
  for (const Case& c : cases) {
    auto value = ParseByteSize(c.text, 1, std::int64_t{1} << 30);
    if (c.value) {
      ASSERT_TRUE(value.has_value()) << c.text << ": " << value.error().message;
      EXPECT_EQ(*value, *c.value) << c.text;
    } else {
      ASSERT_FALSE(value.has_value()) << c.text;
      EXPECT_EQ(value.error().message, c.message) << c.text;
    }
  }
}

TEST(YamlReaderParse, NumbersAndBooleans) {
  EXPECT_EQ(ParseBoundedNumber("3600", 0, 3600).value(), 3600);
  EXPECT_EQ(ParseBoundedNumber("0.5", 0, 0.5).value(), 0.5);
  EXPECT_EQ(ParseBoundedNumber("0.6", 0, 0.5).error().message, "must be in (0, 0.5], got 0.6");
  EXPECT_EQ(ParseBoundedNumber("nan", 0, 1).error().message, "expected a number, got \"nan\"");
  for (std::string_view yes : {"true", "True", "TRUE"}) EXPECT_TRUE(ParseBool(yes).value());
  for (std::string_view no : {"false", "False", "FALSE"}) EXPECT_FALSE(ParseBool(no).value());
  EXPECT_EQ(ParseBool("1").error().message, "expected true or false, got \"1\"");
}

TEST(YamlReaderParse, UnknownKeyListsTheKnownOnes) {
  EXPECT_EQ(UnknownKey("allowed", kKeys), "unknown key (allowed: name, count, ratio, on)");
  const std::vector<std::string_view> here = {"a", "b"};
  EXPECT_EQ(UnknownKey("known keys here", here), "unknown key (known keys here: a, b)");
}

TEST(YamlReaderParse, ReadConfigFileNamesTheMissingFile) {
  auto text = ReadConfigFile("/nonexistent/perfwarden.yaml");
  ASSERT_FALSE(text.has_value());
  EXPECT_EQ(text.error().message,
            "/nonexistent/perfwarden.yaml: cannot read the configuration file");
  EXPECT_EQ(text.error().field, "config");
}

}  // namespace
}  // namespace perfwarden::config
