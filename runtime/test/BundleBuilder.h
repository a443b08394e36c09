//===- BundleBuilder.h - Manifests and bundle directories for tests -*- C++
//-*-//

#ifndef EIN_TEST_BUNDLEBUILDER_H
#define EIN_TEST_BUNDLEBUILDER_H

#include "ProgramBuilder.h"

#include "ein/sha256.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace ein::test {

inline json buffer(const std::string &name, int device, int64_t offset,
                   json t) {
  return {{"name", name}, {"device", device}, {"offset", offset}, {"type", t}};
}

inline json block(const std::string &buffer, std::vector<int64_t> offset) {
  return {{"buffer", buffer}, {"offset", offset}};
}

inline json layout(json t, std::vector<json> blocks) {
  return {{"type", t}, {"blocks", blocks}};
}

inline json gemm(int device, const std::string &a, const std::string &b,
                 const std::string &c, std::vector<int> deps = {}) {
  return {{"kind", "library"},
          {"call", "gemm"},
          {"device", device},
          {"a", a},
          {"b", b},
          {"c", c},
          {"deps", deps}};
}

inline json attentionStep(int device, const std::string &q,
                          const std::string &k, const std::string &v,
                          const std::string &o, bool causal, int64_t diagonal,
                          double scale, std::vector<int> deps = {}) {
  return {{"kind", "library"},
          {"call", "attention"},
          {"device", device},
          {"q", q},
          {"k", k},
          {"v", v},
          {"o", o},
          {"causal", causal},
          {"diagonal", diagonal},
          {"scale", scale},
          {"deps", deps}};
}

inline json transfer(int device, const std::string &from, const std::string &to,
                     std::vector<int> deps = {}) {
  return {{"kind", "transfer"},
          {"device", device},
          {"from", from},
          {"to", to},
          {"deps", deps}};
}

inline json aggregate(int device, std::vector<std::string> inputs,
                      const std::string &output, std::vector<int> deps = {},
                      const std::string &op = "add") {
  return {{"kind", "aggregate"}, {"device", device}, {"op", op},
          {"inputs", inputs},    {"output", output}, {"deps", deps}};
}

inline json manifest(int devices, std::vector<int64_t> arenas,
                     std::vector<json> buffers, std::vector<json> inputs,
                     std::vector<json> outputs, std::vector<json> steps) {
  return {{"format", "ein-bundle"},
          {"version", 1},
          {"target", "cpu"},
          {"chip", "host"},
          {"devices", devices},
          {"arena_bytes", arenas},
          {"kernel_libraries", json::array()},
          {"buffers", buffers},
          {"inputs", inputs},
          {"outputs", outputs},
          {"steps", steps}};
}

/// C[8x6] = A[8x4] B[4x6] with the inner loop cut in two: each device
/// multiplies its halves, device 1 sends its partial to device 0, which
/// sums the two in place.
inline json splitMatmulManifest() {
  return manifest(
      2, {1024, 768},
      {buffer("A0", 0, 0, type({8, 2})), buffer("B0", 0, 256, type({2, 6})),
       buffer("P0", 0, 512, type({8, 6})), buffer("R0", 0, 768, type({8, 6})),
       buffer("A1", 1, 0, type({8, 2})), buffer("B1", 1, 256, type({2, 6})),
       buffer("P1", 1, 512, type({8, 6}))},
      {layout(type({8, 4}), {block("A0", {0, 0}), block("A1", {0, 2})}),
       layout(type({4, 6}), {block("B0", {0, 0}), block("B1", {2, 0})})},
      {layout(type({8, 6}), {block("P0", {0, 0})})},
      {gemm(0, "A0", "B0", "P0"), gemm(1, "A1", "B1", "P1"),
       transfer(1, "P1", "R0", {1}), aggregate(0, {"P0", "R0"}, "P0", {0, 2})});
}

/// Y[2x4] on device 0 gathered from two halves: device 0's X0 into columns
/// 0..2 and device 1's X1 into columns 2..4, with no dependency between
/// the two transfers.
inline json twoHalvesManifest() {
  json m = manifest(
      2, {512, 256},
      {buffer("X0", 0, 0, type({2, 2})), buffer("X1", 1, 0, type({2, 2})),
       buffer("Y", 0, 256, type({2, 4}))},
      {layout(type({2, 4}), {block("X0", {0, 0}), block("X1", {0, 2})})},
      {layout(type({2, 4}), {block("Y", {0, 0})})},
      {transfer(0, "X0", "Y"), transfer(1, "X1", "Y")});
  m["steps"][0]["to_offset"] = {0, 0};
  m["steps"][1]["to_offset"] = {0, 2};
  return m;
}

inline json matmulProgram(std::vector<int64_t> a, std::vector<int64_t> b,
                          const std::string &dtype = "f32") {
  json p =
      program({argument("a", type(a, dtype)), argument("b", type(b, dtype))},
              {joinAgg("c", type({a[0], b[1]}, dtype), {"a", "b"},
                       {{0, 1}, {1, 2}}, {0, 2}, "add", "arith.mulf", dtype)},
              {"c"});
  return p;
}

/// The SHA-256 of the file at `path` (what a manifest records of a kernel
/// library).
inline std::string fileSha256(const std::string &path) {
  std::ifstream file(path, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(file)),
                    std::istreambuf_iterator<char>());
  return sha256Hex(bytes);
}

/// A bundle directory under the system's temporary directory, removed when
/// the object goes.
class TempBundle {
public:
  TempBundle(const json &manifest, const json &program) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "ein-bundle-XXXXXX").string();
    std::vector<char> name(pattern.begin(), pattern.end());
    name.push_back('\0');
    path = mkdtemp(name.data());
    write("manifest.json", manifest.dump(2));
    write("program.json", program.dump(2));
  }
  ~TempBundle() { std::filesystem::remove_all(path); }
  void write(const std::string &file, const std::string &text) const {
    std::filesystem::create_directories(
        std::filesystem::path(path + "/" + file).parent_path());
    std::ofstream(path + "/" + file) << text;
  }
  std::string path;
};

} // namespace ein::test

#endif // EIN_TEST_BUNDLEBUILDER_H
