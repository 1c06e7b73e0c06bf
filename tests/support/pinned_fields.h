// Field numbers pinned to an upstream proto: each message of `package` must have the field with
// that number, type and cardinality (the proto subsets in cri-api/ are checked this way).
#pragma once

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <string>

namespace dxshim::test {

struct PinnedField {
  const char* message;
  const char* field;
  int number;
  google::protobuf::FieldDescriptor::Type type;
  bool repeated;
};

template <typename Fields>
void ExpectPinnedFields(const std::string& package, const Fields& fields) {
  const auto* pool = google::protobuf::DescriptorPool::generated_pool();
  for (const auto& pin : fields) {
    SCOPED_TRACE(std::string(pin.message) + "." + pin.field);
    const auto* message = pool->FindMessageTypeByName(package + "." + pin.message);
    ASSERT_NE(message, nullptr);
    const auto* field = message->FindFieldByName(pin.field);
    ASSERT_NE(field, nullptr);
    EXPECT_EQ(field->number(), pin.number);
    EXPECT_EQ(field->type(), pin.type);
    EXPECT_EQ(field->is_repeated(), pin.repeated);
  }
}

}  // namespace dxshim::test
