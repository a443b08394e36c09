// RUN: ein-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// expected-error @+1 {{#ein.target devices must be 1 to 64, got 0}}
module attributes {ein.target = #ein.target<devices = 0>} {}

// -----

// expected-error @+1 {{#ein.target devices must be 1 to 64, got 65}}
module attributes {ein.target = #ein.target<devices = 65>} {}

// -----

// expected-error @+1 {{topology 'dgx1-v100' is defined for 8 devices, got 4}}
module attributes {ein.target = #ein.target<devices = 4, topology = "dgx1-v100">} {}

// -----

// expected-error @+1 {{topology 'h200-pair' has 2 GPUs, but the target asks for 4}}
module attributes {ein.target = #ein.target<devices = 4, topology = "h200-pair">} {}

// -----

// expected-error @+1 {{topology 'nodes=2' must read 'nodes=K,gpus=G' or 'nodes=K,gpus=G,nics=N' with positive K, G, N}}
module attributes {ein.target = #ein.target<devices = 4, topology = "nodes=2">} {}

// -----

// expected-error @+1 {{topology 'nodes=0,gpus=4' must read 'nodes=K,gpus=G' or 'nodes=K,gpus=G,nics=N' with positive K, G, N}}
module attributes {ein.target = #ein.target<devices = 4, topology = "nodes=0,gpus=4">} {}

// -----

// expected-error @+1 {{topology 'nodes=2,gpus=4' has 8 GPUs but the target asks for 4}}
module attributes {ein.target = #ein.target<devices = 4, topology = "nodes=2,gpus=4">} {}

// -----

// expected-error @+1 {{unknown topology 'torus'; expected nvswitch, h200-pair, dgx1-v100, pcie, nodes=K,gpus=G[,nics=N] or a .json file}}
module attributes {ein.target = #ein.target<devices = 4, topology = "torus">} {}

// -----

// expected-error @+1 {{unknown chip 'gfx942'; expected 'sm_<N>' (e.g. sm_90) or 'host'}}
module attributes {ein.target = #ein.target<devices = 4, chip = "gfx942">} {}

// -----

// expected-error @+1 {{unknown chip 'sm_9x'}}
module attributes {ein.target = #ein.target<devices = 4, chip = "sm_9x">} {}

// -----

// expected-error @+1 {{'ein.target' must be a #ein.target, got 8 : i64}}
module attributes {ein.target = 8} {}

// -----

module {
  // expected-error @+1 {{'ein.target' belongs on a builtin.module, not on 'func.func'}}
  func.func @f() attributes {ein.target = #ein.target<devices = 2>} {
    return
  }
}

// -----

// expected-error @+1 {{'ein.weight' marks a function argument, not an operation}}
func.func @g() attributes {ein.weight} {
  return
}

// -----

// expected-error @+1 {{unknown ein attribute 'ein.devices'; expected 'ein.target', 'ein.candidates', 'ein.loop_offsets', 'ein.kernel', 'ein.kernel_target', 'ein.kernel_signatures', 'ein.tie_layout', 'ein.exchange_choice', 'ein.planned_memory', 'ein.block_flops' or 'ein.block_seconds'}}
module attributes {ein.devices = 8} {}

// -----

func.func @kernel_not_string(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ein.kernel' must be a kernel name string, got 3 : i64}}
  %y = ein.join_agg none ins(%x[d0] : tensor<4xf32>) out[d0] attributes {device = 0 : i64, ein.kernel = 3} : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %y : tensor<4xf32>
}

// -----

func.func @kernel_not_device_level(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ein.kernel' belongs on a device-level block (a join_agg or composite with 'device')}}
  %y = ein.join_agg none ins(%x[d0] : tensor<4xf32>) out[d0] attributes {ein.kernel = "k"} : tensor<4xf32> {
  ^bb0(%a: f32):
    ein.yield %a : f32
  }
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'ein.kernel_target' must be "cpu" or "cuda", got "tpu"}}
module attributes {ein.kernel_target = "tpu"} {}

// -----

module {
  // expected-error @+1 {{'ein.kernel_target' belongs on a builtin.module, not on 'func.func'}}
  func.func @f() attributes {ein.kernel_target = "cpu"} {
    return
  }
}

// -----

// expected-error @+1 {{unknown ein argument attribute 'ein.wieght' on argument 0; expected 'ein.weight' or 'ein.grad'}}
func.func @typo(%w: tensor<4xf32> {ein.wieght}) {
  return
}

// -----

// expected-error @+1 {{'ein.weight' is a unit attribute, got true}}
func.func @not_unit(%w: tensor<4xf32> {ein.weight = true}) {
  return
}

// -----

// expected-error @+1 {{'ein.grad' is a unit attribute, got 1 : i64}}
func.func @grad_not_unit(%x: tensor<4xf32> {ein.grad = 1}) {
  return
}

// -----

// expected-error @+1 {{'ein.weight' marks function arguments, not result 0}}
func.func private @weight_result() -> (tensor<4xf32> {ein.weight})

// -----

// expected-error @+1 {{unknown ein result attribute 'ein.tie' on result 0}}
func.func private @unknown_result_attr() -> (tensor<4xf32> {ein.tie = 0 : i64})

// -----

func.func @candidates_not_specs(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ein.candidates' must be an array of #ein.spec, got [1, 2]}}
  %y = ein.softmax %x dim 0 {ein.candidates = [1, 2]} : tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{'ein.candidates' belongs on an op a spec can cut, not on 'func.func'}}
func.func @candidates_on_func() attributes {ein.candidates = [#ein.spec<[1]>]} {
  return
}

// -----

func.func @loop_offsets_not_an_array(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ein.loop_offsets' must be an array<i64>, got 3 : i64}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] attributes {device = 0 : i64, ein.loop_offsets = 3} : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @loop_offsets_on_a_logical_op(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ein.loop_offsets' belongs on a device-level ein.join_agg (one with 'device')}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] attributes {ein.loop_offsets = array<i64: 4>} : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @loop_offsets_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ein.loop_offsets' has 2 offsets for 1 loops}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] attributes {device = 1 : i64, ein.loop_offsets = array<i64: 4, 0>} : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

func.func @loop_offsets_negative(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'ein.loop_offsets' offsets must not be negative}}
  %r = ein.join_agg none ins(%a[d0] : tensor<4xf32>) out[d0] attributes {device = 1 : i64, ein.loop_offsets = array<i64: -4>} : tensor<4xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %r : tensor<4xf32>
}

// -----

// expected-error @+1 {{'ein.tie_layout' belongs on a function, not on 'builtin.module'}}
module attributes {ein.tie_layout} {}

// -----

module {
  // expected-error @+1 {{'ein.tie_layout' is a unit attribute, got true}}
  func.func @f() attributes {ein.tie_layout = true} {
    return
  }
}

// -----

// expected-error @+1 {{'ein.weights_move' belongs on a function, not on 'builtin.module'}}
module attributes {ein.weights_move} {}

// -----

module {
  // expected-error @+1 {{'ein.weights_move' is a unit attribute, got "yes"}}
  func.func @f() attributes {ein.weights_move = "yes"} {
    return
  }
}

// -----

// expected-error @+1 {{'ein.dataflow' belongs on a function, not on 'builtin.module'}}
module attributes {ein.dataflow} {}

// -----

module {
  // expected-error @+1 {{'ein.dataflow' is a unit attribute, got 1 : i64}}
  func.func @f() attributes {ein.dataflow = 1} {
    return
  }
}

// -----

// expected-error @+1 {{'ein.planned_memory' is a non-negative i64 byte count, got -5 : i64}}
func.func @planned_memory_negative() attributes {ein.planned_memory = -5 : i64} {
  return
}

// -----

// expected-error @+1 {{'ein.planned_memory' belongs on a function, not on 'builtin.module'}}
module attributes {ein.planned_memory = 5 : i64} {
}

// -----

// expected-error @+1 {{'ein.kernel_signatures' must be a string, got 3 : i64}}
module attributes {ein.kernel_signatures = 3} {}

// -----

// expected-error @+1 {{'ein.kernel_signatures' is not a kernel signature table: signatures.kernels.k.args[0].access: unknown access 'sometimes'; expected read, write or readwrite}}
module attributes {ein.kernel_signatures = "{\"format\": \"ein-kernel-signatures\", \"kernels\": {\"k\": {\"args\": [{\"dtype\": \"f32\", \"shape\": [4], \"access\": \"sometimes\"}], \"scalars\": 0}}}"} {}

// -----

// expected-error @+1 {{'ein.kernel_signatures' belongs on a builtin.module, not on 'func.func'}}
func.func @signatures_on_func() attributes {ein.kernel_signatures = "{\"format\": \"ein-kernel-signatures\", \"kernels\": {}}"} {
  return
}

// -----

// expected-error @+1 {{#ein.target partials must be acc or out, got 'half'}}
module attributes {ein.target = #ein.target<devices = 2, partials = "half">} {}

// -----

// ein.place: the GPUs of an op's join blocks (a staged plan's stages).
func.func @place_not_array(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ein.place' must be a non-empty array<i64> of GPUs, got 3 : i64}}
  %b = ein.join_agg none ins(%a[d0] : tensor<8xf32>) out[d0] attributes {spec = #ein.spec<[1]>, ein.place = 3 : i64} : tensor<8xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %b : tensor<8xf32>
}

// -----

func.func @place_negative(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ein.place' names GPU -1; GPUs are numbered from 0}}
  %b = ein.join_agg none ins(%a[d0] : tensor<8xf32>) out[d0] attributes {spec = #ein.spec<[2]>, ein.place = array<i64: 0, -1>} : tensor<8xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %b : tensor<8xf32>
}

// -----

func.func @place_twice(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ein.place' names GPU 2 twice; each join block runs on its own GPU}}
  %b = ein.join_agg none ins(%a[d0] : tensor<8xf32>) out[d0] attributes {spec = #ein.spec<[2]>, ein.place = array<i64: 2, 2>} : tensor<8xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %b : tensor<8xf32>
}

// -----

func.func @place_without_spec(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ein.place' places the blocks of a spec; the op has no 'spec'}}
  %b = ein.join_agg none ins(%a[d0] : tensor<8xf32>) out[d0] attributes {ein.place = array<i64: 0>} : tensor<8xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %b : tensor<8xf32>
}

// -----

func.func @place_count(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ein.place' names 3 GPUs for the 2 join blocks of its spec #ein.spec<[2]>}}
  %b = ein.join_agg none ins(%a[d0] : tensor<8xf32>) out[d0] attributes {spec = #ein.spec<[2]>, ein.place = array<i64: 0, 1, 2>} : tensor<8xf32> {
  ^bb0(%x: f32):
    ein.yield %x : f32
  }
  return %b : tensor<8xf32>
}

// -----

func.func @place_not_cut(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'ein.place' belongs on an op a spec can cut, not on 'func.return'}}
  return {ein.place = array<i64: 0>} %a : tensor<8xf32>
}

// -----

// expected-error @+1 {{#ein.target backend expected "cpu" or "cuda", got 'tpu'}}
module attributes {ein.target = #ein.target<devices = 2, backend = "tpu">} {}

// -----

// expected-error @+1 {{#ein.target backend cuda: a cuda bundle's chip is sm_NN, got 'host'}}
module attributes {ein.target = #ein.target<devices = 2, chip = "host", backend = "cuda">} {}

// -----

// expected-error @+1 {{'ein.exchange_choice' must be a dictionary, got 3 : i64}}
func.func @choice_not_dictionary() attributes {ein.exchange_choice = 3} {
  return
}

// -----

// expected-error @+1 {{'ein.exchange_choice' belongs on a function, not on 'builtin.module'}}
module attributes {ein.exchange_choice = {key = 1 : i64, rotate = true, split_weights = false, synthesized = array<i1>, place = []}} {}

// -----

// expected-error @+1 {{'ein.exchange_choice' must hold exactly key (i64), rotate and split_weights (bool), synthesized (array<i1>) and place (an array of array<i64>)}}
func.func @choice_without_key() attributes {ein.exchange_choice = {rotate = true, split_weights = false, synthesized = array<i1>, place = []}} {
  return
}

// -----

// expected-error @+1 {{'ein.exchange_choice' has 2 ops' forms but 1 ops' places}}
func.func @choice_lengths() attributes {ein.exchange_choice = {key = 1 : i64, rotate = true, split_weights = false, synthesized = array<i1: true, false>, place = [array<i64>]}} {
  return
}

// -----

// expected-error @+1 {{'ein.exchange_choice' places op 0 with [1, 0], not an array<i64>}}
func.func @choice_place_not_array() attributes {ein.exchange_choice = {key = 1 : i64, rotate = true, split_weights = false, synthesized = array<i1: true>, place = [[1, 0]]}} {
  return
}

// -----

// expected-error @+1 {{'ein.exchange_choice' places op 1 on array<i64: 1, 1>; each block runs on its own GPU, numbered from 0}}
func.func @choice_place_twice() attributes {ein.exchange_choice = {key = 1 : i64, rotate = false, split_weights = false, synthesized = array<i1: true, false>, place = [array<i64>, array<i64: 1, 1>]}} {
  return
}

// -----

// expected-error @+1 {{'ein.updates' on result 0 is the index of a function argument, got "w"}}
func.func @updates_not_index(%w: tensor<4xf32>) -> (tensor<4xf32> {ein.updates = "w"}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 updates argument 3, but the function has 1}}
func.func @updates_out_of_range(%w: tensor<4xf32>) -> (tensor<4xf32> {ein.updates = 3}) {
  return %w : tensor<4xf32>
}

// -----

// expected-error @+1 {{result 0 updates argument 0 but its type 'tensor<4xbf16>' is not the argument's 'tensor<4xf32>'}}
func.func @updates_other_type(%w: tensor<4xf32>, %v: tensor<4xbf16>) -> (tensor<4xbf16> {ein.updates = 0}) {
  return %v : tensor<4xbf16>
}
