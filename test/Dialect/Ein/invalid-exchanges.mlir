// RUN: ein-opt %s -split-input-file -verify-diagnostics

func.func @partition_shape(%x: tensor<8x8xf32>) -> !ein.rel<8x4xf32, parts = [2, 1]> {
  // expected-error @+1 {{keeps shape and element type, but 'tensor<8x8xf32>' and '!ein.rel<8x4xf32, parts = [2, 1]>' differ}}
  %r = ein.partition %x : tensor<8x8xf32> -> !ein.rel<8x4xf32, parts = [2, 1]>
  return %r : !ein.rel<8x4xf32, parts = [2, 1]>
}

// -----

func.func @partition_partial(%x: tensor<8x8xf32>) -> !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add> {
  // expected-error @+1 {{a whole tensor holds no pending partials, but '!ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add>' is partial; aggregate it with ein.repartition}}
  %r = ein.partition %x : tensor<8x8xf32> -> !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add>
  return %r : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add>
}

// -----

func.func @assemble_type(%r: !ein.rel<8x8xf32, parts = [2, 1]>) -> tensor<8x8xf16> {
  // expected-error @+1 {{keeps shape and element type, but 'tensor<8x8xf16>' and '!ein.rel<8x8xf32, parts = [2, 1]>' differ}}
  %x = ein.assemble %r : !ein.rel<8x8xf32, parts = [2, 1]> -> tensor<8x8xf16>
  return %x : tensor<8x8xf16>
}

// -----

func.func @assemble_partial(%r: !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add>) -> tensor<8x8xf32> {
  // expected-error @+1 {{a whole tensor holds no pending partials}}
  %x = ein.assemble %r : !ein.rel<8x8xf32, parts = [1, 1], replicas = 2, partial = add> -> tensor<8x8xf32>
  return %x : tensor<8x8xf32>
}

// -----

func.func @repartition_shape(%r: !ein.rel<8x8xf32, parts = [2, 1]>) -> !ein.rel<8x4xf32, parts = [2, 1]> {
  // expected-error @+1 {{keeps the shape, but [8, 8] becomes [8, 4]}}
  %x = ein.repartition %r : !ein.rel<8x8xf32, parts = [2, 1]> -> !ein.rel<8x4xf32, parts = [2, 1]>
  return %x : !ein.rel<8x4xf32, parts = [2, 1]>
}

// -----

func.func @repartition_cast(%r: !ein.rel<8x8xf32, parts = [2, 1]>) -> !ein.rel<8x8xbf16, parts = [1, 2]> {
  // expected-error @+1 {{only aggregating float partials may change the element type, here 'f32' to 'bf16'}}
  %x = ein.repartition %r : !ein.rel<8x8xf32, parts = [2, 1]> -> !ein.rel<8x8xbf16, parts = [1, 2]>
  return %x : !ein.rel<8x8xbf16, parts = [1, 2]>
}

// -----

func.func @repartition_creates_partials(%r: !ein.rel<8x8xf32, parts = [2, 1]>) -> !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = add> {
  // expected-error @+1 {{cannot create pending partials}}
  %x = ein.repartition %r : !ein.rel<8x8xf32, parts = [2, 1]> -> !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = add>
  return %x : !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = add>
}

// -----

func.func @repartition_kind(%r: !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = add>) -> !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = max> {
  // expected-error @+1 {{pending partial<add> results cannot become partial<max>}}
  %x = ein.repartition %r : !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = add> -> !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = max>
  return %x : !ein.rel<8x8xf32, parts = [2, 1], replicas = 2, partial = max>
}
