// The saturation rule (saturation.h), table-driven: each curve shape, noise, failures.
#include "cli/advise/saturation.h"

#include <gtest/gtest.h>

namespace dljob::advise {
namespace {

struct Case {
  const char* name;
  std::vector<AxisPoint> points;
  double tolerance;
  double chosen;
  double best;
  CurveShape shape;
};

AxisPoint P(double setting, double value, double noise = 0) {
  return {setting, value, noise, true};
}
AxisPoint Failed(double setting) { return {setting, 0, 0, false}; }

TEST(FindSaturation, Table) {
  const std::vector<Case> cases = {
      {"LinearThenFlat",
       {P(1, 100), P(2, 200), P(4, 400), P(8, 410), P(16, 405)},
       0.05,
       4,
       8,
       CurveShape::kSaturates},
      // A 3%-noisy plateau whose highest point is a spike at 16: the knee stays at 4.
      {"NoisyPlateau",
       {P(1, 100), P(2, 190), P(4, 260), P(8, 255), P(16, 268)},
       0.05,
       4,
       16,
       CurveShape::kSaturates},
      {"MonotoneDecrease",
       {P(1, 500), P(2, 450), P(4, 300), P(8, 200)},
       0.05,
       1,
       1,
       CurveShape::kFalls},
      {"SinglePoint", {P(2, 123)}, 0.05, 2, 2, CurveShape::kSingle},
      {"AllEqual", {P(1, 300), P(2, 300), P(4, 300)}, 0.05, 1, 1, CurveShape::kFlat},
      {"StillRising", {P(1, 100), P(2, 200), P(4, 400)}, 0.05, 4, 4, CurveShape::kStillRising},
      {"RisesThenFalls", {P(1, 100), P(2, 190), P(4, 120)}, 0.05, 2, 2, CurveShape::kFalls},
      {"UnsortedInput",
       {P(8, 410), P(1, 100), P(4, 400), P(2, 200)},
       0.05,
       4,
       8,
       CurveShape::kSaturates},
      // Within 5% but not 2%: the tolerance decides.
      {"TightTolerance", {P(1, 100), P(2, 196), P(4, 200)}, 0.01, 4, 4, CurveShape::kStillRising},
      {"LooseTolerance", {P(1, 100), P(2, 196), P(4, 200)}, 0.05, 2, 4, CurveShape::kSaturates},
      // 4% noise widens the band to 8%: 2 (7% below the best) is as good as the best.
      {"NoiseWidensBand",
       {P(1, 100, 0.04), P(2, 186, 0.04), P(4, 200, 0.04)},
       0.05,
       2,
       4,
       CurveShape::kSaturates},
      // Memory caps: the cap that ran out of memory, and any smaller one, are never chosen.
      {"FailedBelowIsSkipped",
       {Failed(100), P(200, 500), P(300, 500), P(400, 505)},
       0.05,
       200,
       400,
       CurveShape::kFlat},
      {"PassBelowAFailureIsNotTrusted",
       {P(100, 500), Failed(200), P(300, 500), P(400, 505)},
       0.05,
       300,
       400,
       CurveShape::kFlat},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    std::optional<Saturation> s = FindSaturation(c.points, c.tolerance);
    ASSERT_TRUE(s.has_value());
    EXPECT_EQ(s->chosen, c.chosen);
    EXPECT_EQ(s->best, c.best);
    EXPECT_EQ(s->shape, c.shape) << ShapeName(s->shape);
  }
}

TEST(FindSaturation, NothingToChoose) {
  EXPECT_FALSE(FindSaturation({}, 0.05).has_value());
  EXPECT_FALSE(FindSaturation({Failed(1), Failed(2)}, 0.05).has_value());
  EXPECT_FALSE(FindSaturation({P(1, 10), Failed(2)}, 0.05).has_value());  // at or below a failure
}

TEST(FindSaturation, BandIsReported) {
  std::optional<Saturation> s = FindSaturation({P(1, 100, 0.03), P(2, 100)}, 0.05);
  ASSERT_TRUE(s.has_value());
  EXPECT_NEAR(s->band, 0.06, 1e-12);
  EXPECT_EQ(s->chosen_value, 100);
  EXPECT_EQ(s->best_value, 100);
}

TEST(ExplainSaturation, SaysWhatHappened) {
  auto fmt = [](double v) { return std::to_string(static_cast<int>(v)); };
  std::optional<Saturation> s = FindSaturation({P(1, 100), P(2, 200), P(4, 400), P(8, 410)}, 0.05);
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(ExplainSaturation(*s, fmt), "saturates: within 5% of the best (8) from 4");
  s = FindSaturation({P(1, 100), P(2, 200)}, 0.05);
  EXPECT_EQ(ExplainSaturation(*s, fmt),
            "still rising at the largest setting tried (2); try larger ones");
  s = FindSaturation({P(1, 100), P(2, 100)}, 0.05);
  EXPECT_EQ(ExplainSaturation(*s, fmt),
            "flat: every setting within 5% of the best; the least (1) is enough");
}

}  // namespace
}  // namespace dljob::advise
