//===- NpyTest.cpp - .npy files
//---------------------------------------------===//

#include "ein/npy.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace ein;

namespace {
std::string tempPath(const std::string &name) {
  return ::testing::TempDir() + "/ein-npy-" + name;
}
} // namespace

TEST(Npy, RoundTripsEveryType) {
  for (DType t : {DType::F64, DType::F32, DType::F16, DType::BF16, DType::I64,
                  DType::I32, DType::I1}) {
    HostTensor out{t, {2, 3}, {0, 1, -2, 0.5, 3, 1}};
    std::string path = tempPath(std::string(dtypeName(t)) + ".npy"), error;
    ASSERT_TRUE(writeNpy(path, out, error)) << error;
    HostTensor in;
    ASSERT_TRUE(readNpy(path, t, in, error)) << error;
    EXPECT_EQ(in.shape, out.shape);
    for (size_t i = 0; i < out.data.size(); ++i)
      EXPECT_EQ(in.data[i], roundTo(t, out.data[i]))
          << dtypeName(t) << " " << i;
  }
}

TEST(Npy, ScalarsAndVectors) {
  std::string error;
  for (std::vector<int64_t> shape : {std::vector<int64_t>{}, {5}}) {
    HostTensor out{DType::F32, shape,
                   std::vector<double>(shape.empty() ? 1 : 5, 2.5)};
    std::string path = tempPath("shape.npy");
    ASSERT_TRUE(writeNpy(path, out, error)) << error;
    HostTensor in;
    ASSERT_TRUE(readNpy(path, DType::F32, in, error)) << error;
    EXPECT_EQ(in.shape, shape);
    EXPECT_EQ(in.data, out.data);
  }
}

TEST(Npy, HeaderIsWhatNumpyWrites) {
  HostTensor out{DType::BF16, {4}, {1, 2, 3, 4}};
  std::string path = tempPath("header.npy"), error;
  ASSERT_TRUE(writeNpy(path, out, error));
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), {});
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x93NUMPY\x01\x00", 8));
  EXPECT_NE(
      bytes.find("{'descr': '<u2', 'fortran_order': False, 'shape': (4,), }"),
      std::string::npos);
  EXPECT_EQ(bytes.size() % 64,
            8u); // data (8 bytes) starts on a 64-byte boundary
}

TEST(Npy, WrongTypeIsAnError) {
  HostTensor out{DType::F64, {2}, {1, 2}};
  std::string path = tempPath("f64.npy"), error;
  ASSERT_TRUE(writeNpy(path, out, error));
  HostTensor in;
  EXPECT_FALSE(readNpy(path, DType::F32, in, error));
  EXPECT_NE(error.find("holds '<f8' elements but f32 (<f4) is declared"),
            std::string::npos)
      << error;
}

TEST(Npy, TruncatedAndMissingFiles) {
  HostTensor out{DType::F32, {8}, std::vector<double>(8, 1)};
  std::string path = tempPath("trunc.npy"), error;
  ASSERT_TRUE(writeNpy(path, out, error));
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)), {});
  std::ofstream(path, std::ios::binary).write(bytes.data(), bytes.size() - 4);
  HostTensor in;
  EXPECT_FALSE(readNpy(path, DType::F32, in, error));
  EXPECT_NE(error.find("holds 28 data bytes but shape (8,) needs 32"),
            std::string::npos)
      << error;
  std::ofstream(path, std::ios::binary) << "not numpy";
  EXPECT_FALSE(readNpy(path, DType::F32, in, error));
  EXPECT_NE(error.find("missing the \\x93NUMPY magic"), std::string::npos)
      << error;
  EXPECT_FALSE(readNpy(tempPath("absent.npy"), DType::F32, in, error));
  EXPECT_NE(error.find("cannot open"), std::string::npos);
}
