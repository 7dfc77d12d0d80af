// The machine as `strata-cli inspect` and the memory plan see it: RAM, free disk, CPU features.
#include <sys/statvfs.h>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>

#include "kernels/int_dot.h"
#include "strata/inspect.h"

namespace strata {
namespace {

// A "Key:   123 kB" line of /proc/meminfo, in bytes; 0 if absent.
uint64_t meminfoBytes(const std::string& text, const std::string& key) {
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    uint64_t kb = 0;
    fields >> kb;
    return kb * 1024;
  }
  return 0;
}

std::string fileText(const char* path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace

MachineSummary inspectMachine(const std::filesystem::path& diskPath) {
  MachineSummary m;
  const std::string meminfo = fileText("/proc/meminfo");
  m.ramTotal = meminfoBytes(meminfo, "MemTotal");
  m.ramAvailable = meminfoBytes(meminfo, "MemAvailable");
  struct statvfs fs {};
  if (::statvfs(diskPath.c_str(), &fs) == 0)
    m.diskFree = static_cast<uint64_t>(fs.f_bavail) * static_cast<uint64_t>(fs.f_frsize);
  m.cpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
  std::istringstream cpuinfo(fileText("/proc/cpuinfo"));
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      m.cpuModel = line.substr(line.find(':') + 2);
      break;
    }
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  m.avx2 = __builtin_cpu_supports("avx2");
  m.avx512f = __builtin_cpu_supports("avx512f");
  m.avx512vnni = __builtin_cpu_supports("avx512vnni");
  m.avxvnni = __builtin_cpu_supports("avxvnni");
#endif
  m.integerKernels = std::string(kernels::pathName(kernels::bestIntPath()));
  return m;
}

}  // namespace strata
