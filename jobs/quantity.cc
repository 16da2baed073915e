#include "jobs/quantity.h"

#include <array>
#include <cctype>
#include <cstdlib>
#include <optional>
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

// "1.5Gi" as 15 / 10 of unit Gi. Digits, an optional fraction (at most 10 digits), a suffix.
struct Parsed {
  int64_t whole = 0, frac = 0, frac_scale = 1;
  const Unit* unit = nullptr;
};

std::optional<Parsed> Parse(const std::string& quantity) {
  Parsed p;
  size_t i = 0;
  int64_t digits = 0;
  while (i < quantity.size() && std::isdigit(static_cast<unsigned char>(quantity[i]))) {
    if (p.whole > (INT64_MAX - 9) / 10) return std::nullopt;
    p.whole = p.whole * 10 + (quantity[i++] - '0');
    ++digits;
  }
  if (i < quantity.size() && quantity[i] == '.') {
    ++i;
    while (i < quantity.size() && std::isdigit(static_cast<unsigned char>(quantity[i]))) {
      if (p.frac_scale > 1000000000) return std::nullopt;
      p.frac = p.frac * 10 + (quantity[i++] - '0');
      p.frac_scale *= 10;
      ++digits;
    }
  }
  if (digits == 0) return std::nullopt;
  p.unit = FindUnit(quantity.substr(i));
  if (!p.unit) return std::nullopt;
  return p;
}

// Thousandths of the base unit in one of `unit`: the ratios down to "m".
__int128 MilliPerUnit(const Unit* unit) {
  __int128 milli = 1;
  for (const Unit* u = unit; u->smaller != nullptr; u = FindUnit(u->smaller)) milli *= u->ratio;
  return milli;
}

}  // namespace

Result<int64_t> QuantityMilli(const std::string& quantity) {
  std::optional<Parsed> p = Parse(quantity);
  if (!p) return Status::InvalidArgument("not a quantity: \"" + quantity + "\"");
  // value × milli-per-unit / frac_scale, rounded up; checked before multiplying (Ei × 10^10
  // digits would overflow even 128 bits).
  const __int128 numerator = static_cast<__int128>(p->whole) * p->frac_scale + p->frac;
  const __int128 per_unit = MilliPerUnit(p->unit);
  if (numerator > static_cast<__int128>(INT64_MAX) * p->frac_scale / per_unit) {
    return Status::InvalidArgument("quantity too large: \"" + quantity + "\"");
  }
  return static_cast<int64_t>((numerator * per_unit + p->frac_scale - 1) / p->frac_scale);
}

Result<std::string> MultiplyQuantity(const std::string& quantity, int64_t factor) {
  auto bad = [&] { return Status::InvalidArgument("not a quantity: \"" + quantity + "\""); };
  if (factor < 0) return Status::InvalidArgument("negative factor");
  std::optional<Parsed> p = Parse(quantity);
  if (!p) return bad();
  const int64_t whole = p->whole, frac = p->frac, frac_scale = p->frac_scale;
  const Unit* unit = p->unit;
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
