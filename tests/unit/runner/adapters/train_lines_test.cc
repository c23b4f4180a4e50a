// SPDX-License-Identifier: Apache-2.0
// perfwarden's JSON-lines protocol for training benchmarks (runner/adapters/train_lines.h): steps
// with warm-up flags and per-step values, summary metrics with units and directions, info, the
// end event; log lines ignored; every malformed event an error naming the line and the field.
#include "runner/adapters/train_lines.h"

#include <gtest/gtest.h>

namespace perfwarden::adapters {
namespace {

constexpr const char* kOutput = R"(loading data...
{"event":"info","key":"device","value":"NVIDIA H100 80GB HBM3"}
{"event":"info","key":"sm_count","value":132}
{"event":"step","step":0,"warmup":true,"time_s":0.5,"values":{"loss":2.5}}
{"event":"step","step":1,"warmup":true,"time_s":0.02,"values":{"loss":2.4}}
  {"event":"step","step":2,"warmup":false,"time_s":0.0101,"values":{"loss":2.3,"samples_per_s":25346.5}}
{"event":"step","step":3,"time_s":0.0099,"values":{"loss":2.2,"samples_per_s":25858.6}}
epoch done
{"event":"metric","name":"samples_per_s","value":25600,"unit":"samples/s","direction":"higher"}
{"event":"metric","name":"peak_memory_bytes","value":1.5e9,"unit":"bytes"}
{"event":"metric","name":"mfu","value":0.41,"unit":"ratio"}
{"event":"end"}
)";

TEST(TrainLines, ReadsStepsMetricsInfoAndTheEnd) {
  auto out = ReadTrainLines(kOutput, "mlp.log");
  ASSERT_TRUE(out.has_value()) << out.error().ToString();
  ASSERT_EQ(out->steps.size(), 4u);
  EXPECT_EQ(out->WarmupSteps(), 2u);
  EXPECT_TRUE(out->steps[0].warmup);
  EXPECT_FALSE(out->steps[3].warmup);  // absent: not warm-up
  EXPECT_DOUBLE_EQ(out->steps[2].time_s, 0.0101);
  EXPECT_DOUBLE_EQ(out->steps[2].values.at("samples_per_s"), 25346.5);
  ASSERT_EQ(out->metrics.size(), 3u);
  EXPECT_EQ(out->metrics[0].name, "samples_per_s");
  EXPECT_EQ(out->metrics[0].unit, "samples/s");
  EXPECT_EQ(out->metrics[0].direction, Direction::kHigherIsBetter);
  EXPECT_FALSE(out->metrics[1].direction.has_value());
  EXPECT_EQ(out->info.at("device"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(out->info.at("sm_count"), "132");
  EXPECT_TRUE(out->ended);
  EXPECT_TRUE(out->warnings.empty());
}

TEST(TrainLines, DirectionsByNameWhenNotGiven) {
  EXPECT_EQ(DefaultTrainDirection("samples_per_s"), Direction::kHigherIsBetter);
  EXPECT_EQ(DefaultTrainDirection("tokens_per_second"), Direction::kHigherIsBetter);
  EXPECT_EQ(DefaultTrainDirection("tflops"), Direction::kHigherIsBetter);
  EXPECT_EQ(DefaultTrainDirection("mfu"), Direction::kHigherIsBetter);
  EXPECT_EQ(DefaultTrainDirection("peak_memory_bytes"), Direction::kLowerIsBetter);
  EXPECT_EQ(DefaultTrainDirection("loss"), Direction::kLowerIsBetter);
  EXPECT_EQ(DefaultTrainDirection("step_time_p99"), Direction::kLowerIsBetter);
}

TEST(TrainLines, AMissingEndIsAWarning) {
  auto out = ReadTrainLines(R"({"event":"step","time_s":0.1})", "x.log");
  ASSERT_TRUE(out.has_value());
  ASSERT_EQ(out->warnings.size(), 1u);
  EXPECT_NE(out->warnings[0].find("no end event"), std::string::npos);
}

// Each malformed line is refused with its line number and field.
TEST(TrainLines, MalformedEventsNameTheLineAndTheField) {
  struct Case {
    const char* text;
    const char* field;
    const char* says;
  };
  const Case cases[] = {
      {"log\n{\"event\":\"step\",\"time_s\":", "", "x.log:2: not a JSON object"},
      {R"({"time_s":1})", "event", "is missing"},
      {R"({"event":"stp","time_s":1})", "event", "unknown event \"stp\""},
      {R"({"event":"step","time":1})", "time", "not a field of a step event"},
      {R"({"event":"step"})", "time_s", "is missing"},
      {R"({"event":"step","time_s":"1"})", "time_s", "must be a number"},
      {R"({"event":"step","time_s":-1})", "time_s", "must not be negative"},
      {R"({"event":"step","time_s":1,"warmup":"no"})", "warmup", "true or false"},
      {R"({"event":"step","time_s":1,"step":1.5})", "step", "must be an integer"},
      {R"({"event":"step","time_s":1,"values":{"loss":"x"}})", "values.loss", "finite number"},
      {R"({"event":"step","time_s":1,"values":{"a b":1}})", "values.a b", "not a valid metric"},
      {"{\"event\":\"step\",\"time_s\":1}\n{\"event\":\"step\",\"time_s\":1,\"warmup\":true}",
       "warmup", "x.log:2: warmup: a warm-up step after steady-state steps"},
      {R"({"event":"metric","value":1})", "name", "is missing"},
      {R"({"event":"metric","name":"m"})", "value", "is missing"},
      {R"({"event":"metric","name":"m","value":1,"direction":"up"})", "direction", "lower"},
      {"{\"event\":\"metric\",\"name\":\"m\",\"value\":1}\n"
       "{\"event\":\"metric\",\"name\":\"m\",\"value\":2}",
       "name", "printed twice"},
      {"{\"event\":\"end\"}\n{\"event\":\"step\",\"time_s\":1}", "event", "after the end event"},
      {R"({"event":"info","key":"k"})", "value", "is missing"},
  };
  for (const Case& c : cases) {
    auto out = ReadTrainLines(c.text, "x.log");
    ASSERT_FALSE(out.has_value()) << c.text;
    EXPECT_EQ(out.error().field, c.field) << c.text;
    EXPECT_NE(out.error().message.find(c.says), std::string::npos)
        << c.text << " -> " << out.error().message;
    EXPECT_EQ(out.error().message.rfind("x.log:", 0), 0u) << out.error().message;
  }
}

TEST(TrainLines, NonFiniteNumbersAreRefused) {
  // JSON has no NaN or Infinity; an exponent that overflows a double is refused by the parser.
  for (const char* text : {R"({"event":"step","time_s":1e999})", R"({"event":"step","time_s":NaN})",
                           R"({"event":"metric","name":"m","value":Infinity})"}) {
    auto out = ReadTrainLines(text, "x.log");
    ASSERT_FALSE(out.has_value()) << text;
    EXPECT_EQ(out.error().message.rfind("x.log:1:", 0), 0u) << out.error().message;
  }
}

TEST(TrainLines, OutputWithoutEventsIsAnError) {
  auto out = ReadTrainLines("epoch 1 loss 2.3\nepoch 2 loss 2.1\n", "x.log");
  ASSERT_FALSE(out.has_value());
  EXPECT_NE(out.error().message.find("docs/gpu.md"), std::string::npos);
  auto warm_only = ReadTrainLines(R"({"event":"step","time_s":1,"warmup":true})", "x.log");
  ASSERT_FALSE(warm_only.has_value());
}

}  // namespace
}  // namespace perfwarden::adapters
