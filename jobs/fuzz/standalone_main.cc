// A driver for a libFuzzer target (jobs/fuzz/job_parse_fuzzer.cc, http/fuzz/http_parse_fuzzer.cc)
// where libFuzzer is not available (GCC builds).
//
//   job_parse_fuzz_replay CORPUS_DIR [MUTATIONS]     (and http_parse_fuzz_replay)
//
// Runs every file in CORPUS_DIR through LLVMFuzzerTestOneInput, then MUTATIONS (default 20000)
// inputs made by mutating those files with a fixed-seed generator, so a failure reproduces
// exactly. Not a fuzzer (there is no coverage feedback); a regression test that the seeds and
// their near neighbours still pass every property the target checks.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

// With DLJOB_FUZZ_LAST=path set, each input is written there before it runs, so the one that
// hangs or crashes the driver can be recovered.
void Run(const std::string& input) {
  if (const char* last = std::getenv("DLJOB_FUZZ_LAST")) {
    std::ofstream(last, std::ios::binary | std::ios::trunc) << input;
  }
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(input.data()), input.size());
}

std::vector<std::string> ReadSeeds(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());  // directory order is not stable across machines
  std::vector<std::string> seeds;
  for (const auto& path : paths) {
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    seeds.push_back(text.str());
  }
  return seeds;
}

// One random edit: flip a byte, insert or delete a run, duplicate a slice, or splice in a
// fragment that YAML and JSON parsers find interesting.
std::string Mutate(std::string s, const std::vector<std::string>& seeds, std::mt19937_64& rng) {
  static const char* kTokens[] = {":",  "- ",  "\n", "{",      "}",   "[",    "]",       "&a ",
                                  "*a", "\"",  "'",  "null",   "~",   "0x1f", "1e999",   ".inf",
                                  "#",  "---", "\t", "gpus: ", "2.5", "-1",   "\\u0000", "? "};
  auto pick = [&](size_t n) { return n == 0 ? size_t{0} : static_cast<size_t>(rng() % n); };
  size_t pos = pick(s.size() + 1);
  switch (rng() % 6) {
    case 0:
      if (!s.empty()) s[pick(s.size())] = static_cast<char>(rng());
      break;
    case 1:
      s.insert(pos, kTokens[pick(std::size(kTokens))]);
      break;
    case 2:
      s.erase(pos, pick(16));
      break;
    case 3:
      s.insert(pos, s.substr(pick(s.size()), pick(32)));
      break;
    case 4: {
      const std::string& other = seeds[pick(seeds.size())];
      s.insert(pos, other.substr(pick(other.size()), pick(64)));
      break;
    }
    default:
      s.resize(pos);
      break;
  }
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [MUTATIONS]\n", argv[0]);
    return 2;
  }
  long mutations = argc > 2 ? std::strtol(argv[2], nullptr, 10) : 20000;
  std::vector<std::string> seeds = ReadSeeds(argv[1]);
  if (seeds.empty()) {
    std::fprintf(stderr, "no seed files in %s\n", argv[1]);
    return 2;
  }
  for (const std::string& seed : seeds) Run(seed);
  std::mt19937_64 rng(20261122);
  for (long i = 0; i < mutations; ++i) {
    std::string input = seeds[rng() % seeds.size()];
    int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) input = Mutate(std::move(input), seeds, rng);
    Run(input);
  }
  std::printf("replayed %zu seeds and %ld mutations\n", seeds.size(), mutations);
  return 0;
}
