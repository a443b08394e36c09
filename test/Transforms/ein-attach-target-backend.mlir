// The backend a target names: attached with it, filled into a target that
// names none, kept where it is not asked for, never changed.
// RUN: ein-opt %s -split-input-file -ein-attach-target="devices=2 backend=cpu" -verify-diagnostics | FileCheck %s
// RUN: ein-opt %s -split-input-file -ein-attach-target="devices=2" | FileCheck %s --check-prefix=KEEP
// RUN: not ein-opt %s -split-input-file -ein-attach-target="devices=2 backend=tpu" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: #ein.target backend expected "cpu" or "cuda", got 'tpu'

// CHECK-LABEL: module @none
// CHECK-SAME: ein.target = #ein.target<devices = 2, backend = "cpu">
// KEEP-LABEL: module @none
// KEEP-SAME: ein.target = #ein.target<devices = 2>}
module @none {
}

// -----

// CHECK-LABEL: module @unnamed
// CHECK-SAME: ein.target = #ein.target<devices = 2, backend = "cpu">
// KEEP-LABEL: module @unnamed
// KEEP-SAME: ein.target = #ein.target<devices = 2>}
module @unnamed attributes {ein.target = #ein.target<devices = 2>} {
}

// -----

// CHECK-LABEL: module @same
// CHECK-SAME: ein.target = #ein.target<devices = 2, backend = "cpu">
// KEEP-LABEL: module @same
// KEEP-SAME: ein.target = #ein.target<devices = 2, backend = "cpu">
module @same attributes {ein.target = #ein.target<devices = 2, backend = "cpu">} {
}

// -----

// KEEP-LABEL: module @other
// KEEP-SAME: ein.target = #ein.target<devices = 2, backend = "cuda">
// expected-error @+1 {{module already targets #ein.target<devices = 2, backend = "cuda">; refusing to retarget it to #ein.target<devices = 2, backend = "cpu">}}
module @other attributes {ein.target = #ein.target<devices = 2, backend = "cuda">} {
}
