// RUN: ein-opt %s -split-input-file -verify-diagnostics

// expected-error @+1 {{relation element type must be a float or integer type, got 'index'}}
func.func private @element(!ein.rel<4xindex, parts = [1]>)

// -----

// expected-error @+1 {{relation of rank 2 has 1 part counts}}
func.func private @parts_rank(!ein.rel<4x4xf32, parts = [1]>)

// -----

// expected-error @+1 {{relation dimension 1 has size 0; relations need non-empty dimensions}}
func.func private @empty_dim(!ein.rel<4x0xf32, parts = [1, 1]>)

// -----

// expected-error @+1 {{relation dimension 0 of size 4 cannot be cut into 8 parts}}
func.func private @over_cut(!ein.rel<4xf32, parts = [8]>)

// -----

// expected-error @+1 {{relation dimension 0 of size 4 cannot be cut into 0 parts}}
func.func private @zero_parts(!ein.rel<4xf32, parts = [0]>)

// -----

// expected-error @+1 {{relation needs at least 1 replica, got 0}}
func.func private @zero_replicas(!ein.rel<4xf32, parts = [1], replicas = 0>)

// -----

// expected-error @+1 {{a partial relation needs at least 2 replicas to aggregate, got 1}}
func.func private @lonely_partial(!ein.rel<4xf32, parts = [1], partial = add>)

// -----

// expected-error @+1 {{relation places 3 copies but has 4 (2 blocks x 2 replicas)}}
func.func private @device_count(!ein.rel<4xf32, parts = [2], replicas = 2, devices = [0, 1, 2]>)

// -----

// expected-error @+1 {{relation places block 1 on negative device -1}}
func.func private @negative_device(!ein.rel<4xf32, parts = [2], devices = [0, -1]>)

// -----

// expected-error @+1 {{relation places two copies of block 0 on device 1}}
func.func private @doubled_copy(!ein.rel<4xf32, parts = [1], replicas = 2, devices = [1, 1]>)

// -----

// Two different blocks on one device are fine; the same block twice is not.
func.func private @two_blocks_one_device(!ein.rel<4xf32, parts = [2], devices = [0, 0]>)

// -----

func.func @token_is_opaque(%t: !ein.token) -> !ein.token {
  return %t : !ein.token
}
