//===- signature.cpp - Kernel signature tables and the step check ---------===//

#include "ein/signature.h"

#include "json_node.h"
#include "json_write.h"

namespace ein {

using namespace format;

namespace {

/// A table holds at most this many kernels, each at most this many
/// arguments (what the compiler makes is far below both).
constexpr size_t kMaxKernels = 1 << 20, kMaxArgs = 4096;

/// Reads a signature table into `signatures`; throws FormatError.
void readSignatures(const json &root, KernelSignatures &signatures) {
  Node top{root, "signatures"};
  top.only({"format", "kernels"});
  if (top.at("format").str() != "ein-kernel-signatures")
    fail("signatures.format", "expected \"ein-kernel-signatures\"");
  Node kernels = top.at("kernels");
  if (!kernels.value.is_object())
    fail(kernels.path, "expected an object (kernel name -> signature)");
  if (kernels.value.size() > kMaxKernels)
    fail(kernels.path, "too many kernels");
  for (auto it = kernels.value.begin(); it != kernels.value.end(); ++it) {
    Node k{it.value(), kernels.path + "." + it.key()};
    k.only({"args", "scalars"});
    KernelSignature s;
    int64_t scalars = k.at("scalars").integer();
    if (scalars < 0 || scalars > int64_t(kMaxArgs))
      fail(k.path + ".scalars", "expected 0 to " + std::to_string(kMaxArgs));
    s.scalars = static_cast<int>(scalars);
    Node args = k.at("args");
    if (args.size() > kMaxArgs)
      fail(args.path, "too many arguments");
    for (size_t i = 0, e = args.size(); i < e; ++i) {
      Node a = args[i];
      a.only({"dtype", "shape", "elements_in_scalar", "access"});
      SignatureArg arg;
      arg.dtype = a.at("dtype").dtype();
      arg.access = parseSpelling(kAccesses, a.at("access"), "access");
      if (a.has("shape") == a.has("elements_in_scalar"))
        fail(a.path, "give either 'shape' or 'elements_in_scalar'");
      if (a.has("shape")) {
        arg.shape = a.at("shape").integers();
        if (arg.shape.size() > kMaxRank ||
            std::any_of(arg.shape.begin(), arg.shape.end(),
                        [](int64_t d) { return d < 1; }))
          fail(a.path + ".shape",
               "expected positive dimensions, got " + shapeText(arg.shape));
      } else {
        int64_t index = a.at("elements_in_scalar").integer();
        if (index < 0 || index >= s.scalars)
          fail(a.path + ".elements_in_scalar", "names scalar " +
                                                   std::to_string(index) +
                                                   ", but the kernel "
                                                   "takes " +
                                                   std::to_string(s.scalars));
        arg.elementsScalar = static_cast<int>(index);
      }
      s.args.push_back(std::move(arg));
    }
    signatures[it.key()] = std::move(s);
  }
}

} // namespace

bool parseKernelSignatures(const std::string &text,
                           KernelSignatures &signatures, std::string &error) {
  signatures.clear();
  return readJson(
      text, "kernel signatures", error,
      [&](const json &root) { readSignatures(root, signatures); },
      "the kernel signatures are not valid JSON");
}

bool addKernelSignatures(const std::string &text, KernelSignatures &signatures,
                         std::string &error) {
  KernelSignatures table;
  if (!parseKernelSignatures(text, table, error))
    return false;
  signatures.insert(table.begin(), table.end());
  return true;
}

std::string writeKernelSignatures(const KernelSignatures &signatures) {
  json kernels = json::object();
  for (const auto &[name, s] : signatures) {
    json args = json::array();
    for (const SignatureArg &a : s.args) {
      json arg = {{"dtype", dtypeName(a.dtype)},
                  {"access", spell(kAccesses, a.access)}};
      if (a.elementsScalar >= 0)
        arg["elements_in_scalar"] = a.elementsScalar;
      else
        arg["shape"] = a.shape;
      args.push_back(std::move(arg));
    }
    kernels[name] = {{"args", std::move(args)}, {"scalars", s.scalars}};
  }
  return json{{"format", "ein-kernel-signatures"}, {"kernels", kernels}}.dump();
}

bool checkKernelSteps(const Manifest &m, const KernelSignatures &signatures,
                      std::string &error) {
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const Step &s = m.steps[i];
    if (s.kind != StepKind::Kernel)
      continue;
    std::string where =
        "manifest.steps[" + std::to_string(i) + "] (kernel '" + s.kernel + "')";
    auto found = signatures.find(s.kernel);
    if (found == signatures.end()) {
      error = where + ": no kernel library's signatures name this kernel";
      return false;
    }
    const KernelSignature &sig = found->second;
    if (s.args.size() != sig.args.size() ||
        s.scalars.size() != size_t(sig.scalars)) {
      error = where + ": passes " + std::to_string(s.args.size()) +
              " buffers and " + std::to_string(s.scalars.size()) +
              " scalars, but the kernel takes " +
              std::to_string(sig.args.size()) + " and " +
              std::to_string(sig.scalars);
      return false;
    }
    for (size_t a = 0; a < s.args.size(); ++a) {
      const Buffer &b = m.buffers[s.args[a].buffer];
      const SignatureArg &want = sig.args[a];
      std::string arg = where + ", argument " + std::to_string(a) +
                        " (buffer '" + b.name + "'): ";
      if (b.type.dtype != want.dtype) {
        error = arg + "is " + dtypeName(b.type.dtype) +
                ", but the kernel takes " + dtypeName(want.dtype);
        return false;
      }
      if (want.elementsScalar < 0 && b.type.shape != want.shape) {
        error = arg + "is " + shapeText(b.type.shape) +
                ", but the kernel takes " + shapeText(want.shape);
        return false;
      }
      if (want.elementsScalar >= 0) {
        int64_t n = s.scalars[want.elementsScalar];
        if (n < 0 || n > b.type.numElements()) {
          error = arg + "the kernel touches scalars[" +
                  std::to_string(want.elementsScalar) +
                  "] = " + std::to_string(n) +
                  " elements, but the buffer holds " +
                  std::to_string(b.type.numElements());
          return false;
        }
      }
      if (s.args[a].access != want.access) {
        error = arg + "the step says " + spell(kAccesses, s.args[a].access) +
                ", but the kernel's access is " + spell(kAccesses, want.access);
        return false;
      }
    }
  }
  return true;
}

} // namespace ein
