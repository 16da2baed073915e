#include "bench/machine.h"

#include <unistd.h>

#include <fstream>

namespace dljob::bench {

std::string MachineLine(const std::string& build_type) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string model = "unknown CPU";
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) {
      model = line.substr(line.find(':') + 2);
      break;
    }
  }
  std::ifstream loadavg("/proc/loadavg");
  std::string l1 = "?";
  loadavg >> l1;
  return std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) + " CPUs (" + model + "), load average " +
         l1 + " at start, build " + build_type;
}

}  // namespace dljob::bench
