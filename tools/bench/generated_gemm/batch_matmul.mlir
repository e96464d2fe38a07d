// Payload for the generated-GEMM benchmark (see README.md).
// One copy of each problem per schedule (bmm_<shape>_<schedule>); schedule.mlir
// picks the function by name and the contraction by its `tag` attribute.
//   nn : C[b] = A[b] . B[b]      A ?x128x784, B ?x784x128 -> C ?x128x128  (L1 forward)
//   tn : C[b] = A[b]^T . B[b]    A ?x128x784, B ?x128x128 -> C ?x784x128  (L1 weight grad)
//   nn2: C[b] = A[b] . B[b]      A ?x128x128, B ?x128x10  -> C ?x128x10   (L2 forward)
// The batch dimension is dynamic so the harness can hand each thread a slice.
// C is overwritten (fill 0, then accumulate), like cblas_sgemm with beta = 0.

func.func @bmm_nn_s1(%A: memref<?x128x784xf32>, %B: memref<?x784x128xf32>, %C: memref<?x128x128xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x128x128xf32>)
  linalg.batch_matmul {tag = "mm"} ins(%A, %B : memref<?x128x784xf32>, memref<?x784x128xf32>) outs(%C : memref<?x128x128xf32>)
  return
}

func.func @bmm_tn_s1(%A: memref<?x128x784xf32>, %B: memref<?x128x128xf32>, %C: memref<?x784x128xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x784x128xf32>)
  linalg.batch_matmul_transpose_a {tag = "mm"} ins(%A, %B : memref<?x128x784xf32>, memref<?x128x128xf32>) outs(%C : memref<?x784x128xf32>)
  return
}

func.func @bmm_nn2_s1(%A: memref<?x128x128xf32>, %B: memref<?x128x10xf32>, %C: memref<?x128x10xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x128x10xf32>)
  linalg.batch_matmul {tag = "mm"} ins(%A, %B : memref<?x128x128xf32>, memref<?x128x10xf32>) outs(%C : memref<?x128x10xf32>)
  return
}

func.func @bmm_nn_s2(%A: memref<?x128x784xf32>, %B: memref<?x784x128xf32>, %C: memref<?x128x128xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x128x128xf32>)
  linalg.batch_matmul {tag = "mm"} ins(%A, %B : memref<?x128x784xf32>, memref<?x784x128xf32>) outs(%C : memref<?x128x128xf32>)
  return
}

func.func @bmm_tn_s2(%A: memref<?x128x784xf32>, %B: memref<?x128x128xf32>, %C: memref<?x784x128xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x784x128xf32>)
  linalg.batch_matmul_transpose_a {tag = "mm"} ins(%A, %B : memref<?x128x784xf32>, memref<?x128x128xf32>) outs(%C : memref<?x784x128xf32>)
  return
}

func.func @bmm_nn2_s2(%A: memref<?x128x128xf32>, %B: memref<?x128x10xf32>, %C: memref<?x128x10xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x128x10xf32>)
  linalg.batch_matmul {tag = "mm"} ins(%A, %B : memref<?x128x128xf32>, memref<?x128x10xf32>) outs(%C : memref<?x128x10xf32>)
  return
}

func.func @bmm_nn_s3(%A: memref<?x128x784xf32>, %B: memref<?x784x128xf32>, %C: memref<?x128x128xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x128x128xf32>)
  linalg.batch_matmul {tag = "mm"} ins(%A, %B : memref<?x128x784xf32>, memref<?x784x128xf32>) outs(%C : memref<?x128x128xf32>)
  return
}

func.func @bmm_tn_s3(%A: memref<?x128x784xf32>, %B: memref<?x128x128xf32>, %C: memref<?x784x128xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x784x128xf32>)
  linalg.batch_matmul_transpose_a {tag = "mm"} ins(%A, %B : memref<?x128x784xf32>, memref<?x128x128xf32>) outs(%C : memref<?x784x128xf32>)
  return
}

func.func @bmm_nn2_s3(%A: memref<?x128x128xf32>, %B: memref<?x128x10xf32>, %C: memref<?x128x10xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x128x10xf32>)
  linalg.batch_matmul {tag = "mm"} ins(%A, %B : memref<?x128x128xf32>, memref<?x128x10xf32>) outs(%C : memref<?x128x10xf32>)
  return
}

func.func @bmm_nn_s4(%A: memref<?x128x784xf32>, %B: memref<?x784x128xf32>, %C: memref<?x128x128xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x128x128xf32>)
  linalg.batch_matmul {tag = "mm"} ins(%A, %B : memref<?x128x784xf32>, memref<?x784x128xf32>) outs(%C : memref<?x128x128xf32>)
  return
}

func.func @bmm_tn_s4(%A: memref<?x128x784xf32>, %B: memref<?x128x128xf32>, %C: memref<?x784x128xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x784x128xf32>)
  linalg.batch_matmul_transpose_a {tag = "mm"} ins(%A, %B : memref<?x128x784xf32>, memref<?x128x128xf32>) outs(%C : memref<?x784x128xf32>)
  return
}

func.func @bmm_nn2_s4(%A: memref<?x128x128xf32>, %B: memref<?x128x10xf32>, %C: memref<?x128x10xf32>) attributes {llvm.emit_c_interface} {
  %z = arith.constant 0.0 : f32
  linalg.fill ins(%z : f32) outs(%C : memref<?x128x10xf32>)
  linalg.batch_matmul {tag = "mm"} ins(%A, %B : memref<?x128x128xf32>, memref<?x128x10xf32>) outs(%C : memref<?x128x10xf32>)
  return
}

// s5/s6: same problems in tensor form, so the zero-init (linalg.fill) can be
// fused into each register tile; materialize_in_destination + empty-tensor
// elimination make the result bufferize straight into %C (no temporary).

func.func @bmm_nn_s5(%A: memref<?x128x784xf32>, %B: memref<?x784x128xf32>, %C: memref<?x128x128xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %A restrict : memref<?x128x784xf32>
  %b = bufferization.to_tensor %B restrict : memref<?x784x128xf32>
  %nb = memref.dim %C, %c0 : memref<?x128x128xf32>
  %e = tensor.empty(%nb) : tensor<?x128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  %r = linalg.batch_matmul {tag = "mm"} ins(%a, %b : tensor<?x128x784xf32>, tensor<?x784x128xf32>) outs(%f : tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<?x128x128xf32>, memref<?x128x128xf32>) -> ()
  return
}

func.func @bmm_tn_s5(%A: memref<?x128x784xf32>, %B: memref<?x128x128xf32>, %C: memref<?x784x128xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %A restrict : memref<?x128x784xf32>
  %b = bufferization.to_tensor %B restrict : memref<?x128x128xf32>
  %nb = memref.dim %C, %c0 : memref<?x784x128xf32>
  %e = tensor.empty(%nb) : tensor<?x784x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x784x128xf32>) -> tensor<?x784x128xf32>
  %r = linalg.batch_matmul_transpose_a {tag = "mm"} ins(%a, %b : tensor<?x128x784xf32>, tensor<?x128x128xf32>) outs(%f : tensor<?x784x128xf32>) -> tensor<?x784x128xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<?x784x128xf32>, memref<?x784x128xf32>) -> ()
  return
}

func.func @bmm_nn2_s5(%A: memref<?x128x128xf32>, %B: memref<?x128x10xf32>, %C: memref<?x128x10xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %A restrict : memref<?x128x128xf32>
  %b = bufferization.to_tensor %B restrict : memref<?x128x10xf32>
  %nb = memref.dim %C, %c0 : memref<?x128x10xf32>
  %e = tensor.empty(%nb) : tensor<?x128x10xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x10xf32>) -> tensor<?x128x10xf32>
  %r = linalg.batch_matmul {tag = "mm"} ins(%a, %b : tensor<?x128x128xf32>, tensor<?x128x10xf32>) outs(%f : tensor<?x128x10xf32>) -> tensor<?x128x10xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<?x128x10xf32>, memref<?x128x10xf32>) -> ()
  return
}

func.func @bmm_nn_s6(%A: memref<?x128x784xf32>, %B: memref<?x784x128xf32>, %C: memref<?x128x128xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %A restrict : memref<?x128x784xf32>
  %b = bufferization.to_tensor %B restrict : memref<?x784x128xf32>
  %nb = memref.dim %C, %c0 : memref<?x128x128xf32>
  %e = tensor.empty(%nb) : tensor<?x128x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  %r = linalg.batch_matmul {tag = "mm"} ins(%a, %b : tensor<?x128x784xf32>, tensor<?x784x128xf32>) outs(%f : tensor<?x128x128xf32>) -> tensor<?x128x128xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<?x128x128xf32>, memref<?x128x128xf32>) -> ()
  return
}

func.func @bmm_tn_s6(%A: memref<?x128x784xf32>, %B: memref<?x128x128xf32>, %C: memref<?x784x128xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %A restrict : memref<?x128x784xf32>
  %b = bufferization.to_tensor %B restrict : memref<?x128x128xf32>
  %nb = memref.dim %C, %c0 : memref<?x784x128xf32>
  %e = tensor.empty(%nb) : tensor<?x784x128xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x784x128xf32>) -> tensor<?x784x128xf32>
  %r = linalg.batch_matmul_transpose_a {tag = "mm"} ins(%a, %b : tensor<?x128x784xf32>, tensor<?x128x128xf32>) outs(%f : tensor<?x784x128xf32>) -> tensor<?x784x128xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<?x784x128xf32>, memref<?x784x128xf32>) -> ()
  return
}

func.func @bmm_nn2_s6(%A: memref<?x128x128xf32>, %B: memref<?x128x10xf32>, %C: memref<?x128x10xf32>) attributes {llvm.emit_c_interface} {
  %c0 = arith.constant 0 : index
  %z = arith.constant 0.0 : f32
  %a = bufferization.to_tensor %A restrict : memref<?x128x128xf32>
  %b = bufferization.to_tensor %B restrict : memref<?x128x10xf32>
  %nb = memref.dim %C, %c0 : memref<?x128x10xf32>
  %e = tensor.empty(%nb) : tensor<?x128x10xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<?x128x10xf32>) -> tensor<?x128x10xf32>
  %r = linalg.batch_matmul {tag = "mm"} ins(%a, %b : tensor<?x128x128xf32>, tensor<?x128x10xf32>) outs(%f : tensor<?x128x10xf32>) -> tensor<?x128x10xf32>
  bufferization.materialize_in_destination %r in restrict writable %C : (tensor<?x128x10xf32>, memref<?x128x10xf32>) -> ()
  return
}
