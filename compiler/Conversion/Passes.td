//===- Passes.td - mbt conversions to upstream dialects ---*- tablegen -*-===//
#ifndef MBT_CONVERSION_PASSES_TD
#define MBT_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def MBTLowerToLinalg : Pass<"mbt-lower-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Lower mbt ops to linalg, tensor, arith and math";
  let description = [{
    Every mbt op but `mbt.sweep` becomes linalg structured ops on tensors
    (named matmuls where one fits, `linalg.generic` elsewhere; the
    scatter-add of `mbt.embedding_grad` an `scf.forall` over its columns;
    with `attention-per-sequence`, `mbt.attention` and its adjoint an
    `scf.forall` over the sequences, each building its own weights; with
    `recurrence-per-model`, the scans of `mbt.gru`, `mbt.lstm` and their
    adjoints an `scf.forall` over the models, each running its own scan),
    so that
    upstream elementwise fusion and one-shot bufferization apply.
    `mbt.fused_update` becomes a per-model prologue over `[M]` (bias
    corrections in f64) and one `linalg.generic` over `[M, P]`; with
    `scalars-per-element`, the prologue is folded into that loop nest, each
    element computing its model's scalars, so the update is one kernel.
    With `fold-operand-rounding` (the CPU with BLAS), a batched
    `mbt.matmul` (or a convolution, or one of its adjoints) of two
    operands `mbt.round_to` rounded to bf16 reads the unrounded values, and
    its named batched matmul (the convolution's GEMM) carries
    `mbt.round_operands_to = bf16`: the runtime's kernel rounds them as it
    packs them, and a rounded copy of each operand (a broadcast input
    copied per model, the weights) is never written. Attention's products
    keep their rounding in the compiled loops (their operands are many
    small per-head views, which the kernel would pack once per product):
    its [T, T] scores, weights and their adjoints are rounded inside the
    generics that read or write them, its [T, D] operands and results by
    a generic over [T, D], and an operand that is an `mbt.round_to` to the
    format already (a rounded projection) is not rounded again.
    With `convolution-kernels` (the CPU), an f32 `mbt.conv2d`,
    `mbt.conv2d_grad_input` or `mbt.conv2d_grad_filter` becomes a
    `func.call` to the runtime's kernel for that pass (`mbt_rt_conv2d_f32`
    and its `_grad_input_f32`, `_grad_filter_f32`, or with
    `mbt.round_operands_to = bf16` the `_f32_bf16` ones, which round the
    operands; docs/abi.md) on its operands' buffers
    (`bufferization.to_memref read_only`), writing a new buffer that
    becomes the result (`bufferization.to_tensor restrict writable`),
    instead of im2col and a batched GEMM.
    With `attention-kernels` (the CPU), an f32 `mbt.attention` or
    `mbt.attention_grad` whose products are f32 or bf16 becomes a call
    to `mbt_rt_attention_f32` or `mbt_rt_attention_grad_f32` (with a
    `format`, the `_f32_bf16` ones) the same way, on its operands with
    their leading dims collapsed into one of sequences; the kernels
    compute a query row at a time where the generics would make each
    head's products tiny batched matmuls.
  }];
  let options = [
    Option<"scalarsPerElement", "scalars-per-element", "bool",
           /*default=*/"false",
           "Compute the optimizer's per-model scalars in every element of "
           "the fused update instead of a prologue over the models (one "
           "kernel on a GPU)">,
    Option<"attentionPerSequence", "attention-per-sequence", "bool",
           /*default=*/"false",
           "Lower each sequence's attention and its adjoint inside an "
           "scf.forall over the leading dims, so that its weights [H, T, T] "
           "stay in the cache (the CPU), rather than over the whole batch">,
    Option<"recurrencePerModel", "recurrence-per-model", "bool",
           /*default=*/"false",
           "Lower each model's GRU or LSTM scan and its adjoint inside an "
           "scf.forall over the models (the CPU: each thread runs whole "
           "scans), rather than one scan over all models whose small ops "
           "run at every position">,
    Option<"foldOperandRounding", "fold-operand-rounding", "bool",
           /*default=*/"false",
           "Fold the bf16 rounding of a batched product's two operands into "
           "its linalg op (mbt.round_operands_to), for the CPU kernel that "
           "rounds them as it packs them; the rounding ops left unused go">,
    Option<"convolutionKernels", "convolution-kernels", "bool",
           /*default=*/"false",
           "Lower f32 convolutions and their adjoints to calls to the "
           "runtime's convolution kernels (oneDNN's direct convolution on "
           "the CPU) instead of im2col and a batched GEMM">,
    Option<"attentionKernels", "attention-kernels", "bool",
           /*default=*/"false",
           "Lower f32 attention (f32 or bf16 products) and its adjoint to "
           "calls to the runtime's attention kernels (the CPU: a query row "
           "at a time in vector registers) instead of generics and batched "
           "matmuls per head">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::math::MathDialect",
                           // embedding's adjoint: loops over positions inside an scf.forall
                           "::mlir::scf::SCFDialect",
                           // convolution-kernels: calls on the operands' buffers
                           "::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::func::FuncDialect"];
}

def MBTFuseElementwise : Pass<"mbt-fuse-elementwise", "::mlir::ModuleOp"> {
  let summary = "Upstream elementwise fusion that leaves named matmuls alone";
  let description = [{
    `linalg-fuse-elementwise-ops` with a control function that never folds
    into or out of a named linalg op (the batched matmuls): upstream
    propagates a reshape through any LinalgOp by rebuilding it as a
    `linalg.generic` over the expanded shape, which turns the GEMM of a
    convolution (collapsed columns times a filter matrix) into naive loops
    that BLAS and cuBLAS never see. Generics fuse as upstream does (a
    producer with one use). A reshape is not moved across a generic when
    the op on its far side is kept whole (an expand_shape whose users are
    all matmuls, a collapse_shape of a matmul's result): nothing could fuse
    there, and the move would only split the generic's innermost loop
    (attention's heads: a loop of D = 32 contiguous values would become 4
    loops of 8, too short to vectorize).
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect",
                           "::mlir::affine::AffineDialect"];
}

def MBTLinalgToBlas : Pass<"mbt-linalg-to-blas", "::mlir::ModuleOp"> {
  let options = [
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "Whose kernel to call: cpu (mbt_rt_batch_matmul_*, over host "
           "buffers) or cuda (mbt_rt_cuda_batch_matmul_*, over device "
           "buffers)">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Report each matmul's call as a remark: the kernel, the "
           "transposes and whether the output's zero fill is dropped">,
  ];
  let summary = "Call the runtime's BLAS kernel for batched matmuls on memrefs";
  let description = [{
    After bufferization, replaces `linalg.batch_matmul` and its
    `_transpose_a` / `_transpose_b` forms on f32 (f64) memrefs with a call
    to `mbt_rt_batch_matmul_f32` (`_f64`; docs/abi.md), which the runtime
    implements with one sgemm (dgemm) per batch index. A zero fill of the
    output just before the matmul (or a copy of a zero-filled buffer into
    it) is dropped and the kernel overwrites the output instead of
    accumulating. On the CPU, a `linalg.generic` that is a batched matmul
    with up to four batch dims (a multiply-accumulate body over a batch, an
    m, an n and a k loop) calls the kernel of its rank
    (`mbt_rt_batch_matmul_f32_4d` to `_6d`) on transposed views of its
    operands.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def MBTVectorMatmuls : Pass<"mbt-vector-matmuls", "::mlir::ModuleOp"> {
  let summary = "Generate register-blocked vector kernels for batched matmuls";
  let description = [{
    After bufferization: every batched f32/f64 matmul on memrefs with unit
    inner strides whose B is not transposed (`linalg.batch_matmul`,
    `linalg.batch_matmul_transpose_a`) becomes an `scf.parallel` over the
    batch (the models) of register-blocked kernels in the vector dialect:
    panels of `rows` rows by 4 vectors (2 below 512-bit vectors) of C held in
    registers across the contraction, each step broadcasting one element of
    A and fusing it into a row of B. Leftover columns use one masked vector,
    leftover rows a one-row kernel. A zero fill of C just before is folded
    (the accumulators start at zero). Each element of C is a chain of FMAs
    in the order of k, so a model's product does not depend on the batch.
    Matmuls with a transposed B are left to mbt-linalg-to-blas.
  }];
  let options = [
    Option<"vectorBits", "vector-bits", "int64_t", /*default=*/"512",
           "Width of the target's vector registers, in bits">,
    Option<"rows", "rows", "int64_t", /*default=*/"6",
           "Rows of C per register panel">,
    Option<"vectors", "vectors", "int64_t", /*default=*/"0",
           "Vectors of C per row of a panel (0: 4 for 512-bit vectors, else 2)">,
    Option<"kBlock", "k-block", "int64_t", /*default=*/"0",
           "Contraction steps per pass over C (0: all)">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::vector::VectorDialect"];
}

def MBTElideCopies : Pass<"mbt-elide-copies", "::mlir::ModuleOp"> {
  let summary = "Compute buffers in place of the views they are copied into";
  let description = [{
    After bufferization, an allocation that is written, read and finally
    copied whole (directly or through a collapse_shape) into a view of
    another buffer becomes that view (through an expand_shape), and the
    copy goes away: the gradients of the train step are computed directly
    in their columns of the flat `[M, P]` gradient buffer, a recurrence's
    gates in their columns at position t, an attention block's product in
    its rows. Applies only when the destination is a view of an allocation
    or a function argument, nothing else touches it in between (views of
    the same buffer that are provably disjoint excepted: static boxes that
    do not overlap, or subviews taking disjoint static ranges of one
    dimension), and every user of the allocation comes before the copy and
    accepts the view's strided layout (views among them are rebuilt on it).
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def MBTPlanWorkspace : Pass<"mbt-plan-workspace", "::mlir::ModuleOp"> {
  let summary = "Place a step's temporaries in one buffer the caller owns";
  let description = [{
    After bufferization: every public function definition gains a last
    argument `memref<?xi8>`, the workspace, and every allocation of its
    entry block that can be planned becomes a `memref.view` of it.
    Allocations of the same byte size whose live ranges (from the
    allocation to the last use of any view of it) do not overlap share a
    slot; slots are 64-byte aligned. Beside each such function `F` the
    pass adds `F_workspace_bytes`, taking `F`'s other arguments and
    returning the bytes the workspace needs (it depends on their dynamic
    sizes). Left to malloc: allocations in nested regions, with a
    non-identity layout, with a dynamic size that is not a `memref.dim` of
    an argument at a constant index, or with an alias that is returned or
    turned into a memref by an op that is not a view. A function that
    already has its `_workspace_bytes` is left as it is. With `plan=false`
    the functions get the workspace argument and a size function returning
    0, and every allocation stays (to measure what planning saves).
  }];
  let options = [
    Option<"plan", "plan", "bool", /*default=*/"true",
           "Make allocations views of the workspace">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Report each function's plan as a remark: the temporaries "
           "planned, the slots they share and the allocations left to "
           "malloc">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MBTResolveDynamicExpandShapes
    : Pass<"mbt-resolve-dynamic-expand-shapes", "::mlir::ModuleOp"> {
  let summary = "Spell out the view of a memref.expand_shape that splits a dynamic size in two";
  let description = [{
    A `memref.expand_shape` whose group expands into more than one dynamic
    size (a `[M, B T, D]` product read as `[M, B, T, D]` sequences, which
    `mbt.split_rows` lowers to) becomes the `memref.reinterpret_cast` it
    stands for: the source's offset, the op's output sizes, and strides
    that multiply, inside each group, the source's stride by the sizes to
    the right. MLIR 19's expand-strided-metadata infers those sizes from
    the result type and cannot for such a group, so this runs before it;
    other expand_shapes are left to it.

    Example:

    ```mlir
    %e = memref.expand_shape %m [[0], [1, 2], [3]] output_shape [4, %b, %t, 32]
        : memref<4x?x32xf32> into memref<4x?x?x32xf32>
    // becomes
    %base, %offset, %sizes:3, %strides:3 = memref.extract_strided_metadata %m
    %rows = arith.muli %t, %strides#1 : index
    %e = memref.reinterpret_cast %m to offset: [%offset],
        sizes: [4, %b, %t, 32], strides: [%strides#0, %rows, %strides#1, %strides#2]
    ```
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MBTMapLoopsToGpu : Pass<"mbt-map-loops-to-gpu", "::mlir::ModuleOp"> {
  let summary = "Tile outermost parallel loops into GPU blocks and threads, "
                "innermost dimension on x";
  let description = [{
    Each outermost `scf.parallel` is tiled into a loop over blocks around a
    loop over a block's threads (scf::tileParallelLoop, with in-bounds
    guards) and gets the mapping attributes that `convert-parallel-loops-to-gpu`
    reads. The innermost dimension goes to x at both levels, so that a warp
    reads consecutive elements and the long dimension (a model's
    parameters) meets the 2^31 - 1 limit of grid x rather than the 65,535
    of y and z. Blocks are `threads-x` by `threads-y` threads, fewer along a
    dimension that is statically shorter; dimensions beyond three stay
    loops inside the kernel.

    Host code that loads or stores (what the canonicalizer leaves of a unit
    loop over the models of a one-model sweep: a loss's reduction) is first
    wrapped in a one-iteration `scf.parallel`, a kernel of one thread, since
    every buffer is in device memory; host code that would use a value read
    from device memory is an error.
  }];
  let options = [
    Option<"threadsX", "threads-x", "int64_t", /*default=*/"32",
           "Threads of a block along the innermost dimension">,
    Option<"threadsY", "threads-y", "int64_t", /*default=*/"8",
           "Threads of a block along the dimension outside it">,
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect",
                           "::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect"];
}

def MBTCopiesToLinalg : Pass<"mbt-copies-to-linalg", "::mlir::ModuleOp"> {
  let summary = "Turn every memref.copy into a linalg.copy";
  let description = [{
    For the CUDA target, where buffers live in device memory and host code
    must not touch them: a linalg.copy is lowered like any other linalg op,
    to a parallel loop nest and then a GPU kernel, where a memref.copy
    would become a host call to the memref runtime's copy.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def MBTExpandMath : Pass<"mbt-expand-math", "::mlir::ModuleOp"> {
  let summary = "Rewrite f32 tanh and exp as inline arithmetic that vectorizes";
  let description = [{
    Before the lowering to LLVM on the CPU: every f32 `math.tanh` becomes
    `sign(x) (1 - exp(-2|x|)) / (1 + exp(-2|x|))` (upstream's expansion),
    one `expf` instead of glibc's `tanhf` (which goes through `expm1f`).
    Then every f32 `math.exp` (tanh's included) becomes upstream's
    polynomial approximation: x = k ln2 + r, a degree-7 polynomial in r
    through `math.fma`, 2^k built from its bits. With no call left, LLVM
    vectorizes the loops around it, and since the expansion is fixed IEEE
    arithmetic, a vector lane and the scalar remainder give the same bits.
    Relative error: at most 1 ulp for x <= 0, 3e-7 above. f64 ops are left
    to libm.

    Example:

    ```mlir
    %e = math.exp %x : f32
    // becomes, among others:
    %p = math.fma %r, %c7, %c6 : f32
    %k = arith.fptosi %n : f32 to i32
    %b = arith.bitcast %s : i32 to f32
    ```
  }];
  let dependentDialects = ["::mlir::math::MathDialect",
                           "::mlir::arith::ArithDialect"];
}

def MBTOuterParallelLoops : Pass<"mbt-outer-parallel-loops", "::mlir::ModuleOp"> {
  let summary = "Keep one parallel dimension per loop nest, for OpenMP";
  let description = [{
    After convert-linalg-to-parallel-loops: the outermost dimension of an
    outermost `scf.parallel` (the model dimension of a batched step) stays
    parallel when the nest has at least `min-iterations` iterations (a
    dynamic trip count counts as 128; 16 times as many for a nest inside a
    sequential loop, which opens a region at each of its iterations) and
    that dimension at least two;
    every other `scf.parallel`
    dimension, and every dimension of a smaller nest, becomes an
    `scf.for`. A nest outside any sequential loop that the estimate leaves
    serial although one of its own sizes is dynamic (the `[M, B T, D]`
    rows of a product, thousands where the estimate counts 128) gets both
    forms under an `scf.if` on its real iteration count (its own trip
    counts at run time, times its body's estimate) against
    `min-iterations`. convert-scf-to-openmp then gives each thread whole models
    whose loops are the serial ones, still vectorizable, and opens no
    nested parallel regions.
  }];
  let options = [
    Option<"minIterations", "min-iterations", "int64_t", /*default=*/"32768",
           "Smallest estimated iteration count of a nest run in parallel">,
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect",
                           "::mlir::scf::SCFDialect"];
}

def MBTReductionLanes : Pass<"mbt-reduction-lanes", "::mlir::ModuleOp"> {
  let summary = "Keep innermost loops' accumulators in registers, f32 sums in lanes";
  let description = [{
    After the lowering of linalg to loops: an innermost `scf.for` whose
    only write is `memref.store (arith.addf|arith.maximumf (memref.load
    %m[%i]), %x), %m[%i]` with `%i` defined outside the loop (a reduction
    over the innermost dimension) keeps its accumulator in memory, one
    element per add latency. It gets lanes: element `j` goes to lane
    `(j - lb) mod L`, the lanes are combined by a fixed tree and then with
    the buffer's value before the loop. The order of the additions depends
    on the element index alone: a model's sums are the same alone and in a
    batch, and trailing elements that add 0 (padding) change no bit. Loops
    of a dynamic trip count (a sequence's positions or keys) or of at
    least 256 iterations get the lanes.

    Where every op of the body that depends on the element is elementwise
    (arith, math) or a load whose last index is the element, the lanes are
    one `vector<16xf32>`: the body runs on 16 elements at once (its other
    values stay scalars, broadcast where needed), the last `count mod 16`
    elements are one masked step (`vector.maskedload`; a scalar copy of
    the body per element, selected into its lane, where a load is strided
    or an op could trap on a masked lane), and the tree combines halves.
    Other bodies get 4 scalar lanes, one copy of the body per lane.

    Every other innermost loop whose only writes are such accumulators
    (shorter static sums, f64 sums, an arg-max's maximum and index) keeps
    them in `iter_args`: loaded before the loop, stored after it, the
    operations in their order, so no bit changes.

    Example:

    ```mlir
    scf.for %j = %c0 to %n step %c1 {
      %a = memref.load %m[%i] : memref<?xf32>
      %x = memref.load %in[%i, %j] : memref<?x?xf32>
      %s = arith.addf %a, %x : f32
      memref.store %s, %m[%i] : memref<?xf32>
    }
    // becomes
    %lanes = scf.for %j = %c0 to %end step %c16 iter_args(%l = %zeros)
        -> (vector<16xf32>) {
      %x = vector.load %in[%i, %j] : memref<?x?xf32>, vector<16xf32>
      %s = arith.addf %l, %x : vector<16xf32>
      scf.yield %s : vector<16xf32>
    }
    %all = scf.if %any -> (vector<16xf32>) { // the last count mod 16
      %x = vector.maskedload %in[%i, %end], %mask, %zeros ...
      ...
    }
    // halves combined: 16 -> 8 -> 4 -> 2 -> 1
    %s = arith.addf %before, %tree : f32
    memref.store %s, %m[%i] : memref<?xf32>
    ```
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect",
                           "::mlir::arith::ArithDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::vector::VectorDialect"];
}

def MBTOutlineRepeated : Pass<"mbt-outline-repeated", "::mlir::ModuleOp"> {
  let summary = "Give each loop nest that repeats (a deep model's blocks) one function";
  let description = [{
    After bufferization, each block of a deep model (a transformer's
    twelve, say) is the same sequence of linalg ops and loops on other
    views: the same code, generated and optimized once per block, and
    again in the eval step. Compile time then grows with the depth. This
    pass finds the top-level ops of every function that have regions and
    no results (linalg ops, scf loops) and that occur at least twice,
    equal up to the values they capture, and replaces each occurrence
    with a call to one private function that holds the op.

    Two ops are equal when the functions they would become print the
    same: the same ops, attributes and types, the captured constants
    cloned inside, every other captured value an argument, in the order
    of first use (so `ins(%a, %a)` and `ins(%a, %b)` differ). A captured
    memref used only by linalg ops, loads and stores inside the op is
    passed with its strided layout's offset made dynamic, so that the
    views of different blocks' parameters (the same strides, other
    offsets) share the function; the call site casts it
    (`memref.cast`). The functions are `no_inline` with internal
    linkage: LLVM's inliner would put the copies back.

    Example:

    ```mlir
    linalg.generic ... ins(%ln1, %gamma1 : memref<4x?x64xf32>,
        memref<4x64xf32, strided<[1000, 1], offset: 64>>) ...
    linalg.generic ... ins(%ln2, %gamma2 : memref<4x?x64xf32>,
        memref<4x64xf32, strided<[1000, 1], offset: 512>>) ...
    // becomes
    %g1 = memref.cast %gamma1 : ... to memref<4x64xf32, strided<[1000, 1], offset: ?>>
    call @mbt_repeated(%ln1, %g1, ...)
    %g2 = memref.cast %gamma2 : ...
    call @mbt_repeated(%ln2, %g2, ...)
    ```

    The arithmetic of every op is unchanged: the trained numbers are the
    same bit for bit.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect",
                           "::mlir::memref::MemRefDialect",
                           "::mlir::LLVM::LLVMDialect"];
}

def MBTDropMetadata : Pass<"mbt-drop-metadata", "::mlir::ModuleOp"> {
  let summary = "Erase mbt.sweep, mbt.optimizer and the mbt.* module attributes";
  let description = [{
    The sweep and the parameter layout are compile-time facts that the
    driver writes into the artifact's manifest, and the update rules
    (mbt.optimizer) have been copied into the fused update's loops by
    mbt-lower-to-linalg; nothing after the linalg stage reads them, and
    LLVM translation has no meaning for them.
  }];
}

def MBTSplitSharedFills : Pass<"mbt-split-shared-fills", "::mlir::ModuleOp"> {
  let summary = "Give each op that writes into a shared fill a fill of its own";
  let description = [{
    Before One-Shot Bufferize: a `linalg.fill` of a `tensor.empty` that
    several ops take as their destination (`outs`), which CSE made of the
    equal fills that started each accumulation, would bufferize to one
    buffer filled once and copied into a new buffer for each of those
    writers. Each writer after the first (every writer, when other ops
    also read the fill) gets its own `tensor.empty` and fill, cloned just
    before it, so that it fills its own buffer and writes in place: a
    write instead of a read and a write, and one buffer fewer.

    Example:

    ```mlir
    %z = linalg.fill ins(%zero : f32) outs(%e : tensor<4x?x64xf32>) -> ...
    %a = linalg.batch_matmul ins(...) outs(%z : ...) -> ...
    %b = linalg.batch_matmul ins(...) outs(%z : ...) -> ...
    // becomes
    %z = linalg.fill ins(%zero : f32) outs(%e : ...) -> ...
    %a = linalg.batch_matmul ins(...) outs(%z : ...) -> ...
    %e2 = tensor.empty(%n) : tensor<4x?x64xf32>
    %z2 = linalg.fill ins(%zero : f32) outs(%e2 : ...) -> ...
    %b = linalg.batch_matmul ins(...) outs(%z2 : ...) -> ...
    ```
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect",
                           "::mlir::tensor::TensorDialect"];
}

def MBTSplitSharedToMemref : Pass<"mbt-split-shared-to-memref", "::mlir::ModuleOp"> {
  let summary = "Give each reader of a bufferization.to_memref one of its own";
  let description = [{
    Before One-Shot Bufferize: the runtime's kernels (attention,
    convolution) read their tensor operands through
    `bufferization.to_memref`, which is Pure, so CSE merges the forward's
    and the adjoint's to_memref of one tensor into the first. One-Shot
    Bufferize sees the tensor read only there, and may let an op between
    the two calls write into the tensor's buffer in place, before the
    second call reads it. Each reader after the first (seen through
    `memref.cast` and other views) gets a copy of the to_memref, and of
    the views between, just before it, where the analysis sees the read.

    Example:

    ```mlir
    %m = bufferization.to_memref %q read_only : memref<?x?x?xf32>
    call @mbt_rt_attention_f32(%m, ...)
    %r = linalg.generic ... outs(%e : tensor<...>)   // may reuse %q's buffer
    call @mbt_rt_attention_grad_f32(%m, ...)
    // becomes
    %m = bufferization.to_memref %q read_only : memref<?x?x?xf32>
    call @mbt_rt_attention_f32(%m, ...)
    %r = linalg.generic ... outs(%e : tensor<...>)   // %q is still read
    %m2 = bufferization.to_memref %q read_only : memref<?x?x?xf32>
    call @mbt_rt_attention_grad_f32(%m2, ...)
    ```
  }];
  let dependentDialects = ["::mlir::bufferization::BufferizationDialect",
                           "::mlir::memref::MemRefDialect"];
}

def MBTGlobalizeConstants : Pass<"mbt-globalize-constants", "::mlir::ModuleOp"> {
  let summary = "Create the memref.global of every tensor constant in program order";
  let description = [{
    One-Shot Bufferize turns each ranked tensor `arith.constant` into a
    `memref.global` (bufferization::getGlobalFor), visiting the functions
    in an order that MLIR 19 takes from a pointer-keyed map, so the
    globals' order and the `_0`, `_1` suffixes of equal-typed constants
    change from one run to the next (fixed upstream by llvm-project
    PR 184722, after 19). Run just before One-Shot Bufferize, this pass
    creates those globals itself while walking the module in program
    order; getGlobalFor then finds and reuses them, so the same input
    always compiles to the same text.

    Example: two functions each holding `arith.constant dense<...> :
    tensor<12xf32>` of different values get `@__constant_12xf32` (the
    first in the module) and `@__constant_12xf32_0` (the second), every
    time.
  }];
  let options = [
    Option<"alignment", "alignment", "uint64_t", /*default=*/"64",
           "Alignment of the globals; must equal One-Shot Bufferize's "
           "buffer alignment, or it creates its own">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

#endif // MBT_CONVERSION_PASSES_TD
