// Transform-dialect schedules for batch_matmul.mlir (MLIR 19), loaded with
//   mlir-opt-19 --transform-preload-library=transform-library-paths=schedule.mlir --transform-interpreter
// Every schedule ends in @vectorize_and_lower: vectorize the register-sized
// contractions (vector.contract), hoist the C tile's read/write out of the k
// loop (so it stays in registers), lower vector.contract to outer products and
// those to vector.fma (broadcast A element x row of B, accumulate into C rows).
module attributes {transform.with_named_sequence} {
  transform.named_sequence @vectorize_and_lower(%f: !transform.any_op {transform.consumed}) {
    %fv = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fv {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      // fold subviews into the transfers: hoisting refuses view-like sources
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    %loops = transform.structured.match ops{["scf.for"]} in %fv : (!transform.any_op) -> !transform.any_op
    transform.apply_licm to %loops : !transform.any_op
    %f2 = transform.structured.hoist_redundant_vector_transfers %fv : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %f2 {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    transform.yield
  }
  // nn: S1: per batch index, register tile 8x32 (C tile kept in zmm across k), loops b,m,n,k; no cache blocking
  transform.named_sequence @s1_nn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:4 = transform.structured.tile_using_for %mm tile_sizes [1, 8, 32, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 8, 32] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // nn: S2: like S1 with register tile 4x64
  transform.named_sequence @s2_nn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:4 = transform.structured.tile_using_for %mm tile_sizes [1, 4, 64, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 4, 64] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // nn: S3: cache blocking b, n-panel 32, k-block 196; B block packed into a contiguous buffer; then 8x32 register tiles over m
  transform.named_sequence @s3_nn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %blk, %blk_loops:3 = transform.structured.tile_using_for %mm tile_sizes [1, 0, 32, 196] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %packed = transform.structured.promote %blk {operands_to_promote = [1]} : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:2 = transform.structured.tile_using_for %packed tile_sizes [0, 8, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 8, 32] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // nn: S4: S3 without packing (B block read in place); register tile 8x32
  transform.named_sequence @s4_nn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %blk, %blk_loops:3 = transform.structured.tile_using_for %mm tile_sizes [1, 0, 32, 196] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %reg, %reg_loops:2 = transform.structured.tile_using_for %blk tile_sizes [0, 8, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 8, 32] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // tn: S1: per batch index, register tile 8x32 (C tile kept in zmm across k), loops b,m,n,k; no cache blocking
  transform.named_sequence @s1_tn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:4 = transform.structured.tile_using_for %mm tile_sizes [1, 8, 32, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 8, 32] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // tn: S2: like S1 with register tile 4x64
  transform.named_sequence @s2_tn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:4 = transform.structured.tile_using_for %mm tile_sizes [1, 4, 64, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 4, 64] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // tn: S3: cache blocking b, n-panel 32, k-block 128; B block packed into a contiguous buffer; then 8x32 register tiles over m
  transform.named_sequence @s3_tn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %blk, %blk_loops:3 = transform.structured.tile_using_for %mm tile_sizes [1, 0, 32, 128] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %packed = transform.structured.promote %blk {operands_to_promote = [1]} : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:2 = transform.structured.tile_using_for %packed tile_sizes [0, 8, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 8, 32] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // tn: S4: S3 without packing (B block read in place); register tile 8x32
  transform.named_sequence @s4_tn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %blk, %blk_loops:3 = transform.structured.tile_using_for %mm tile_sizes [1, 0, 32, 128] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %reg, %reg_loops:2 = transform.structured.tile_using_for %blk tile_sizes [0, 8, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 8, 32] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // nn2: S1: per batch index, register tile 8x10 (C tile kept in zmm across k), loops b,m,n,k; no cache blocking
  transform.named_sequence @s1_nn2(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:4 = transform.structured.tile_using_for %mm tile_sizes [1, 8, 10, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 8, 10] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // nn2: S2: like S1 with register tile 16x10
  transform.named_sequence @s2_nn2(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:4 = transform.structured.tile_using_for %mm tile_sizes [1, 16, 10, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 16, 10] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // nn2: S3: cache blocking b, n-panel 10, k-block 128; B block packed into a contiguous buffer; then 8x10 register tiles over m
  transform.named_sequence @s3_nn2(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %blk, %blk_loops:3 = transform.structured.tile_using_for %mm tile_sizes [1, 0, 10, 128] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %packed = transform.structured.promote %blk {operands_to_promote = [1]} : (!transform.any_op) -> !transform.any_op
    %reg, %reg_loops:2 = transform.structured.tile_using_for %packed tile_sizes [0, 8, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 8, 10] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // nn2: S4: S3 without packing (B block read in place); register tile 16x10
  transform.named_sequence @s4_nn2(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    %blk, %blk_loops:3 = transform.structured.tile_using_for %mm tile_sizes [1, 0, 10, 128] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %reg, %reg_loops:2 = transform.structured.tile_using_for %blk tile_sizes [0, 16, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op)
    %fill = transform.structured.match ops{["linalg.fill"]} in %f : (!transform.any_op) -> !transform.any_op
    %tfill, %tfill_loops:3 = transform.structured.tile_using_for %fill tile_sizes [1, 16, 10] : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    transform.apply_patterns to %f { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.include @vectorize_and_lower failures(propagate) (%f) : (!transform.any_op) -> ()
    transform.yield
  }
  // nn: S5: tensor route, register tile 8x32, zero-init fused into the tile (C written once), loops b,m,n,k
  transform.named_sequence @s5_nn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    // tile b,m,n to the register tile and pull the producer fill into the tile
    %t, %l:3 = transform.structured.fuse %mm {tile_sizes = [1, 8, 32, 0]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tk, %lk = transform.structured.tile_using_for %t tile_sizes [0, 0, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fv = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fv {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // C tile out of the k loop; its read of the fused zero fill folds to a constant
    %fors = transform.structured.match ops{["scf.for"]} in %fv : (!transform.any_op) -> !transform.any_op
    transform.foreach %fors : !transform.any_op {
    ^bb0(%lp: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %lp : !transform.any_op
    }
    transform.apply_patterns to %fv { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.bufferization.eliminate_empty_tensors %fv : !transform.any_op
    %fb = transform.bufferization.one_shot_bufferize %fv : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fb {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // the in-place insert_slice leaves a self-copy of the C tile: CSE + fold it away
    transform.apply_cse to %fb : !transform.any_op
    transform.apply_patterns to %fb { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
  // nn: S6: tensor route, register tile 4x64, zero-init fused into the tile (C written once), loops b,m,n,k
  transform.named_sequence @s6_nn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    // tile b,m,n to the register tile and pull the producer fill into the tile
    %t, %l:3 = transform.structured.fuse %mm {tile_sizes = [1, 4, 64, 0]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tk, %lk = transform.structured.tile_using_for %t tile_sizes [0, 0, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fv = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fv {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // C tile out of the k loop; its read of the fused zero fill folds to a constant
    %fors = transform.structured.match ops{["scf.for"]} in %fv : (!transform.any_op) -> !transform.any_op
    transform.foreach %fors : !transform.any_op {
    ^bb0(%lp: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %lp : !transform.any_op
    }
    transform.apply_patterns to %fv { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.bufferization.eliminate_empty_tensors %fv : !transform.any_op
    %fb = transform.bufferization.one_shot_bufferize %fv : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fb {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // the in-place insert_slice leaves a self-copy of the C tile: CSE + fold it away
    transform.apply_cse to %fb : !transform.any_op
    transform.apply_patterns to %fb { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
  // tn: S5: tensor route, register tile 8x32, zero-init fused into the tile (C written once), loops b,m,n,k
  transform.named_sequence @s5_tn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    // tile b,m,n to the register tile and pull the producer fill into the tile
    %t, %l:3 = transform.structured.fuse %mm {tile_sizes = [1, 8, 32, 0]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tk, %lk = transform.structured.tile_using_for %t tile_sizes [0, 0, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fv = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fv {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // C tile out of the k loop; its read of the fused zero fill folds to a constant
    %fors = transform.structured.match ops{["scf.for"]} in %fv : (!transform.any_op) -> !transform.any_op
    transform.foreach %fors : !transform.any_op {
    ^bb0(%lp: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %lp : !transform.any_op
    }
    transform.apply_patterns to %fv { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.bufferization.eliminate_empty_tensors %fv : !transform.any_op
    %fb = transform.bufferization.one_shot_bufferize %fv : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fb {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // the in-place insert_slice leaves a self-copy of the C tile: CSE + fold it away
    transform.apply_cse to %fb : !transform.any_op
    transform.apply_patterns to %fb { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
  // tn: S6: tensor route, register tile 4x64, zero-init fused into the tile (C written once), loops b,m,n,k
  transform.named_sequence @s6_tn(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    // tile b,m,n to the register tile and pull the producer fill into the tile
    %t, %l:3 = transform.structured.fuse %mm {tile_sizes = [1, 4, 64, 0]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tk, %lk = transform.structured.tile_using_for %t tile_sizes [0, 0, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fv = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fv {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // C tile out of the k loop; its read of the fused zero fill folds to a constant
    %fors = transform.structured.match ops{["scf.for"]} in %fv : (!transform.any_op) -> !transform.any_op
    transform.foreach %fors : !transform.any_op {
    ^bb0(%lp: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %lp : !transform.any_op
    }
    transform.apply_patterns to %fv { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.bufferization.eliminate_empty_tensors %fv : !transform.any_op
    %fb = transform.bufferization.one_shot_bufferize %fv : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fb {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // the in-place insert_slice leaves a self-copy of the C tile: CSE + fold it away
    transform.apply_cse to %fb : !transform.any_op
    transform.apply_patterns to %fb { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
  // nn2: S5: tensor route, register tile 8x10, zero-init fused into the tile (C written once), loops b,m,n,k
  transform.named_sequence @s5_nn2(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    // tile b,m,n to the register tile and pull the producer fill into the tile
    %t, %l:3 = transform.structured.fuse %mm {tile_sizes = [1, 8, 10, 0]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tk, %lk = transform.structured.tile_using_for %t tile_sizes [0, 0, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fv = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fv {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // C tile out of the k loop; its read of the fused zero fill folds to a constant
    %fors = transform.structured.match ops{["scf.for"]} in %fv : (!transform.any_op) -> !transform.any_op
    transform.foreach %fors : !transform.any_op {
    ^bb0(%lp: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %lp : !transform.any_op
    }
    transform.apply_patterns to %fv { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.bufferization.eliminate_empty_tensors %fv : !transform.any_op
    %fb = transform.bufferization.one_shot_bufferize %fv : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fb {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // the in-place insert_slice leaves a self-copy of the C tile: CSE + fold it away
    transform.apply_cse to %fb : !transform.any_op
    transform.apply_patterns to %fb { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
  // nn2: S6: tensor route, register tile 16x10, zero-init fused into the tile (C written once), loops b,m,n,k
  transform.named_sequence @s6_nn2(%f: !transform.any_op {transform.consumed}) {
    %mm = transform.structured.match interface{LinalgOp} attributes{tag = "mm"} in %f : (!transform.any_op) -> !transform.any_op
    // tile b,m,n to the register tile and pull the producer fill into the tile
    %t, %l:3 = transform.structured.fuse %mm {tile_sizes = [1, 16, 10, 0]} : (!transform.any_op) -> (!transform.any_op, !transform.any_op, !transform.any_op, !transform.any_op)
    %tk, %lk = transform.structured.tile_using_for %t tile_sizes [0, 0, 0, 1] : (!transform.any_op) -> (!transform.any_op, !transform.any_op)
    %fv = transform.structured.vectorize_children_and_apply_patterns %f : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fv {
      transform.apply_patterns.vector.cast_away_vector_leading_one_dim
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // C tile out of the k loop; its read of the fused zero fill folds to a constant
    %fors = transform.structured.match ops{["scf.for"]} in %fv : (!transform.any_op) -> !transform.any_op
    transform.foreach %fors : !transform.any_op {
    ^bb0(%lp: !transform.any_op):
      transform.loop.hoist_loop_invariant_subsets %lp : !transform.any_op
    }
    transform.apply_patterns to %fv { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.bufferization.eliminate_empty_tensors %fv : !transform.any_op
    %fb = transform.bufferization.one_shot_bufferize %fv : (!transform.any_op) -> !transform.any_op
    transform.apply_patterns to %fb {
      transform.apply_patterns.vector.lower_contraction lowering_strategy = "outerproduct"
      transform.apply_patterns.vector.transfer_permutation_patterns
      transform.apply_patterns.vector.lower_transfer max_transfer_rank = 1
      transform.apply_patterns.vector.lower_outerproduct
      transform.apply_patterns.vector.lower_transpose
      transform.apply_patterns.vector.lower_shape_cast
      transform.apply_patterns.memref.fold_memref_alias_ops
      transform.apply_patterns.canonicalization
    } : !transform.any_op
    // the in-place insert_slice leaves a self-copy of the C tile: CSE + fold it away
    transform.apply_cse to %fb : !transform.any_op
    transform.apply_patterns to %fb { transform.apply_patterns.canonicalization } : !transform.any_op
    transform.yield
  }
  transform.named_sequence @__transform_main(%root: !transform.any_op {transform.readonly}) {
    %s1_nn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn_s1"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s1_nn failures(propagate) (%s1_nn) : (!transform.any_op) -> ()
    %s2_nn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn_s2"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s2_nn failures(propagate) (%s2_nn) : (!transform.any_op) -> ()
    %s3_nn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn_s3"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s3_nn failures(propagate) (%s3_nn) : (!transform.any_op) -> ()
    %s4_nn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn_s4"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s4_nn failures(propagate) (%s4_nn) : (!transform.any_op) -> ()
    %s1_tn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_tn_s1"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s1_tn failures(propagate) (%s1_tn) : (!transform.any_op) -> ()
    %s2_tn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_tn_s2"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s2_tn failures(propagate) (%s2_tn) : (!transform.any_op) -> ()
    %s3_tn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_tn_s3"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s3_tn failures(propagate) (%s3_tn) : (!transform.any_op) -> ()
    %s4_tn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_tn_s4"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s4_tn failures(propagate) (%s4_tn) : (!transform.any_op) -> ()
    %s1_nn2 = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn2_s1"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s1_nn2 failures(propagate) (%s1_nn2) : (!transform.any_op) -> ()
    %s2_nn2 = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn2_s2"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s2_nn2 failures(propagate) (%s2_nn2) : (!transform.any_op) -> ()
    %s3_nn2 = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn2_s3"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s3_nn2 failures(propagate) (%s3_nn2) : (!transform.any_op) -> ()
    %s4_nn2 = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn2_s4"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s4_nn2 failures(propagate) (%s4_nn2) : (!transform.any_op) -> ()
    %s5_nn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn_s5"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s5_nn failures(propagate) (%s5_nn) : (!transform.any_op) -> ()
    %s6_nn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn_s6"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s6_nn failures(propagate) (%s6_nn) : (!transform.any_op) -> ()
    %s5_tn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_tn_s5"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s5_tn failures(propagate) (%s5_tn) : (!transform.any_op) -> ()
    %s6_tn = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_tn_s6"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s6_tn failures(propagate) (%s6_tn) : (!transform.any_op) -> ()
    %s5_nn2 = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn2_s5"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s5_nn2 failures(propagate) (%s5_nn2) : (!transform.any_op) -> ()
    %s6_nn2 = transform.structured.match ops{["func.func"]} attributes{sym_name = "bmm_nn2_s6"} in %root : (!transform.any_op) -> !transform.any_op
    transform.include @s6_nn2 failures(propagate) (%s6_nn2) : (!transform.any_op) -> ()
    transform.yield
  }
}
