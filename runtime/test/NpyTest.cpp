//===- NpyTest.cpp - .npy files
//---------------------------------------------===//

#include "ein/npy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <thread>

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

namespace {

/// A fresh directory under the test's temporary directory.
std::string freshDirectory(const std::string &name) {
  std::string dir = tempPath(name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::string fileBytes(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(file)), {});
}

/// The names in `dir`, sorted.
std::vector<std::string> namesIn(const std::string &dir) {
  std::vector<std::string> names;
  for (const auto &entry : std::filesystem::directory_iterator(dir))
    names.push_back(entry.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

} // namespace

TEST(Npy, NoFixedStagingName) {
  // A directory, and a file, at the name a writer once staged to
  // (PATH.partial) neither stop the write nor are touched by it.
  std::string dir = freshDirectory("staging");
  HostTensor out{DType::F32, {3}, {1, 2, 3}};
  std::string error;
  std::filesystem::create_directories(dir + "/a.npy.partial");
  std::ofstream(dir + "/a.npy.partial/kept") << "kept";
  ASSERT_TRUE(writeNpy(dir + "/a.npy", out, error)) << error;
  std::ofstream(dir + "/b.npy.partial") << "kept";
  ASSERT_TRUE(writeNpy(dir + "/b.npy", out, error)) << error;
  EXPECT_EQ(fileBytes(dir + "/a.npy.partial/kept"), "kept");
  EXPECT_EQ(fileBytes(dir + "/b.npy.partial"), "kept");
  EXPECT_EQ(namesIn(dir), (std::vector<std::string>{"a.npy", "a.npy.partial",
                                                    "b.npy", "b.npy.partial"}));
  HostTensor in;
  ASSERT_TRUE(readNpy(dir + "/b.npy", DType::F32, in, error)) << error;
  EXPECT_EQ(in.data, out.data);
}

TEST(Npy, AFailedWriteLeavesTheTargetAndNoStagingFile) {
  // The target is a directory: the rename fails, the directory keeps what
  // it held, and no staging file is left beside it.
  std::string dir = freshDirectory("failed");
  std::filesystem::create_directories(dir + "/out.npy");
  std::ofstream(dir + "/out.npy/kept") << "kept";
  HostTensor out{DType::F32, {3}, {1, 2, 3}};
  std::string error;
  EXPECT_FALSE(writeNpy(dir + "/out.npy", out, error));
  EXPECT_NE(error.find("out.npy"), std::string::npos) << error;
  EXPECT_EQ(fileBytes(dir + "/out.npy/kept"), "kept");
  EXPECT_EQ(namesIn(dir), std::vector<std::string>{"out.npy"});
  // A directory that does not exist: nothing is created.
  EXPECT_FALSE(writeNpy(dir + "/absent/out.npy", out, error));
  EXPECT_NE(error.find("cannot write '" + dir + "/absent/out.npy'"),
            std::string::npos)
      << error;
  EXPECT_EQ(namesIn(dir), std::vector<std::string>{"out.npy"});
}

TEST(Npy, ConcurrentWritersLeaveOneWholeFile) {
  // Two writers of one path at once, 20 times: each succeeds, and the file
  // is always one of the two tensors whole, never a mix; no staging file
  // is left. (Large enough that the writes overlap.)
  std::string dir = freshDirectory("race");
  std::string path = dir + "/out.npy";
  const int64_t n = 1 << 20;
  HostTensor a{DType::F32, {n}, std::vector<double>(n, 1)},
      b{DType::F32, {n}, std::vector<double>(n, 2)};
  std::string aPath = dir + "/a.ref", bPath = dir + "/b.ref", error;
  ASSERT_TRUE(writeNpy(aPath, a, error)) << error;
  ASSERT_TRUE(writeNpy(bPath, b, error)) << error;
  std::string aBytes = fileBytes(aPath), bBytes = fileBytes(bPath);
  std::filesystem::remove(aPath);
  std::filesystem::remove(bPath);
  for (int pair = 0; pair < 20; ++pair) {
    std::atomic<int> ready{0};
    bool okA = false, okB = false;
    std::string errorA, errorB;
    auto writer = [&](const HostTensor &t, bool &ok, std::string &e) {
      ++ready;
      while (ready < 2) {
      }
      ok = writeNpy(path, t, e);
    };
    std::thread first(writer, std::cref(a), std::ref(okA), std::ref(errorA));
    std::thread second(writer, std::cref(b), std::ref(okB), std::ref(errorB));
    first.join();
    second.join();
    EXPECT_TRUE(okA) << "pair " << pair << ": " << errorA;
    EXPECT_TRUE(okB) << "pair " << pair << ": " << errorB;
    std::string got = fileBytes(path);
    EXPECT_TRUE(got == aBytes || got == bBytes)
        << "pair " << pair << ": the file holds " << got.size()
        << " bytes, neither writer's whole tensor";
    EXPECT_EQ(namesIn(dir), std::vector<std::string>{"out.npy"})
        << "pair " << pair;
  }
}
