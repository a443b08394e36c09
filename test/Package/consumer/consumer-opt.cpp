//===- consumer-opt.cpp - An mlir-opt built on the installed package ------===//
//
// Registers the ein dialect and passes through the installed headers and
// libraries, plus the upstream dialects ein-import reads.
//
//===----------------------------------------------------------------------===//

#include "Einsummable/Dialect/Ein/IR/EinDialect.h"
#include "Einsummable/Transforms/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::ein::EinDialect, mlir::arith::ArithDialect,
                  mlir::func::FuncDialect, mlir::linalg::LinalgDialect,
                  mlir::math::MathDialect, mlir::tensor::TensorDialect>();
  mlir::ein::registerEinPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "ein package consumer\n", registry));
}
