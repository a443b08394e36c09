// Bad options are diagnosed before anything is attached.
// RUN: not ein-opt %s -ein-attach-target="devices=0" 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not ein-opt %s -ein-attach-target="devices=128" 2>&1 | FileCheck %s --check-prefix=MANY
// RUN: not ein-opt %s -ein-attach-target="devices=4 topology=torus" 2>&1 | FileCheck %s --check-prefix=TOPO
// RUN: not ein-opt %s -ein-attach-target="devices=4 topology=dgx1-v100" 2>&1 | FileCheck %s --check-prefix=DGX
// RUN: not ein-opt %s -ein-attach-target="devices=4 chip=sm_x" 2>&1 | FileCheck %s --check-prefix=CHIP
// RUN: not ein-opt %s -ein-attach-target="devices=four" 2>&1 | FileCheck %s --check-prefix=PARSE
// RUN: not ein-opt %s -ein-attach-target="devices=2 partials=f32" 2>&1 | FileCheck %s --check-prefix=PARTIALS
// A module that already targets another machine is not silently retargeted.
// RUN: ein-opt %s -ein-attach-target="devices=2" -verify-diagnostics
// Re-attaching the same target changes nothing.
// RUN: ein-opt %s -ein-attach-target="devices=8 topology=nvswitch" | FileCheck %s --check-prefix=SAME

// ZERO: error: #ein.target devices must be 1 to 64, got 0
// MANY: error: #ein.target devices must be 1 to 64, got 128
// TOPO: error: unknown topology 'torus'
// DGX: error: topology 'dgx1-v100' is defined for 8 devices, got 4
// CHIP: error: unknown chip 'sm_x'
// PARTIALS: error: #ein.target partials must be acc or out, got 'f32'
// SAME: module attributes {ein.target = #ein.target<devices = 8>} {
// PARSE: for the --devices option: 'four' value invalid for long argument!

// expected-error @+1 {{module already targets #ein.target<devices = 8>; refusing to retarget it to #ein.target<devices = 2>}}
module attributes {ein.target = #ein.target<devices = 8>} {
}
