// SPDX-License-Identifier: Apache-2.0
// Tests of the error body and the one ErrorCode <-> HTTP status map: every code survives
// CodeOfStatus(StatusOf(code)), the body survives Decode(Encode(x)) byte for byte as the server
// writes it, and a body that is not one is refused with a message that says why.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "wire/error.h"

namespace perfwarden::wire {
namespace {

const std::vector<ErrorCode>& AllCodes() {
  static const std::vector<ErrorCode> codes = {
      ErrorCode::kInvalidArgument, ErrorCode::kNotFound,         ErrorCode::kConflict,
      ErrorCode::kUnauthenticated, ErrorCode::kPermissionDenied, ErrorCode::kUnavailable,
      ErrorCode::kInternal};
  return codes;
}

TEST(WireErrorStatus, EveryCodeRoundTripsThroughItsStatus) {
  for (ErrorCode code : AllCodes()) {
    EXPECT_EQ(CodeOfStatus(StatusOf(code)), code) << ErrorCodeName(code);
    EXPECT_EQ(ErrorCodeOfName(ErrorCodeName(code)), code) << ErrorCodeName(code);
  }
}

TEST(WireErrorStatus, TheDocumentedStatuses) {
  EXPECT_EQ(StatusOf(ErrorCode::kInvalidArgument), 400);
  EXPECT_EQ(StatusOf(ErrorCode::kUnauthenticated), 401);
  EXPECT_EQ(StatusOf(ErrorCode::kPermissionDenied), 403);
  EXPECT_EQ(StatusOf(ErrorCode::kNotFound), 404);
  EXPECT_EQ(StatusOf(ErrorCode::kConflict), 409);
  EXPECT_EQ(StatusOf(ErrorCode::kInternal), 500);
  EXPECT_EQ(StatusOf(ErrorCode::kUnavailable), 503);
}

TEST(WireErrorStatus, OtherStatusesReadAsRefusedOrFailed) {
  EXPECT_EQ(CodeOfStatus(401), ErrorCode::kUnauthenticated);
  for (int status : {405, 408, 413, 415, 429, 431, 302}) {
    EXPECT_EQ(CodeOfStatus(status), ErrorCode::kInvalidArgument) << status;
  }
  for (int status : {502, 504, 599}) {
    EXPECT_EQ(CodeOfStatus(status), ErrorCode::kUnavailable) << status;
  }
  EXPECT_EQ(ErrorCodeOfName("PAYLOAD_TOO_LARGE"), std::nullopt);
  EXPECT_EQ(ErrorCodeOfName("not_found"), std::nullopt);
}

TEST(WireErrorBody, EncodesTheServersShape) {
  EXPECT_EQ(EncodeErrorBody(Error{ErrorCode::kNotFound, "no run x", ""}),
            R"({"error":{"code":"NOT_FOUND","field":null,"message":"no run x"}})");
  EXPECT_EQ(
      EncodeErrorBody(Error{ErrorCode::kInvalidArgument, "must be positive", "results[0].values"}),
      R"({"error":{"code":"INVALID_ARGUMENT","field":"results[0].values","message":"must be positive"}})");
  EXPECT_EQ(EncodeErrorBody(ErrorBody{"PAYLOAD_TOO_LARGE", "too big", "", ""}),
            R"({"error":{"code":"PAYLOAD_TOO_LARGE","field":null,"message":"too big"}})");
}

TEST(WireErrorBody, TheRequestIdIsWrittenWhenThereIsOneAndReadBack) {
  const ErrorBody body{"UNAVAILABLE", "the database is unavailable", "", "0123456789abcdef"};
  const std::string text = EncodeErrorBody(body);
  EXPECT_EQ(
      text,
      R"({"error":{"code":"UNAVAILABLE","field":null,"message":"the database is unavailable",)"
      R"("request_id":"0123456789abcdef"}})");
  Result<ErrorBody> decoded = DecodeErrorBody(text);
  ASSERT_TRUE(decoded.has_value()) << text;
  EXPECT_EQ(*decoded, body);
}

TEST(WireErrorBody, EveryCodeRoundTrips) {
  for (ErrorCode code : AllCodes()) {
    for (const std::string& field : {std::string(), std::string("commit.sha")}) {
      const Error error{code, "what went wrong: \"quoted\" \xC3\xA9", field};
      Result<ErrorBody> body = DecodeErrorBody(EncodeErrorBody(error));
      ASSERT_TRUE(body.has_value()) << body.error().ToString();
      EXPECT_EQ(ErrorCodeOfName(body->code), code);
      EXPECT_EQ(body->message, error.message);
      EXPECT_EQ(body->field, field);
      EXPECT_EQ(EncodeErrorBody(*body), EncodeErrorBody(error));
    }
  }
}

TEST(WireErrorBody, InvalidUtf8IsReplacedNotRefused) {
  const std::string text = EncodeErrorBody(Error{ErrorCode::kInvalidArgument, "bad \xFF byte", ""});
  Result<ErrorBody> body = DecodeErrorBody(text);
  ASSERT_TRUE(body.has_value()) << text;
  EXPECT_EQ(body->message, "bad \xEF\xBF\xBD byte");
}

TEST(WireErrorBody, AbsentMembersReadAsEmpty) {
  Result<ErrorBody> body = DecodeErrorBody(R"({"error":{"message":"m"}})");
  ASSERT_TRUE(body.has_value());
  EXPECT_EQ(*body, (ErrorBody{"", "m", "", ""}));
}

TEST(WireErrorBody, WhatIsNotAnErrorBodyIsRefusedSayingWhy) {
  struct Case {
    const char* text;
    const char* message;
    const char* field;
  };
  for (const Case& c : {
           Case{"<html>502 Bad Gateway</html>", "not an error body: malformed JSON", ""},
           Case{"", "not an error body: malformed JSON", ""},
           Case{"[1]", "not an error body: an array, not an object", ""},
           Case{R"({"message":"x"})", "not an error body: no \"error\" object", "error"},
           Case{R"({"error":"x"})", "not an error body: no \"error\" object", "error"},
           Case{R"({"error":{"code":7}})", "expected a string, got a number", "error.code"},
           Case{R"({"error":{"field":[]}})", "expected a string, got an array", "error.field"},
       }) {
    Result<ErrorBody> body = DecodeErrorBody(c.text);
    ASSERT_FALSE(body.has_value()) << c.text;
    EXPECT_EQ(body.error().code, ErrorCode::kInvalidArgument) << c.text;
    EXPECT_EQ(body.error().message, c.message) << c.text;
    EXPECT_EQ(body.error().field, c.field) << c.text;
  }
}

}  // namespace
}  // namespace perfwarden::wire
