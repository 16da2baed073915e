#include "tests/operator/operator_process.h"

#include <algorithm>
#include <filesystem>

namespace dljob::testing {
namespace {

bool Names(const std::vector<std::string>& args, const std::string& flag) {
  return std::any_of(args.begin(), args.end(), [&](const std::string& a) {
    return a == flag || a.rfind(flag + "=", 0) == 0;
  });
}

}  // namespace

int ReadPortFile(const std::string& path) {
  std::string text = ReadFile(path);
  if (text.empty() || text.back() != '\n') return -1;
  try {
    return std::stoi(text);
  } catch (const std::exception&) {
    return -1;
  }
}

OperatorProcess::OperatorProcess(const std::vector<std::string>& argv, std::string out_path,
                                 std::string err_path, std::string port_file)
    : process_(argv, {}, out_path, err_path),
      out_path_(std::move(out_path)),
      err_path_(std::move(err_path)),
      port_file_(std::move(port_file)) {}

int OperatorProcess::MetricsPort(int timeout_ms) {
  int port = -1;
  WaitFor([&] { return (port = ReadPortFile(port_file_)) > 0; }, timeout_ms);
  return port;
}

std::string OperatorProcess::Log() const { return ReadFile(err_path_) + ReadFile(out_path_); }

std::unique_ptr<OperatorProcess> StartOperatorAt(const OperatorPlace& place,
                                                 const std::vector<std::string>& args) {
  std::string port_file = place.dir + "/" + place.id + ".port";
  std::string archive = place.dir + "/job-logs";
  std::filesystem::create_directories(archive);
  std::vector<std::string> argv = {BinDir() + "/dljob-operator"};
  argv.insert(argv.end(), args.begin(), args.end());
  auto add = [&](const std::string& flag, const std::string& value) {
    if (!Names(args, flag)) argv.push_back(flag + "=" + value);
  };
  add("--kubeconfig", place.kubeconfig);
  add("--metrics-port", "0");
  add("--port-file", port_file);
  add("--log-archive", archive);
  add("--lease-namespace", place.lease_namespace);
  add("--leader-elect", "false");
  add("--identity", place.id);
  add("--workers", "4");
  return std::make_unique<OperatorProcess>(argv, place.dir + "/" + place.id + ".out",
                                           place.dir + "/" + place.id + ".err", port_file);
}

}  // namespace dljob::testing
