//===- OneDnnConv.cpp - one model's convolution on oneDNN -----------------===//
//
// oneDNN's direct convolution runs LeNet's convolutions 2-3x faster than
// im2col and a GEMM (docs/benchmarks.md), in layouts of its own: channels
// in blocks of 8 or 16 (nChw16c), which it picks for each pass and shape.
// The caller's operands are plain [B, C, H, W] of any strides, so each
// primitive comes with the reorders between the two: an operand the pass
// reads is copied into the primitive's layout before it runs, the one it
// writes copied out after. A reorder only copies, so the bits are the
// primitive's.
//
// Operands that hold bf16 values (the kernels that round their operands,
// ConvKernels.cpp) go to oneDNN's bf16 kernels where the CPU has them
// (AVX512-BF16, AMX): reordered into bf16 exactly, multiplied exactly,
// summed in f32. Where oneDNN has no bf16 kernel for a pass, or its bf16
// kernel is the slower (bf16KernelPays), the f32 one computes the same
// products.
//
// Primitives are made once per pass, shape and strides, on the thread that
// uses them, and kept there with the buffers of the reordered operands; they
// run with the thread's scratch buffer (ThreadScratchpad): no two threads
// share one.
//
//===----------------------------------------------------------------------===//
#include "Convolution.h"
#include "OneDnnContext.h"
#include "OneDnnMatmul.h"

#ifdef MBT_HAVE_DNNL
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>
#endif

namespace mbt {
namespace runtime {

#ifdef MBT_HAVE_DNNL
namespace {

using dt = dnnl::memory::data_type;
using dims = dnnl::memory::dims;
using tag = dnnl::memory::format_tag;

/// An operand as the caller holds it and as the primitive reads or writes
/// it, with the reorder between the two where they differ.
struct Operand {
  dnnl::memory user;
  dnnl::memory inner;
  std::optional<dnnl::reorder> reorder;
  std::vector<float> innerBuffer;

  /// `user` of layout `userDesc`, the primitive's layout `innerDesc`;
  /// `written`: the pass writes it (the reorder runs inner to user).
  void make(const dnnl::memory::desc &userDesc,
            const dnnl::memory::desc &innerDesc, bool written) {
    dnnl::engine &engine = oneDnnEngine();
    user = dnnl::memory(userDesc, engine, DNNL_MEMORY_NONE);
    if (userDesc == innerDesc) {
      inner = user;
      return;
    }
    innerBuffer.resize((innerDesc.get_size() + sizeof(float) - 1) /
                       sizeof(float));
    inner = dnnl::memory(innerDesc, engine, innerBuffer.data());
    reorder = written ? dnnl::reorder(inner, user) : dnnl::reorder(user, inner);
  }
};

/// A pass's primitive with its operands and scratchpad.
struct ConvPrimitive {
  dnnl::primitive conv;
  Operand image, filter, result;
  ThreadScratchpad scratchpad;
};

/// A plain operand of `sizes` and `strides`.
dnnl::memory::desc plain(const View4 &view) {
  return dnnl::memory::desc(dims(view.sizes.begin(), view.sizes.end()), dt::f32,
                            dims(view.strides.begin(), view.strides.end()));
}

/// The filter [O, C/G, KH, KW] as oneDNN's grouped weights [G, O/G, C/G,
/// KH, KW] where there are groups.
dnnl::memory::desc plainFilter(const View4 &filter, int64_t groups) {
  if (groups == 1)
    return plain(filter);
  const auto &s = filter.strides;
  return dnnl::memory::desc(
      {groups, filter.sizes[0] / groups, filter.sizes[1], filter.sizes[2],
       filter.sizes[3]},
      dt::f32, {filter.sizes[0] / groups * s[0], s[0], s[1], s[2], s[3]});
}

/// `desc`'s dims in a layout and element type oneDNN picks for the pass.
dnnl::memory::desc anyLayout(const dnnl::memory::desc &desc, dt type) {
  return dnnl::memory::desc(desc.dims(), type, tag::any);
}

/// A convolution's operands as a pass's primitive takes them: its image,
/// filter and result, each in a layout oneDNN picks.
struct PassOperands {
  dnnl::memory::desc image, filter, result;
};

/// The operands of `pass`'s primitive: the two the pass reads in bf16
/// where `bf16` is set, the one it writes (and all, without bf16) in f32.
PassOperands passOperands(const ConvShape &shape, const ConvOperands &operands,
                          bool bf16, ConvPass pass) {
  auto type = [&](ConvPass writer) {
    return bf16 && pass != writer ? dt::bf16 : dt::f32;
  };
  return {anyLayout(plain(operands.image), type(ConvPass::GradInput)),
          anyLayout(plainFilter(operands.filter, shape.groups),
                    type(ConvPass::GradFilter)),
          anyLayout(plain(operands.result), type(ConvPass::Forward))};
}

/// The window's geometry as oneDNN takes it.
struct Geometry {
  dims strides, dilation, padLow, padHigh;
};

Geometry geometryOf(const ConvShape &shape) {
  Geometry g;
  g.strides = {shape.sh, shape.sw};
  // oneDNN counts the dilation from 0 (no gap), torch from 1.
  g.dilation = {shape.dh - 1, shape.dw - 1};
  g.padLow = {shape.ph, shape.pw};
  // What the windows of the last output position reach past the image;
  // below ph where the stride skips the image's last rows.
  g.padHigh = {(shape.oh - 1) * shape.sh + (shape.kh - 1) * shape.dh + 1 -
                   shape.height - shape.ph,
               (shape.ow - 1) * shape.sw + (shape.kw - 1) * shape.dw + 1 -
                   shape.width - shape.pw};
  return g;
}

dnnl::primitive_attr userScratchpad() {
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  return attr;
}

/// Whether a bf16 primitive is one of oneDNN's bf16 kernels: where it has
/// none for a pass it falls back to an im2col GEMM (LeNet's first
/// convolution's filter adjoint: 4.5x slower than the f32 kernel), and
/// the f32 primitive computes the same products faster.
bool isBf16Kernel(const char *implementation) {
  std::string name(implementation);
  return name.find("gemm") == std::string::npos &&
         name.find("ref") == std::string::npos;
}

/// `pd` made into `conv`, and the scratchpad it runs with; throws where
/// `bf16` asks for one of oneDNN's bf16 kernels and `pd` is none.
template <typename Primitive, typename PrimitiveDesc>
dnnl::memory::desc instantiate(const PrimitiveDesc &pd, bool bf16,
                               dnnl::primitive &conv) {
  if (bf16 && !isBf16Kernel(pd.impl_info_str()))
    throw dnnl::error(dnnl_unimplemented, "no bf16 kernel");
  conv = Primitive(pd);
  return pd.scratchpad_desc();
}

/// Makes `made`'s primitive for `pass` and its operands' layouts; with
/// `bf16`, the two operands the pass reads are multiplied as bf16 (they
/// hold bf16 values already, so the reorder into bf16 is exact). Throws
/// dnnl::error where oneDNN has none.
void makeConv(ConvPass pass, const ConvShape &shape,
              const ConvOperands &operands, bool bf16, ConvPrimitive &made) {
  // The backward primitives are made with the forward one as their hint.
  dnnl::engine &engine = oneDnnEngine();
  Geometry g = geometryOf(shape);
  PassOperands hint = passOperands(shape, operands, bf16, ConvPass::Forward);
  PassOperands d = passOperands(shape, operands, bf16, pass);
  dnnl::primitive_attr attr = userScratchpad();
  dnnl::convolution_forward::primitive_desc forward(
      dnnl::convolution_forward::desc(
          dnnl::prop_kind::forward_training,
          dnnl::algorithm::convolution_direct, hint.image, hint.filter,
          hint.result, g.strides, g.dilation, g.padLow, g.padHigh),
      attr, engine);
  PassOperands layouts;
  dnnl::memory::desc scratchpad;
  switch (pass) {
  case ConvPass::Forward:
    scratchpad =
        instantiate<dnnl::convolution_forward>(forward, bf16, made.conv);
    layouts = {forward.src_desc(), forward.weights_desc(), forward.dst_desc()};
    break;
  case ConvPass::GradInput: {
    dnnl::convolution_backward_data::primitive_desc pd(
        dnnl::convolution_backward_data::desc(
            dnnl::algorithm::convolution_direct, d.image, d.filter, d.result,
            g.strides, g.dilation, g.padLow, g.padHigh),
        attr, engine, forward);
    scratchpad =
        instantiate<dnnl::convolution_backward_data>(pd, bf16, made.conv);
    layouts = {pd.diff_src_desc(), pd.weights_desc(), pd.diff_dst_desc()};
    break;
  }
  case ConvPass::GradFilter: {
    dnnl::convolution_backward_weights::primitive_desc pd(
        dnnl::convolution_backward_weights::desc(
            dnnl::algorithm::convolution_direct, d.image, d.filter, d.result,
            g.strides, g.dilation, g.padLow, g.padHigh),
        attr, engine, forward);
    scratchpad =
        instantiate<dnnl::convolution_backward_weights>(pd, bf16, made.conv);
    layouts = {pd.src_desc(), pd.diff_weights_desc(), pd.diff_dst_desc()};
    break;
  }
  }
  made.image.make(plain(operands.image), layouts.image,
                  pass == ConvPass::GradInput);
  made.filter.make(plainFilter(operands.filter, shape.groups), layouts.filter,
                   pass == ConvPass::GradFilter);
  made.result.make(plain(operands.result), layouts.result,
                   pass == ConvPass::Forward);
  made.scratchpad = ThreadScratchpad(scratchpad);
}

/// A primitive's key: the pass, whether it multiplies in bf16, the shape
/// and the operands' strides.
using ConvKey = std::array<int64_t, 2 + 16 + 12>;

struct ConvKeyHash {
  size_t operator()(const ConvKey &key) const {
    size_t h = 0;
    for (int64_t v : key)
      h = h * 1000003u ^ std::hash<int64_t>()(v);
    return h;
  }
};

ConvKey keyOf(ConvPass pass, bool bf16, const ConvShape &s,
              const ConvOperands &o) {
  ConvKey key{int64_t(pass), int64_t(bf16), s.batch,  s.channels, s.height,
              s.width,       s.out,         s.groups, s.kh,       s.kw,
              s.oh,          s.ow,          s.sh,     s.sw,       s.ph,
              s.pw,          s.dh,          s.dw};
  size_t i = 18;
  for (const View4 *view : {&o.image, &o.filter, &o.result})
    for (int64_t stride : view->strides)
      key[i++] = stride;
  return key;
}

/// The calling thread's primitive for this pass, shape and strides (with
/// `bf16`, one of oneDNN's bf16 kernels); null where oneDNN has none.
ConvPrimitive *convPrimitive(ConvPass pass, bool bf16, const ConvShape &shape,
                             const ConvOperands &operands) {
  // A run meets one shape per convolution and batch size (a last, partial
  // batch adds one); the bound keeps an unusual run's memory flat.
  constexpr size_t kMaxPrimitives = 256;
  thread_local std::unordered_map<ConvKey, std::unique_ptr<ConvPrimitive>,
                                  ConvKeyHash>
      cache;
  ConvKey key = keyOf(pass, bf16, shape, operands);
  auto found = cache.find(key);
  if (found != cache.end())
    return found->second.get();
  if (cache.size() >= kMaxPrimitives)
    cache.clear();
  auto made = std::make_unique<ConvPrimitive>();
  try {
    makeConv(pass, shape, operands, bf16, *made);
  } catch (const dnnl::error &) {
    made.reset();
  }
  return (cache[key] = std::move(made)).get();
}

/// The primitive's argument numbers for the image, filter and result of
/// `pass`.
std::array<int, 3> argumentsOf(ConvPass pass) {
  switch (pass) {
  case ConvPass::Forward:
    return {DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DST};
  case ConvPass::GradInput:
    return {DNNL_ARG_DIFF_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_DIFF_DST};
  case ConvPass::GradFilter:
    return {DNNL_ARG_SRC, DNNL_ARG_DIFF_WEIGHTS, DNNL_ARG_DIFF_DST};
  }
  return {};
}

void run(ConvPass pass, ConvPrimitive &p, const ConvOperands &operands) {
  dnnl::stream &stream = oneDnnThreadStream();
  Operand *all[] = {&p.image, &p.filter, &p.result};
  const View4 *views[] = {&operands.image, &operands.filter, &operands.result};
  int written = pass == ConvPass::Forward     ? 2
                : pass == ConvPass::GradInput ? 0
                                              : 1;
  for (int i = 0; i < 3; ++i) {
    all[i]->user.set_data_handle(views[i]->data);
    if (i != written && all[i]->reorder)
      all[i]->reorder->execute(stream, all[i]->user, all[i]->inner);
  }
  std::array<int, 3> args = argumentsOf(pass);
  p.conv.execute(stream, {{args[0], p.image.inner},
                          {args[1], p.filter.inner},
                          {args[2], p.result.inner},
                          {DNNL_ARG_SCRATCHPAD, p.scratchpad.get()}});
  if (all[written]->reorder)
    all[written]->reorder->execute(stream, all[written]->inner,
                                   all[written]->user);
  stream.wait();
}

/// Whether oneDNN's bf16 kernel is the faster one for `pass` of `shape`.
/// AMX's filter gradient with fewer than 4 channels per group runs 1.1-2.3x
/// slower than the f32 kernel on the rounded operands (2-3 ms against 1-1.6
/// for 32 filters of 5x5 over 64 images of 28x28, 1 to 3 channels; with 4
/// and 8 channels the bf16 kernel is 1.3-2x the faster), a tenth of the
/// bf16 fashion CNN's step. The f32 kernel multiplies the same bf16 values
/// exactly, so only the order of the f32 sums changes, and the choice is by
/// shape alone: model i's bits stay the same alone and in a batch.
bool bf16KernelPays(ConvPass pass, const ConvShape &shape) {
  return !(pass == ConvPass::GradFilter && shape.channelsPerGroup() < 4 &&
           oneDnnHasAmx());
}

} // namespace

bool convolveOnOneDnn(ConvPass pass, const ConvShape &shape,
                      const ConvOperands &operands, bool bf16Operands) {
  try {
    ConvPrimitive *p = nullptr;
    if (bf16Operands && bf16KernelPays(pass, shape))
      p = convPrimitive(pass, true, shape, operands);
    if (!p)
      p = convPrimitive(pass, false, shape, operands);
    if (!p)
      return false;
    run(pass, *p, operands);
    return true;
  } catch (const dnnl::error &) {
    return false;
  }
}

#else

bool convolveOnOneDnn(ConvPass, const ConvShape &, const ConvOperands &, bool) {
  return false;
}

#endif

} // namespace runtime
} // namespace mbt
