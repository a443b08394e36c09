// On a topology of several nodes the search is hierarchical
// (docs/distributed.md): a plan for the nodes first, then each op's cut
// refined within a node. On the matrix chain at 2 x 2 it finds the flat
// search's plan; on the small LLaMA block the refined plan costs 15,001
// proxy bytes against the flat search's 13,968 (and simulates faster,
// 0.14 against 0.18 ms: the proxy does not see the links).
// RUN: ein-opt %ein_src_root/examples/matrix_chain.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose -o %t.chain-h.mlir
// RUN: ein-opt %ein_src_root/examples/matrix_chain.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose=hierarchical=false -o %t.chain-f.mlir
// RUN: diff %t.chain-h.mlir %t.chain-f.mlir
// RUN: FileCheck %s --check-prefix=CHAIN < %t.chain-h.mlir
// CHAIN-COUNT-3: ein.join_agg add {{.*}}spec = #ein.spec<

// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="explain=%t.h.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=HIER < %t.h.json
// HIER: "total_cost_bytes": 15001
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=4 topology=nodes=2,gpus=2" --ein-decompose="hierarchical=false explain=%t.f.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=FLAT < %t.f.json
// FLAT: "total_cost_bytes": 13968

// One node: nothing to split, the flat search.
// RUN: ein-opt %ein_src_root/examples/llama_block.mlir --ein-attach-target="devices=4 topology=nodes=1,gpus=4" --ein-decompose="explain=%t.one.json" -o /dev/null
// RUN: FileCheck %s --check-prefix=FLAT < %t.one.json
