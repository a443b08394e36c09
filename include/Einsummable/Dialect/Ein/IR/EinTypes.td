//===- EinTypes.td - ein types ------------------------------*- tablegen -*-===//

#ifndef EINSUMMABLE_DIALECT_EIN_IR_EINTYPES_TD
#define EINSUMMABLE_DIALECT_EIN_IR_EINTYPES_TD

include "Einsummable/Dialect/Ein/IR/EinAttrs.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/BuiltinTypeInterfaces.td"

class Ein_Type<string name, string typeMnemonic, list<Trait> traits = []>
    : TypeDef<Ein_Dialect, name, traits> {
  let mnemonic = typeMnemonic;
}

def Ein_RelationType : Ein_Type<"Relation", "rel", [ShapedTypeInterface]> {
  let summary = "A tensor relation: a tensor cut into blocks";
  let description = [{
    A tensor of static `shape` and `elementType` cut into `parts[d]` blocks
    along each dimension d (uneven cuts put the larger blocks first). Every
    block exists `replicas` times. With `partial = <kind>` the replicas of a
    block are not copies but partial results still to be aggregated with
    `<kind>`. `devices`, when present, places every copy: it lists the device
    of block b's replica r at position `b * replicas + r`, blocks in row-major
    order of their block indices.

    Syntax:

    ```
    !ein.rel<SHAPExTYPE, parts = [P0, P1, ...]
             (, replicas = R)? (, partial = KIND)? (, devices = [D, ...])?>
    ```

    Example: C = A B with spec (2, 2, 2) before the aggregation over j: four
    output blocks, each as two pending partial sums, on 8 GPUs.

    ```mlir
    !ein.rel<1024x1024xf32, parts = [2, 2], replicas = 2, partial = add,
             devices = [0, 1, 2, 3, 4, 5, 6, 7]>
    ```
  }];
  let parameters = (ins
    ArrayRefParameter<"int64_t">:$shape,
    "::mlir::Type":$elementType,
    ArrayRefParameter<"int64_t">:$parts,
    "int64_t":$replicas,
    "::mlir::ein::AggKind":$partial,
    ArrayRefParameter<"int64_t">:$devices);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    // ShapedTypeInterface: a relation has the shape of the tensor it cuts.
    bool hasRank() const { return true; }
    ::mlir::ShapedType cloneWith(::std::optional<::llvm::ArrayRef<int64_t>> shape,
                                 ::mlir::Type elementType) const;
    /// The number of distinct blocks: the product of the parts.
    int64_t getNumBlocks() const;
    /// Whether the replicas of each block are pending partial results.
    bool isPartial() const { return getPartial() != ::mlir::ein::AggKind::None; }
    /// Whether every copy has a device.
    bool isPlaced() const { return !getDevices().empty(); }
    /// The shape of the block with the given row-major linear index.
    ::llvm::SmallVector<int64_t> getBlockShape(int64_t block) const;
  }];
}

def Ein_TokenType : Ein_Type<"Token", "token"> {
  let summary = "Orders device-level steps";
  let description = [{
    Produced by every device-level exchange; consumed by the `after(...)`
    list of a later one, which may not start before the steps it names
    finish.
  }];
}

def Ein_AnyTensorOrRelation
    : AnyTypeOf<[AnyRankedTensor, Ein_RelationType], "ranked tensor or relation">;

#endif // EINSUMMABLE_DIALECT_EIN_IR_EINTYPES_TD
