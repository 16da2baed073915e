#include "jobs/quantity.h"

#include <array>
#include <cctype>
#include <cstdlib>
#include <utility>

namespace dljob {
namespace {

// A unit and the next smaller one with the ratio between them.
struct Unit {
  const char* suffix;
  const char* smaller;
  int64_t ratio;
};

constexpr std::array<Unit, 14> kUnits = {{
    {"Ei", "Pi", 1024},
    {"Pi", "Ti", 1024},
    {"Ti", "Gi", 1024},
    {"Gi", "Mi", 1024},
    {"Mi", "Ki", 1024},
    {"Ki", "", 1024},
    {"E", "P", 1000},
    {"P", "T", 1000},
    {"T", "G", 1000},
    {"G", "M", 1000},
    {"M", "k", 1000},
    {"k", "", 1000},
    {"", "m", 1000},
    {"m", nullptr, 0},
}};

const Unit* FindUnit(const std::string& suffix) {
  for (const Unit& u : kUnits) {
    if (suffix == u.suffix) return &u;
  }
  return nullptr;
}

}  // namespace

Result<std::string> MultiplyQuantity(const std::string& quantity, int64_t factor) {
  auto bad = [&] { return Status::InvalidArgument("not a quantity: \"" + quantity + "\""); };
  if (factor < 0) return Status::InvalidArgument("negative factor");
  size_t i = 0;
  int64_t whole = 0, frac = 0, frac_scale = 1, digits = 0;
  while (i < quantity.size() && std::isdigit(static_cast<unsigned char>(quantity[i]))) {
    if (whole > (INT64_MAX - 9) / 10) return bad();
    whole = whole * 10 + (quantity[i++] - '0');
    ++digits;
  }
  if (i < quantity.size() && quantity[i] == '.') {
    ++i;
    while (i < quantity.size() && std::isdigit(static_cast<unsigned char>(quantity[i]))) {
      if (frac_scale > 1000000000) return bad();
      frac = frac * 10 + (quantity[i++] - '0');
      frac_scale *= 10;
      ++digits;
    }
  }
  if (digits == 0) return bad();
  const Unit* unit = FindUnit(quantity.substr(i));
  if (!unit) return bad();
  // value = (whole * frac_scale + frac) / frac_scale units; multiply, then step down units
  // until the result is whole.
  __int128 numerator = (static_cast<__int128>(whole) * frac_scale + frac) * factor;
  __int128 denominator = frac_scale;
  while (numerator % denominator != 0) {
    if (unit->smaller == nullptr) {
      return Status::InvalidArgument("\"" + quantity + "\" × " + std::to_string(factor) +
                                     " is finer than the smallest unit");
    }
    numerator *= unit->ratio;
    unit = FindUnit(unit->smaller);
  }
  __int128 value = numerator / denominator;
  if (value > INT64_MAX) return Status::InvalidArgument("quantity too large");
  return std::to_string(static_cast<int64_t>(value)) + unit->suffix;
}

}  // namespace dljob
