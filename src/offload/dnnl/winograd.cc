// Winograd F(m x m, 3 x 3) convolution (winograd.h). Layouts, with A = m + 2 and T tiles:
//   V [T][A*A][c]  the transformed input tiles, tile-major so that each tile is written (and
//                  its output read back) as one contiguous block: the hardware prefetcher
//                  follows one stream instead of A*A of them
//   U [A*A][c][k]  the transformed weights, reordered once into what oneDNN's matmul prefers
//   P [T][A*A][k]  the products: matmul over the batch of A*A positions, V and P described to
//                  it by strides
// The transforms are loops over 16 channels at a time, compiled three times (AVX-512, AVX2 + FMA
// and the baseline) and picked by the CPU at run time; OpenMP splits the tiles over the threads.
#include "winograd.h"

#include <fmt/format.h>
#include <omp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tirtune::offload {
namespace {

using dnnl::memory;

constexpr int kBlock = 16;  // channels per step of a transform

template <int M>
struct Matrices;
template <>
struct Matrices<2> {
  static constexpr int A = 4;
  static constexpr float BT[4][4] = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  static constexpr float G[4][3] = {{1, 0, 0}, {.5f, .5f, .5f}, {.5f, -.5f, .5f}, {0, 0, 1}};
  static constexpr float AT[2][4] = {{1, 1, 1, 0}, {0, 1, -1, -1}};
};
template <>
struct Matrices<4> {
  static constexpr int A = 6;
  static constexpr float BT[6][6] = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0},
                                     {0, 4, -4, -1, 1, 0}, {0, -2, -1, 2, 1, 0},
                                     {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  static constexpr float G[6][3] = {{1.f / 4, 0, 0},
                                    {-1.f / 6, -1.f / 6, -1.f / 6},
                                    {-1.f / 6, 1.f / 6, -1.f / 6},
                                    {1.f / 24, 1.f / 12, 1.f / 6},
                                    {1.f / 24, -1.f / 12, 1.f / 6},
                                    {0, 0, 1}};
  static constexpr float AT[4][6] = {
      {1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
};

// What the transforms of one call read and write.
struct Work {
  const WinogradConvSpec* spec;
  int64_t tiles_h, tiles_w;
  const float* x;
  const float* addend;
  const float* bias;  // k floats, zeros without a bias
  const std::vector<WinogradPostOp>* post;
  float* v;
  const float* p;
  float* y;
};

// acc[e] += sum over a of row[a] * src(a)[e] for the kBlock channels e, the matrix row's zeros
// skipped (the callers' loops are unrolled and the matrices constant: no test is left at run time).
template <int N, typename Src>
[[gnu::always_inline]] inline void RowTimes(const float (&row)[N], Src src, float* acc) {
#pragma GCC unroll 8
  for (int a = 0; a < N; ++a) {
    const float f = row[a];
    if (f == 0) continue;
    const float* x = src(a);
    for (int e = 0; e < kBlock; ++e) acc[e] += f * x[e];
  }
}

// V for tiles [begin, end): B^T d B of each input tile, the padding read as zeros.
template <int M>
[[gnu::always_inline]] inline void InputTransform(const Work& w, int64_t begin, int64_t end) {
  constexpr int A = Matrices<M>::A;
  const WinogradConvSpec& s = *w.spec;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t n = t / (w.tiles_h * w.tiles_w), r = t % (w.tiles_h * w.tiles_w);
    const int64_t y0 = (r / w.tiles_w) * M - s.pad, x0 = (r % w.tiles_w) * M - s.pad;
    const float* image = w.x + n * s.h * s.w * s.c;
    float* out = w.v + t * A * A * s.c;
    for (int64_t c0 = 0; c0 < s.c; c0 += kBlock) {
      float d[A][A][kBlock];
      for (int a = 0; a < A; ++a) {
        for (int b = 0; b < A; ++b) {
          const int64_t iy = y0 + a, ix = x0 + b;
          if (iy < 0 || iy >= s.h || ix < 0 || ix >= s.w) {
            for (int e = 0; e < kBlock; ++e) d[a][b][e] = 0;
          } else {
            const float* src = image + (iy * s.w + ix) * s.c + c0;
            for (int e = 0; e < kBlock; ++e) d[a][b][e] = src[e];
          }
        }
      }
      float rows[A][A][kBlock];  // B^T d
#pragma GCC unroll 8
      for (int i = 0; i < A; ++i) {
#pragma GCC unroll 8
        for (int b = 0; b < A; ++b) {
          float acc[kBlock] = {};
          RowTimes(
              Matrices<M>::BT[i], [&](int a) { return d[a][b]; }, acc);
          for (int e = 0; e < kBlock; ++e) rows[i][b][e] = acc[e];
        }
      }
#pragma GCC unroll 8
      for (int i = 0; i < A; ++i) {
#pragma GCC unroll 8
        for (int j = 0; j < A; ++j) {
          float acc[kBlock] = {};
          RowTimes(
              Matrices<M>::BT[j], [&](int b) { return rows[i][b]; }, acc);
          float* dst = out + (i * A + j) * s.c + c0;
          for (int e = 0; e < kBlock; ++e) dst[e] = acc[e];
        }
      }
    }
  }
}

// Y for tiles [begin, end): A^T P A of each tile, plus the bias, then the post-ops; the parts of
// edge tiles past the output are dropped.
template <int M>
[[gnu::always_inline]] inline void OutputTransform(const Work& w, int64_t begin, int64_t end) {
  constexpr int A = Matrices<M>::A;
  const WinogradConvSpec& s = *w.spec;
  for (int64_t t = begin; t < end; ++t) {
    const int64_t n = t / (w.tiles_h * w.tiles_w), r = t % (w.tiles_h * w.tiles_w);
    const int64_t y0 = (r / w.tiles_w) * M, x0 = (r % w.tiles_w) * M;
    const float* in = w.p + t * A * A * s.k;
    for (int64_t k0 = 0; k0 < s.k; k0 += kBlock) {
      float rows[M][A][kBlock];  // A^T P
#pragma GCC unroll 8
      for (int i = 0; i < M; ++i) {
#pragma GCC unroll 8
        for (int j = 0; j < A; ++j) {
          float acc[kBlock] = {};
          RowTimes(
              Matrices<M>::AT[i], [&](int a) { return in + (a * A + j) * s.k + k0; }, acc);
          for (int e = 0; e < kBlock; ++e) rows[i][j][e] = acc[e];
        }
      }
      for (int i = 0; i < M; ++i) {
        for (int j = 0; j < M; ++j) {
          const int64_t oy = y0 + i, ox = x0 + j;
          if (oy >= s.out_h || ox >= s.out_w) continue;
          float acc[kBlock];
          for (int e = 0; e < kBlock; ++e) acc[e] = w.bias[k0 + e];
          RowTimes(
              Matrices<M>::AT[j], [&](int b) { return rows[i][b]; }, acc);
          const int64_t at = ((n * s.out_h + oy) * s.out_w + ox) * s.k + k0;
          for (const WinogradPostOp& op : *w.post) {
            switch (op.kind) {
              case WinogradPostOp::kSum:
                for (int e = 0; e < kBlock; ++e) acc[e] += w.addend[at + e];
                break;
              case WinogradPostOp::kRelu:
                for (int e = 0; e < kBlock; ++e) acc[e] = std::max(acc[e], 0.0f);
                break;
              case WinogradPostOp::kClip:
                for (int e = 0; e < kBlock; ++e) acc[e] = std::min(std::max(acc[e], op.lo), op.hi);
                break;
            }
          }
          for (int e = 0; e < kBlock; ++e) w.y[at + e] = acc[e];
        }
      }
    }
  }
}

using Transform = void (*)(const Work&, int64_t, int64_t);

// The transforms compiled for the baseline ISA, and on x86-64 for AVX2 + FMA and AVX-512 as well.
void InputBase2(const Work& w, int64_t b, int64_t e) { InputTransform<2>(w, b, e); }
void InputBase4(const Work& w, int64_t b, int64_t e) { InputTransform<4>(w, b, e); }
void OutputBase2(const Work& w, int64_t b, int64_t e) { OutputTransform<2>(w, b, e); }
void OutputBase4(const Work& w, int64_t b, int64_t e) { OutputTransform<4>(w, b, e); }
#if defined(__x86_64__)
#define TIRTUNE_AVX2 __attribute__((target("avx2,fma")))
TIRTUNE_AVX2 void InputAvx2_2(const Work& w, int64_t b, int64_t e) { InputTransform<2>(w, b, e); }
TIRTUNE_AVX2 void InputAvx2_4(const Work& w, int64_t b, int64_t e) { InputTransform<4>(w, b, e); }
TIRTUNE_AVX2 void OutputAvx2_2(const Work& w, int64_t b, int64_t e) { OutputTransform<2>(w, b, e); }
TIRTUNE_AVX2 void OutputAvx2_4(const Work& w, int64_t b, int64_t e) { OutputTransform<4>(w, b, e); }
#undef TIRTUNE_AVX2
// 16 channels are one AVX-512 register (two AVX2 ones): half the instructions.
#define TIRTUNE_AVX512 __attribute__((target("avx512f,fma")))
TIRTUNE_AVX512 void InputAvx512_2(const Work& w, int64_t b, int64_t e) {
  InputTransform<2>(w, b, e);
}
TIRTUNE_AVX512 void InputAvx512_4(const Work& w, int64_t b, int64_t e) {
  InputTransform<4>(w, b, e);
}
TIRTUNE_AVX512 void OutputAvx512_2(const Work& w, int64_t b, int64_t e) {
  OutputTransform<2>(w, b, e);
}
TIRTUNE_AVX512 void OutputAvx512_4(const Work& w, int64_t b, int64_t e) {
  OutputTransform<4>(w, b, e);
}
#undef TIRTUNE_AVX512
#endif

// U = G g G^T for every (input, output) channel pair, [A*A][c][k].
template <int M>
std::vector<float> TransformWeights(const float* weight, int64_t c, int64_t k) {
  constexpr int A = Matrices<M>::A;
  std::vector<float> u(static_cast<size_t>(A * A * c * k));
  for (int64_t ci = 0; ci < c; ++ci) {
    for (int64_t ko = 0; ko < k; ++ko) {
      float g[3][3], rows[A][3];
      for (int y = 0; y < 3; ++y) {
        for (int x = 0; x < 3; ++x) g[y][x] = weight[((y * 3 + x) * c + ci) * k + ko];
      }
      for (int i = 0; i < A; ++i) {
        for (int x = 0; x < 3; ++x) {
          double acc = 0;
          for (int y = 0; y < 3; ++y) acc += double{Matrices<M>::G[i][y]} * g[y][x];
          rows[i][x] = static_cast<float>(acc);
        }
      }
      for (int i = 0; i < A; ++i) {
        for (int j = 0; j < A; ++j) {
          double acc = 0;
          for (int x = 0; x < 3; ++x) acc += double{rows[i][x]} * Matrices<M>::G[j][x];
          u[((i * A + j) * c + ci) * k + ko] = static_cast<float>(acc);
        }
      }
    }
  }
  return u;
}

struct AlignedFree {
  void operator()(float* p) const { std::free(p); }
};
using Buffer = std::unique_ptr<float, AlignedFree>;

Buffer Allocate(int64_t floats) {
  const size_t bytes = (static_cast<size_t>(floats) * sizeof(float) + 63) / 64 * 64;
  auto* p = static_cast<float*>(std::aligned_alloc(64, std::max<size_t>(bytes, 64)));
  if (p == nullptr) throw std::bad_alloc();
  return Buffer(p);
}

// At least `floats` floats of scratch for V and P, shared by every WinogradConv run on the
// calling thread: a model's calls run one after another, so its Winograd convolutions reuse one
// buffer that stays in the caches (each of an early ResNet layer's would otherwise keep 3-4 MB of
// its own). It grows to the largest call's need and lives as long as the thread.
float* Scratch(int64_t floats) {
  thread_local Buffer buffer;
  thread_local int64_t size = 0;
  if (floats > size) {
    size = 0;  // (Allocate may throw: the next call allocates again)
    buffer.reset();
    buffer = Allocate(floats);
    size = floats;
  }
  return buffer.get();
}

}  // namespace

std::string WinogradUnsupported(const WinogradConvSpec& s) {
  if (s.m != 2 && s.m != 4) return fmt::format("a tile of {} (2 or 4)", s.m);
  if (s.c % kBlock != 0 || s.k % kBlock != 0) {
    return fmt::format("{} input and {} output channels (multiples of {} only)", s.c, s.k, kBlock);
  }
  if (s.pad < 0 || s.pad > 2 || s.out_h != s.h + 2 * s.pad - 2 || s.out_w != s.w + 2 * s.pad - 2 ||
      s.out_h < 1 || s.out_w < 1) {
    return "an output that is not the 3x3 stride-1 convolution's";
  }
  return "";
}

std::optional<WinogradPlan> PlanWinograd(const body::Plan& plan,
                                         const std::vector<graph::TensorType>& args,
                                         const graph::TensorType& main_type,
                                         const std::string& algorithm, int threads,
                                         std::string* why) {
  auto refuse = [&](std::string text) -> std::optional<WinogradPlan> {
    *why = std::move(text);
    return std::nullopt;
  };
  WinogradPlan out;
  if (algorithm == "winograd4") {
    out.spec.m = 4;
  } else if (algorithm == "winograd2") {
    out.spec.m = 2;
  } else {
    return refuse(fmt::format("no algorithm '{}' (winograd4, winograd2)", algorithm));
  }
  const graph::Call& main = *plan.main;
  if (main.op != "conv2d" || plan.weight < 0 || plan.data_view || plan.weight_view) {
    return refuse("Winograd runs 2-D convolutions only");
  }
  const std::vector<int64_t>& x = args[plan.data].shape;
  const std::vector<int64_t>& w = args[plan.weight].shape;
  const std::vector<int64_t>& y = main_type.shape;
  const DataType f32 = DataType::Float(32);
  if (args[plan.data].dtype != f32 || args[plan.weight].dtype != f32 || x.size() != 4 ||
      w.size() != 4 || y.size() != 4) {
    return refuse("Winograd runs float32 NHWC convolutions only");
  }
  const graph::Attrs attrs = body::AttrsOf(main);
  if (w[0] != 3 || w[1] != 3 || attrs.GetInt("stride") != 1 || attrs.GetInt("dilation") != 1 ||
      attrs.GetInt("groups") != 1) {
    return refuse("Winograd F(m, 3x3) needs a 3x3 kernel, stride 1, dilation 1 and one group");
  }
  out.spec = WinogradConvSpec{.m = out.spec.m,
                              .n = x[0],
                              .h = x[1],
                              .w = x[2],
                              .c = x[3],
                              .k = w[3],
                              .out_h = y[1],
                              .out_w = y[2],
                              .pad = attrs.GetInt("pad"),
                              .threads = threads};
  for (const body::PostOp& p : plan.post) {
    switch (p.kind) {
      case body::PostOp::kSum:
        if (out.addend >= 0) return refuse("Winograd adds one sum only");
        out.addend = p.addend;
        out.post.push_back({WinogradPostOp::kSum});
        break;
      case body::PostOp::kRelu:
        out.post.push_back({WinogradPostOp::kRelu});
        break;
      case body::PostOp::kClip:
        out.post.push_back({WinogradPostOp::kClip, p.alpha, p.beta});
        break;
      default:
        return refuse("Winograd applies a bias, a sum, relu and clip only");
    }
  }
  if (std::string reason = WinogradUnsupported(out.spec); !reason.empty()) {
    return refuse("Winograd does not take " + reason);
  }
  return out;
}

std::vector<std::string> WinogradAlgorithms(const graph::Graph& graph, const graph::Call& call) {
  std::vector<std::string> out;
  if (call.kind != graph::CallKind::kGraph || !call.body) return out;
  try {
    body::Plan plan = body::ReadBody(graph, call, "oneDNN");
    std::vector<graph::TensorType> args;
    for (graph::ValueId a : call.args) args.push_back(graph.value(a).type);
    const graph::TensorType main_type = call.body->value(plan.main->output).type;
    if (std::optional<body::FoldedScaleShift> f =
            body::FoldScaleShift(graph, call, plan, graph.value(call.output).type.shape.back())) {
      plan.post.erase(plan.post.begin(),
                      plan.post.begin() + static_cast<std::ptrdiff_t>(f->post_ops));
    }
    // (the kernel takes a constant weight and bias only)
    auto constant = [&](int arg) {
      return arg < 0 || graph.value(call.args[arg]).kind == graph::ValueKind::kConstant;
    };
    if (!constant(plan.weight) || !constant(plan.bias)) return out;
    for (const char* algorithm : kWinogradAlgorithms) {
      std::string why;
      if (PlanWinograd(plan, args, main_type, algorithm, 1, &why)) out.push_back(algorithm);
    }
  } catch (const LibraryDeclined&) {
  }
  return out;
}

struct WinogradConv::State {
  WinogradConvSpec spec;
  std::vector<WinogradPostOp> post;
  int64_t tiles_h = 0, tiles_w = 0, tiles = 0;
  int positions = 0;  // A * A
  int64_t v_floats = 0, p_floats = 0;  // V and P in Scratch, P 64-byte aligned after V
  Buffer bias;
  dnnl::engine engine{dnnl::engine::kind::cpu, 0};
  dnnl::stream stream{engine};
  dnnl::matmul product;
  memory v_mem, u_mem, p_mem;
  std::string impl;
  Transform input = nullptr, output = nullptr;
};

WinogradConv::WinogradConv(const WinogradConvSpec& spec, const float* weight, const float* bias,
                           std::vector<WinogradPostOp> post)
    : s_(std::make_unique<State>()) {
  if (std::string why = WinogradUnsupported(spec); !why.empty()) throw std::invalid_argument(why);
  State& s = *s_;
  s.spec = spec;
  s.post = std::move(post);
  const int a = spec.m + 2;
  s.positions = a * a;
  s.tiles_h = (spec.out_h + spec.m - 1) / spec.m;
  s.tiles_w = (spec.out_w + spec.m - 1) / spec.m;
  s.tiles = spec.n * s.tiles_h * s.tiles_w;
  s.v_floats = (s.tiles * s.positions * spec.c + 15) / 16 * 16;
  s.p_floats = s.tiles * s.positions * spec.k;
  s.bias = Allocate(spec.k);
  for (int64_t i = 0; i < spec.k; ++i) s.bias.get()[i] = bias != nullptr ? bias[i] : 0.0f;
  s.input = spec.m == 2 ? InputBase2 : InputBase4;
  s.output = spec.m == 2 ? OutputBase2 : OutputBase4;
#if defined(__x86_64__)
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
    s.input = spec.m == 2 ? InputAvx2_2 : InputAvx2_4;
    s.output = spec.m == 2 ? OutputAvx2_2 : OutputAvx2_4;
  }
  if (__builtin_cpu_supports("avx512f")) {
    s.input = spec.m == 2 ? InputAvx512_2 : InputAvx512_4;
    s.output = spec.m == 2 ? OutputAvx512_2 : OutputAvx512_4;
  }
#endif

  const int64_t pos = s.positions;
  memory::desc v_desc({pos, s.tiles, spec.c}, memory::data_type::f32,
                      memory::dims{spec.c, pos * spec.c, 1});
  memory::desc p_desc({pos, s.tiles, spec.k}, memory::data_type::f32,
                      memory::dims{spec.k, pos * spec.k, 1});
  memory::desc u_plain({pos, spec.c, spec.k}, memory::data_type::f32, memory::format_tag::abc);
  memory::desc u_any({pos, spec.c, spec.k}, memory::data_type::f32, memory::format_tag::any);
  dnnl::matmul::primitive_desc pd(dnnl::matmul::desc(v_desc, u_any, p_desc), s.engine);
  s.product = dnnl::matmul(pd);
  s.impl = pd.impl_info_str();
  // oneDNN's reference implementations are correctness fallbacks, far slower than a kernel.
  if (s.impl.rfind("ref", 0) == 0) {
    throw std::invalid_argument("oneDNN has only its reference implementation (" + s.impl +
                                ") for Winograd's product");
  }
  s.v_mem = memory(v_desc, s.engine, DNNL_MEMORY_NONE);  // Run points them at the scratch
  s.p_mem = memory(p_desc, s.engine, DNNL_MEMORY_NONE);
  std::vector<float> u = spec.m == 2 ? TransformWeights<2>(weight, spec.c, spec.k)
                                     : TransformWeights<4>(weight, spec.c, spec.k);
  memory plain(u_plain, s.engine, u.data());
  s.u_mem = memory(pd.weights_desc(), s.engine);
  dnnl::reorder(plain, s.u_mem).execute(s.stream, plain, s.u_mem);
  s.stream.wait();
}

WinogradConv::~WinogradConv() = default;

void WinogradConv::Run(const float* x, const float* addend, float* y) {
  State& s = *s_;
  float* v = Scratch(s.v_floats + s.p_floats);
  float* p = v + s.v_floats;
  s.v_mem.set_data_handle(v);
  s.p_mem.set_data_handle(p);
  Work work{&s.spec, s.tiles_h, s.tiles_w, x, addend, s.bias.get(), &s.post, v, p, y};
  const int threads = std::max(1, s.spec.threads);
  const Transform input = s.input, output = s.output;
  const int64_t tiles = s.tiles;
  auto split = [&](Transform fn) {
#pragma omp parallel num_threads(threads)
    {
      const int64_t parts = omp_get_num_threads(), me = omp_get_thread_num();
      fn(work, tiles * me / parts, tiles * (me + 1) / parts);
    }
  };
  split(input);
  s.product.execute(
      s.stream, {{DNNL_ARG_SRC, s.v_mem}, {DNNL_ARG_WEIGHTS, s.u_mem}, {DNNL_ARG_DST, s.p_mem}});
  s.stream.wait();
  split(output);
}

std::string WinogradConv::Describe() const {
  return fmt::format("Winograd F({0}x{0}, 3x3), oneDNN matmul {1}", s_->spec.m, s_->impl);
}

std::vector<ByteRange> WinogradConv::ConstantMemory() const {
  return {{s_->u_mem.get_data_handle(), s_->u_mem.get_desc().get_size()},
          {s_->bias.get(), static_cast<size_t>(s_->spec.k) * sizeof(float)}};
}

}  // namespace tirtune::offload
