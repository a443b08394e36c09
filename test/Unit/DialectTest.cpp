//===- DialectTest.cpp - The ein dialect's C++ API ------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinOps.h"
#include "Einsummable/InitAll.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using namespace mlir::ein;

namespace {

class EinDialectTest : public ::testing::Test {
protected:
  EinDialectTest() {
    DialectRegistry registry;
    registerAllDialects(registry);
    context.appendDialectRegistry(registry);
    context.loadAllAvailableDialects();
    // Collect diagnostics instead of printing them.
    handler.emplace(&context, [this](Diagnostic &diag) {
      diagnostics.push_back(diag.str());
      return success();
    });
  }

  OwningOpRef<ModuleOp> parse(StringRef source) {
    return parseSourceString<ModuleOp>(source, &context);
  }

  template <typename OpTy> OpTy first(ModuleOp module) {
    OpTy found;
    module.walk([&](OpTy op) {
      if (!found)
        found = op;
    });
    return found;
  }

  MLIRContext context;
  std::optional<ScopedDiagnosticHandler> handler;
  std::vector<std::string> diagnostics;
};

TEST_F(EinDialectTest, RelationTypeAccessors) {
  auto type = dyn_cast_or_null<RelationType>(parseType(
      "!ein.rel<10x7xbf16, parts = [4, 2], replicas = 2, partial = add, "
      "devices = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15]>",
      &context));
  ASSERT_TRUE(type);
  EXPECT_EQ(type.getNumBlocks(), 8);
  EXPECT_TRUE(type.isPartial());
  EXPECT_TRUE(type.isPlaced());
  // Uneven cuts put the larger blocks first: 10 = 3 + 3 + 2 + 2, 7 = 4 + 3.
  EXPECT_EQ(type.getBlockShape(0), (SmallVector<int64_t>{3, 4}));
  EXPECT_EQ(type.getBlockShape(7), (SmallVector<int64_t>{2, 3}));
}

TEST_F(EinDialectTest, RelationTypeGetCheckedRejectsOverCut) {
  auto emitError = [&] { return mlir::emitError(UnknownLoc::get(&context)); };
  auto type = RelationType::getChecked(emitError, &context, {4},
                                       Float32Type::get(&context), {8}, 1,
                                       AggKind::None, {});
  EXPECT_FALSE(type);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_EQ(diagnostics[0],
            "relation dimension 0 of size 4 cannot be cut into 8 parts");
}

TEST_F(EinDialectTest, JoinAggLoops) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @f(%a: tensor<64x32xbf16>, %b: tensor<32x16xbf16>) -> tensor<64x16xbf16> {
      %c = ein.join_agg add ins(%a[d0, d1], %b[d1, d2] : tensor<64x32xbf16>, tensor<32x16xbf16>) out[d0, d2] : tensor<64x16xbf16> {
      ^bb0(%x: bf16, %y: bf16):
        %xf = arith.extf %x : bf16 to f32
        %yf = arith.extf %y : bf16 to f32
        %m = arith.mulf %xf, %yf : f32
        ein.yield %m : f32
      }
      return %c : tensor<64x16xbf16>
    })mlir");
  ASSERT_TRUE(module);
  auto op = first<JoinAggOp>(*module);
  EXPECT_EQ(op.getNumLoops(), 3);
  EXPECT_EQ(op.getLoopSizes(), (SmallVector<int64_t>{64, 32, 16}));
  EXPECT_EQ(op.getAggregatedLoops(), (SmallVector<int64_t>{1}));
  // bf16 results accumulate in f32 unless `acc` says otherwise.
  EXPECT_TRUE(op.getAccType().isF32());
  EXPECT_EQ(op.getIndicesOfInput(1), (ArrayRef<int64_t>{1, 2}));
}

TEST_F(EinDialectTest, AttentionLoopsAndDefaultScale) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @f(%q: tensor<2x8x128x64xf16>, %k: tensor<2x2x256x64xf16>, %v: tensor<2x2x256x32xf16>) -> tensor<2x8x128x32xf16> {
      %o = ein.attention %q, %k, %v {group = 4 : i64} : tensor<2x8x128x64xf16>, tensor<2x2x256x64xf16>, tensor<2x2x256x32xf16> -> tensor<2x8x128x32xf16>
      return %o : tensor<2x8x128x32xf16>
    })mlir");
  ASSERT_TRUE(module);
  auto op = first<AttentionOp>(*module);
  auto spec = cast<SpecOpInterface>(op.getOperation());
  EXPECT_EQ(spec.getLoopSizes(), (SmallVector<int64_t>{2, 2, 4, 128, 256}));
  EXPECT_EQ(spec.getLoopNames()[1], "kv_head");
  EXPECT_DOUBLE_EQ(op.getScaleOrDefault(), 0.125);
}

TEST_F(EinDialectTest, SpecMustFitTargetDeviceCount) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    module attributes {ein.target = #ein.target<devices = 2>} {
      func.func @f(%x: tensor<16x16xf32>) -> tensor<16x16xf32> {
        %y = ein.softmax %x dim 1 {spec = #ein.spec<[4, 1]>} : tensor<16x16xf32>
        return %y : tensor<16x16xf32>
      }
    })mlir");
  EXPECT_FALSE(module);
  ASSERT_FALSE(diagnostics.empty());
  EXPECT_NE(diagnostics[0].find("spec makes 4 join blocks but the target has "
                                "2 devices"),
            std::string::npos)
      << diagnostics[0];
}

TEST_F(EinDialectTest, ExtractBlockFindsItsDevice) {
  OwningOpRef<ModuleOp> module = parse(R"mlir(
    func.func @f(%r: !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, devices = [3, 2, 1, 0]>) -> tensor<4x8xf32> {
      %b = ein.extract_block %r [1, 0] replica 1 : !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, devices = [3, 2, 1, 0]> -> tensor<4x8xf32>
      return %b : tensor<4x8xf32>
    })mlir");
  ASSERT_TRUE(module);
  EXPECT_EQ(first<ExtractBlockOp>(*module).getDevice(), 0);
}

TEST_F(EinDialectTest, TargetAttrDefaults) {
  auto target = dyn_cast_or_null<TargetAttr>(
      parseAttribute("#ein.target<devices = 2>", &context));
  ASSERT_TRUE(target);
  EXPECT_EQ(target.getTopology(), "nvswitch");
  EXPECT_EQ(target.getChip(), "sm_90");
}

} // namespace
