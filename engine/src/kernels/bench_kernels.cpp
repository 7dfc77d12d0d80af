// `strata-cli bench kernels`: memory read bandwidth and each kernel's effective weight
// bandwidth on GLM-5's decode shapes, and GFLOP/s on prefill shapes. Weights are spread over
// enough distinct matrices that every run streams them from memory, not from cache.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "kernels/int_dot.h"
#include "kernels/memory_bandwidth.h"
#include "kernels/matmul.h"
#include "kernels/quant_matmul.h"
#include "quant/int_quant.h"
#include "strata/bench.h"

namespace strata {
namespace {

std::vector<float> randomMatrix(int64_t count, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (float& x : v) x = normal(rng);
  return v;
}

}  // namespace

KernelBenchReport benchKernels(const KernelBenchOptions& options,
                               const std::function<void(const KernelBenchResult&)>& progress) {
  KernelBenchReport report;
  const int repeats = options.quick ? 3 : options.repeats;
  const double workingSet = (options.quick ? 32.0 : options.workingSetMiB) * 1048576.0;
  report.threadsAll = omp_get_max_threads();
  const kernels::IntKernels best = kernels::intKernels(kernels::bestIntPath());
  report.bestPath = std::string(kernels::pathName(best.path));
  // Every integer path this CPU has, fastest-ranked first, and the scalar reference last.
  std::vector<kernels::IntKernels> paths{best};
  for (kernels::IntKernelPath p : kernels::kAllIntPaths)
    if (p != best.path && p != kernels::IntKernelPath::Scalar && kernels::pathAvailable(p))
      paths.push_back(kernels::intKernels(p));
  if (best.path != kernels::IntKernelPath::Scalar)
    paths.push_back(kernels::intKernels(kernels::IntKernelPath::Scalar));

  // The limit: memory read bandwidth, measured again just before each group of kernel runs
  // with the same thread count (this project's VM's bandwidth drifts by 10-40 % within a
  // minute), so each ratio compares numbers measured seconds apart. The report keeps the
  // highest measurement.
  const std::vector<uint64_t> readBuffer(static_cast<size_t>(workingSet / sizeof(uint64_t)), 1);
  double limitGbps = 0;
  auto measureLimit = [&](int threads) {
    limitGbps = memoryReadGbps(readBuffer, threads, repeats);
    double& best = threads == 1 ? report.memReadGbps1 : report.memReadGbpsAll;
    best = std::max(best, limitGbps);
  };

  struct Shape { int rows, cols; };
  const std::vector<Shape> decodeShapes = options.quick ? std::vector<Shape>{{512, 1024}}
                                                        : std::vector<Shape>{{2048, 6144}, {6144, 2048}};
  struct Variant { const char* name; quant::IntFormat format; int group; };
  const Variant variants[] = {{"int4_g128", quant::IntFormat::Int4, 128},
                              {"int4_g32", quant::IntFormat::Int4, 32},
                              {"int8_row", quant::IntFormat::Int8, 0}};

  auto record = [&](KernelBenchResult r, int64_t weightBytes, int threads) {
    r.threads = threads;
    r.gbps = static_cast<double>(weightBytes) / r.seconds / 1e9;
    r.gflops = 2.0 * r.rows * r.cols * r.batch / r.seconds / 1e9;
    r.ratio = r.gbps / limitGbps;
    report.results.push_back(r);
    if (progress) progress(r);
  };

  for (const Shape& shape : decodeShapes) {
    const auto source = randomMatrix(int64_t{shape.rows} * shape.cols, 7);
    const auto x = randomMatrix(int64_t{shape.cols} * 64, 8);
    std::vector<float> y(static_cast<size_t>(shape.rows) * 64);
    for (const Variant& v : variants) {
      // Enough copies that one pass over them overflows the caches.
      const quant::QuantizedMatrix first =
          quant::quantizeMatrix(source.data(), shape.rows, shape.cols, v.format, v.group);
      const int copies = std::max<int>(1, static_cast<int>(workingSet / static_cast<double>(first.bytes())));
      std::vector<quant::QuantizedMatrix> mats(static_cast<size_t>(copies), first);
      const int64_t bytes = first.bytes() * copies;
      for (int threads : {1, report.threadsAll}) {
        omp_set_num_threads(threads);
        measureLimit(threads);
        for (const kernels::IntKernels& k : paths) {
          KernelBenchResult r{std::string(v.name) + "_matvec", std::string(kernels::pathName(k.path)),
                              0, shape.rows, shape.cols, 1};
          r.seconds = medianSeconds(repeats, [&] {
            for (const auto& m : mats) kernels::matmulInteger(m, x.data(), 1, y.data(), k);
          }) / copies;
          record(r, bytes / copies, threads);
        }
        KernelBenchResult r{std::string(v.name) + "_matvec", "dequant", 0, shape.rows, shape.cols, 1};
        r.seconds = medianSeconds(repeats, [&] {
          for (const auto& m : mats) kernels::matmulDequant(m, x.data(), 1, y.data());
        }) / copies;
        record(r, bytes / copies, threads);
      }
      // Prefill shape: 64 activation rows reuse each weight row from cache. Where the best
      // path has tile kernels, also its row kernels alone ("-rows"), the baseline they beat.
      omp_set_num_threads(report.threadsAll);
      measureLimit(report.threadsAll);
      kernels::IntKernels rowsOnly = best;
      rowsOnly.int8Tile = rowsOnly.int4Tile = nullptr;
      const bool tiled =
          (v.format == quant::IntFormat::Int8 ? best.int8Tile : best.int4Tile) != nullptr;
      std::vector<const kernels::IntKernels*> measured{&best};
      if (tiled) measured.push_back(&rowsOnly);
      for (const kernels::IntKernels* k : measured) {
        const std::string path =
            std::string(kernels::pathName(best.path)) + (k == &rowsOnly ? "-rows" : "");
        KernelBenchResult r{std::string(v.name) + "_matmul64", path, 0, shape.rows, shape.cols, 64};
        r.seconds = medianSeconds(
            repeats, [&] { kernels::matmulInteger(first, x.data(), 64, y.data(), *k); });
        record(r, first.bytes(), report.threadsAll);
      }
    }
    // f32 reference point, and BF16 (a Hugging Face checkpoint's weights kept as stored:
    // --precision native), widened in registers.
    struct Dense { const char* name; kernels::Matrix matrix; };
    const Dense dense[] = {{"f32", kernels::Matrix::fromF32(shape.rows, shape.cols, source)},
                           {"bf16", kernels::Matrix::toBf16(shape.rows, shape.cols, source)}};
    for (const Dense& d : dense) {
      const int copies = std::max<int>(1, static_cast<int>(workingSet / static_cast<double>(d.matrix.bytes())));
      const std::vector<kernels::Matrix> mats(static_cast<size_t>(copies), d.matrix);
      // One input (a decode step), and three (a speculative verify pass of two drafts, or
      // three server streams in one step): the weights are read once either way.
      for (int batch : {1, 3})
        for (int threads : {1, report.threadsAll}) {
          omp_set_num_threads(threads);
          measureLimit(threads);
          const std::string name = std::string(d.name) + (batch == 1 ? "_matvec" : "_matmul3");
          KernelBenchResult r{name, d.name, 0, shape.rows, shape.cols, batch};
          r.seconds = medianSeconds(repeats, [&] {
            for (const auto& m : mats) kernels::matmul(m, x.data(), batch, y.data());
          }) / copies;
          record(r, d.matrix.bytes(), threads);
        }
    }
  }
  // Absorbed attention's row kernels at GLM-5's shapes (latent 512) on one thread: four heads'
  // dots with each of 2,048 cached latents (DSA's index_topk), those latents' weighted sum
  // into four heads' outputs, and one head's int8 kv_b products. These stay in the caches, so
  // they measure arithmetic (GFLOP/s); "GB/s" is latent bytes per second. (On AVX2 the first two
  // spilled every sum to the stack until 2026-12-06, at a fifth of their speed now.) Last, a
  // whole layer's kv_b from memory.
  {
    constexpr int kKeys = 2048, kLatent = 512, kHeads = 4;
    const auto latents = randomMatrix(int64_t{kKeys} * kLatent, 9);
    const auto queries = randomMatrix(int64_t{kHeads} * kLatent, 10);
    std::vector<const float*> rows(kKeys);
    for (int t = 0; t < kKeys; ++t) rows[static_cast<size_t>(t)] = latents.data() + int64_t{t} * kLatent;
    std::vector<float> logits(static_cast<size_t>(kHeads) * kKeys), out(static_cast<size_t>(kHeads) * kLatent);
    const int64_t bytes = int64_t{kKeys} * kLatent * static_cast<int64_t>(sizeof(float));
    omp_set_num_threads(1);
    measureLimit(1);
    KernelBenchResult dots{"attention_key_dots", "f32", 0, kKeys, kLatent, kHeads};
    dots.seconds = medianSeconds(repeats, [&] {
      for (int t = 0; t < kKeys; ++t)
        kernels::rowTimesInputs(rows[static_cast<size_t>(t)], queries.data(), kHeads, kLatent, kKeys,
                                logits.data() + t);
    });
    record(dots, bytes, 1);
    std::fill(logits.begin(), logits.end(), 1.0f / kKeys);  // softmax-sized weights
    KernelBenchResult sum{"attention_weighted_sum", "f32", 0, kKeys, kLatent, kHeads};
    sum.seconds = medianSeconds(repeats, [&] {
      kernels::addScaledRows(rows.data(), kKeys, logits.data(), kKeys, kHeads, kLatent, out.data(),
                             kLatent);
    });
    record(sum, bytes, 1);
    // One head's kv_b rows read as an int8 kv_b is stored (widened in registers): W_UK^T q
    // (192 rows added, scaled by q_nope) and W_UV o (256 rows times the latent output).
    constexpr int kNope = 192, kV = 256;
    const auto kvBValues = randomMatrix(int64_t{kNope + kV} * kLatent, 13);
    const quant::QuantizedMatrix kvB =
        quant::quantizeMatrix(kvBValues.data(), kNope + kV, kLatent, quant::IntFormat::Int8, 0);
    KernelBenchResult query{"kv_b_query_int8", "int8", 0, kNope, kLatent, 1};
    query.seconds = medianSeconds(repeats, [&] {
      std::fill(out.begin(), out.begin() + kLatent, 0.0f);
      kernels::int8AddScaledRows(kvB, 0, kNope, queries.data(), 0, 1, out.data(), kLatent);
    });
    record(query, int64_t{kNope} * kLatent, 1);
    KernelBenchResult output{"kv_b_output_int8", "int8", 0, kV, kLatent, 1};
    output.seconds = medianSeconds(repeats, [&] {
      kernels::int8RowsTimesInputs(kvB, kNope, kV, queries.data(), 1, kV, logits.data());
    });
    record(output, int64_t{kV} * kLatent, 1);
    // A whole layer's kv_b (64 heads) from memory, both products of every head, as the absorbed
    // attention reads it in a decode step: "GB/s" is kv_b bytes per second, and the ratio is to
    // one thread's read bandwidth.
    constexpr int kHeadsPerLayer = 64;
    const auto layerValues = randomMatrix(int64_t{kHeadsPerLayer} * (kNope + kV) * kLatent, 14);
    const quant::QuantizedMatrix layerKvB = quant::quantizeMatrix(
        layerValues.data(), kHeadsPerLayer * (kNope + kV), kLatent, quant::IntFormat::Int8, 0);
    const int copies =
        std::max<int>(1, static_cast<int>(workingSet / static_cast<double>(layerKvB.bytes())));
    const std::vector<quant::QuantizedMatrix> layers(static_cast<size_t>(copies), layerKvB);
    KernelBenchResult layer{"kv_b_layer_int8", "int8", 0, kHeadsPerLayer * (kNope + kV),
                            kLatent,           1};
    layer.seconds = medianSeconds(repeats,
                                  [&] {
                                    for (const quant::QuantizedMatrix& m : layers)
                                      for (int h = 0; h < kHeadsPerLayer; ++h) {
                                        const int64_t first = int64_t{h} * (kNope + kV);
                                        std::fill(out.begin(), out.begin() + kLatent, 0.0f);
                                        kernels::int8AddScaledRows(m, first, kNope, queries.data(),
                                                                   0, 1, out.data(), kLatent);
                                        kernels::int8RowsTimesInputs(
                                            m, first + kNope, kV, out.data(), 1, kV, logits.data());
                                      }
                                  }) /
                    copies;
    record(layer, layerKvB.codeBytes(), 1);
  }
  // The f32 kernel on a small model's shapes (the bundled tiny model's 256-column projections
  // and output head, and an expert's 48-column down projection) on one thread, from the
  // caches: with rows this short, each dot's last sums cost as much as its multiplies did
  // until 2026-12-06. One input (a decode step) and four (a verify pass of three drafts).
  // GFLOP/s; each timed run repeats the product ~2M multiply-adds' worth. In f32 and in bf16
  // (the tiny model's weights as shipped, which --precision native keeps).
  {
    struct Small {
      int rows, cols;
    };
    omp_set_num_threads(1);
    measureLimit(1);
    for (const bool bf16 : {false, true})
      for (const Small s : {Small{256, 256}, Small{3072, 256}, Small{256, 48}}) {
        const auto values = randomMatrix(int64_t{s.rows} * s.cols, 11);
        const kernels::Matrix m = bf16 ? kernels::Matrix::toBf16(s.rows, s.cols, values)
                                       : kernels::Matrix::fromF32(s.rows, s.cols, values);
        const auto x = randomMatrix(int64_t{4} * s.cols, 12);
        std::vector<float> y(static_cast<size_t>(4) * s.rows);
        const int calls = std::max(1, (1 << 21) / (s.rows * s.cols));
        for (int batch : {1, 4}) {
          const char* name = bf16 ? "bf16_small_rows" : "f32_small_rows";
          KernelBenchResult r{name, bf16 ? "bf16" : "f32", 0, s.rows, s.cols, batch};
          r.seconds = medianSeconds(repeats,
                                    [&] {
                                      for (int c = 0; c < calls; ++c)
                                        kernels::matmul(m, x.data(), batch, y.data());
                                    }) /
                      calls;
          record(r, m.bytes(), 1);
        }
      }
  }
  omp_set_num_threads(report.threadsAll);
  return report;
}

}  // namespace strata
