// bench kernels: kernel speed as a fraction of the memory bandwidth measured in the same run.
#include <omp.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "commands.h"
#include "strata/bench.h"

namespace strata::cli {
namespace {

nlohmann::json toJson(const KernelBenchResult& r) {
  return {{"name", r.name},       {"path", r.path},       {"threads", r.threads},
          {"rows", r.rows},       {"cols", r.cols},       {"batch", r.batch},
          {"seconds", r.seconds}, {"weight_gbps", r.gbps}, {"gflops", r.gflops},
          {"ratio_to_mem_read", r.ratio}};
}

// Mean ratio of a kernel's best-path, all-thread matvec over the decode shapes.
double summaryRatio(const KernelBenchReport& report, const std::string& name) {
  double sum = 0;
  int count = 0;
  for (const auto& r : report.results)
    if (r.name == name && r.path == report.bestPath && r.threads == report.threadsAll) {
      sum += r.ratio;
      ++count;
    }
  return count ? sum / count : 0.0;
}

}  // namespace

int runBenchKernels(const Args& args) {
  args.allowOnly({"json", "quick", "repeats", "threads"});
  KernelBenchOptions options;
  options.quick = args.has("quick");
  if (args.has("repeats")) options.repeats = parseInt(args.require("repeats"), "--repeats");
  if (options.repeats < 1) throw UsageError("--repeats must be at least 1");
  if (args.has("threads")) {
    const int threads = parseInt(args.require("threads"), "--threads");
    if (threads < 1) throw UsageError("--threads must be at least 1");
    omp_set_num_threads(threads);
  }
  const bool json = args.has("json");
  if (!json)
    std::printf("%-22s %-11s %3s %11s %5s %9s %8s %8s\n", "kernel", "path", "thr", "shape",
                "batch", "GB/s", "GFLOP/s", "ratio");
  const KernelBenchReport report = benchKernels(options, [json](const KernelBenchResult& r) {
    if (json) {
      std::puts(toJson(r).dump().c_str());
    } else {
      const std::string shape = std::to_string(r.rows) + "x" + std::to_string(r.cols);
      std::printf("%-22s %-11s %3d %11s %5d %9.2f %8.2f %8.2f\n", r.name.c_str(), r.path.c_str(),
                  r.threads, shape.c_str(), r.batch, r.gbps, r.gflops, r.ratio);
    }
    std::fflush(stdout);
  });
  const nlohmann::json summary = {{"summary", true},
                                  {"mem_read_gbps", report.memReadGbpsAll},
                                  {"mem_read_gbps_1thread", report.memReadGbps1},
                                  {"threads", report.threadsAll},
                                  {"best_path", report.bestPath},
                                  {"int4_matvec_ratio", summaryRatio(report, "int4_g128_matvec")},
                                  {"int8_matvec_ratio", summaryRatio(report, "int8_row_matvec")}};
  if (json)
    std::puts(summary.dump().c_str());
  else
    std::printf("memory read: %.2f GB/s (%d threads), %.2f GB/s (1 thread); best path %s; "
                "int4 matvec %.0f%%, int8 matvec %.0f%% of memory read bandwidth\n",
                report.memReadGbpsAll, report.threadsAll, report.memReadGbps1,
                report.bestPath.c_str(), 100 * summary["int4_matvec_ratio"].get<double>(),
                100 * summary["int8_matvec_ratio"].get<double>());
  return 0;
}

}  // namespace strata::cli
